package main

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// serve's runtime settings: applied when the operator set nothing, left
// alone when they did. Not parallel: they are process-wide.
func TestTuneRuntime(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	gc := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		runtime.GOMAXPROCS(procs)
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	})
	unset := func(string) string { return "" }
	set := func(string) string { return "operator's" }

	runtime.GOMAXPROCS(2)
	tuneProcs(set)
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Errorf("with GOMAXPROCS set, tuneProcs changed it to %d", got)
	}
	tuneProcs(unset)
	if got := runtime.GOMAXPROCS(0); got != 4 {
		t.Errorf("GOMAXPROCS = %d after tuneProcs from 2, want 4", got)
	}

	debug.SetGCPercent(100)
	debug.SetMemoryLimit(1 << 40)
	tuneGC(set)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set, tuneGC changed it to %d", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Errorf("with GOMEMLIMIT set, tuneGC changed it to %d", got)
	}
	tuneGC(unset)
	if got := debug.SetGCPercent(100); got != 400 {
		t.Errorf("GOGC = %d after tuneGC, want 400", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 48<<20 {
		t.Errorf("memory limit = %d after tuneGC, want 48 MiB", got)
	}
}
