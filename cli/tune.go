package cli

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// memoryFloor is serve's soft memory limit while the live heap is small.
const memoryFloor = 48 << 20

// tuneGC trades a little memory for CPU on the send path. Herald's live
// heap under sends is about 2 MB, so the collector's goal is its floor,
// 4 MB times GOGC/100, and GOGC=100 collects very often. GOGC=250 (a 10 MB
// floor) with a 48 MiB soft limit: against GOGC=400, six alternating rounds
// of bench/compare.sh gave peak RSS 45-48 MB instead of 52-54 MB at the
// same CPU per send (0.87-1.09x, median 1.00x): marking a small heap costs
// about 1% of the CPU, and more of them cost little. An operator's GOGC or
// GOMEMLIMIT wins. It reports whether the limit is serve's own, which
// followHeap then keeps above the live heap.
func tuneGC(getenv func(string) string) (ours bool) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(250)
	}
	if getenv("GOMEMLIMIT") != "" {
		return false
	}
	debug.SetMemoryLimit(memoryFloor)
	return true
}

// memoryLimit is the soft limit for a process whose live heap and goroutine
// stacks take need bytes: the floor, or twice need once that is more. A
// fixed limit below the live heap makes the collector run back to back:
// 5,000 open streams (about 100 MB of heap and stacks) under a 48 MiB limit
// spent over 90% of the process's CPU collecting, at 50 events a second.
// Twice need collects about as often as GOGC=100 would.
func memoryLimit(need uint64) int64 {
	return max(memoryFloor, 2*int64(need))
}

// followHeap sets the soft memory limit from the live heap every interval
// until ctx ends.
func followHeap(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			debug.SetMemoryLimit(memoryLimit(liveMemory()))
		}
	}
}

// liveMemory is the heap the last collection found live, plus the
// goroutines' stacks.
func liveMemory() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(s)
	var n uint64
	for _, v := range s {
		if v.Value.Kind() == metrics.KindUint64 {
			n += v.Value.Uint64()
		}
	}
	return n
}

// tuneProcs gives the Go scheduler two more Ps than it would use. The store's
// writer goroutine spends about half its time in blocking system calls
// (fsync, WAL writes), and a P stays with a goroutine in a system call until
// the runtime's monitor takes it back; on a busy 2-core machine that left
// request goroutines runnable with no P to run on while a core sat idle.
// bench/load.sh at 32 connections: ~16.2k sends/s with 4 Ps against ~15.2k
// with 2 (3 about the same, 6 and 8 less). An operator's GOMAXPROCS wins.
func tuneProcs(getenv func(string) string) {
	if getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 2)
	}
}
