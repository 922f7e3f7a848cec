// Package cores counts the CPU cores the process may use.
package cores

import "runtime"

// Count is the smaller of the CPU count and GOMAXPROCS: a container's CPU
// quota, which GOMAXPROCS follows, counts, but serve's extra Ps for system
// calls (cli/tune.go) do not. Call it after serve has set GOMAXPROCS, or
// at any time: the extra Ps never raise it.
func Count() int {
	return min(runtime.NumCPU(), runtime.GOMAXPROCS(0))
}
