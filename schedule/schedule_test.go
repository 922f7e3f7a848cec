package schedule

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	t.Parallel()
	timer := time.NewTimer(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	if woken, live := Sleep(ctx, timer, time.Millisecond, nil); woken || !live {
		t.Fatalf("deadline: woken %v live %v, want false true", woken, live)
	}
	wake := make(chan struct{}, 1)
	wake <- struct{}{}
	if woken, live := Sleep(ctx, timer, time.Hour, wake); !woken || !live {
		t.Fatalf("wake: woken %v live %v, want true true", woken, live)
	}
	// The timer is reused: a deadline after a wake-up still works.
	if woken, live := Sleep(ctx, timer, time.Millisecond, wake); woken || !live {
		t.Fatalf("deadline after a wake: woken %v live %v", woken, live)
	}
	cancel()
	if _, live := Sleep(ctx, timer, time.Hour, nil); live {
		t.Fatal("a cancelled context left the sleep live")
	}
}

func TestSchedulerRunsAndStops(t *testing.T) {
	t.Parallel()
	s := New(slog.New(slog.DiscardHandler))
	var every, loops, exits atomic.Int32
	s.Every("tick", time.Millisecond, func(context.Context) { every.Add(1) })
	s.Loop("loop", func(ctx context.Context) { loops.Add(1); <-ctx.Done() })
	s.AtExit("flush", time.Second, func(ctx context.Context) {
		if ctx.Err() != nil {
			t.Error("the exit job got an ended context")
		}
		exits.Add(1)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Run(ctx); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for every.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if exits.Load() != 0 {
		t.Fatal("the exit job ran before the end")
	}
	cancel()
	<-done // Run waits for every job, the exit job too
	if every.Load() < 3 || loops.Load() != 1 || exits.Load() != 1 {
		t.Fatalf("every %d, loops %d, exits %d", every.Load(), loops.Load(), exits.Load())
	}
}
