package cli

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
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
	if tuneGC(set) {
		t.Error("with GOMEMLIMIT set, tuneGC says the limit is its own")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set, tuneGC changed it to %d", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Errorf("with GOMEMLIMIT set, tuneGC changed it to %d", got)
	}
	if !tuneGC(unset) {
		t.Error("with GOMEMLIMIT unset, tuneGC says the limit is not its own")
	}
	if got := debug.SetGCPercent(100); got != 250 {
		t.Errorf("GOGC = %d after tuneGC, want 250", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 48<<20 {
		t.Errorf("memory limit = %d after tuneGC, want 48 MiB", got)
	}
}

// The soft memory limit follows the live heap: a limit below it would have
// the collector run back to back (a server with thousands of open streams
// spent most of its CPU collecting under a fixed 48 MiB).
func TestFollowHeapRaisesTheLimit(t *testing.T) {
	limit := debug.SetMemoryLimit(memoryFloor)
	t.Cleanup(func() { debug.SetMemoryLimit(limit) })

	if got := memoryLimit(10 << 20); got != memoryFloor {
		t.Errorf("limit for 10 MiB live = %d, want the floor %d", got, memoryFloor)
	}
	if got := memoryLimit(100 << 20); got != 200<<20 {
		t.Errorf("limit for 100 MiB live = %d, want 200 MiB", got)
	}

	// 96 MiB kept live, twice the floor.
	live := make([][]byte, 96)
	for i := range live {
		live[i] = make([]byte, 1<<20)
		live[i][0] = 1
	}
	runtime.GC()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); followHeap(ctx, time.Millisecond) }()
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) < 192<<20 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if got := debug.SetMemoryLimit(-1); got < 192<<20 {
		t.Errorf("limit = %d MiB with 96 MiB live, want at least 192 MiB", got>>20)
	}
	runtime.KeepAlive(live)
}
