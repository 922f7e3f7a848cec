package auth

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestPasswordChecksBounded floods the real password functions and checks
// that no more computations ran at once than there are slots, and that
// every call either ran or was refused with ErrBusy.
func TestPasswordChecksBounded(t *testing.T) {
	st := Stats()
	if st.Slots < 1 || st.Slots > runtime.NumCPU() {
		t.Fatalf("Slots = %d, want 1..%d (the CPU count)", st.Slots, runtime.NumCPU())
	}
	hash, err := HashPassword(context.Background(), "pw")
	if err != nil {
		t.Fatal(err)
	}
	n := 12 * st.Slots
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch i % 3 {
			case 0:
				_, errs[i] = CheckPassword(context.Background(), hash, "wrong")
			case 1:
				errs[i] = CheckNoUser(context.Background(), "wrong")
			default:
				_, errs[i] = HashPassword(context.Background(), "new")
			}
		}()
	}
	wg.Wait()
	ran, busy := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ran++
		case errors.Is(err, ErrBusy):
			busy++
		default:
			t.Errorf("unexpected error %v", err)
		}
	}
	after := Stats()
	if after.Peak > after.Slots {
		t.Errorf("%d password computations ran at once, want at most %d", after.Peak, after.Slots)
	}
	if after.Running != 0 {
		t.Errorf("Running = %d after every call returned", after.Running)
	}
	if got, want := after.Refused-st.Refused, uint64(busy); got != want {
		t.Errorf("Refused grew by %d, want %d (the ErrBusy answers)", got, want)
	}
	if ran == 0 {
		t.Error("no call ran")
	}
	t.Logf("%d calls: %d ran, %d refused, peak %d of %d slots", n, ran, busy, after.Peak, after.Slots)
}

// block fills one slot of g until the returned func is called.
func block(t *testing.T, g *gate) (release func()) {
	t.Helper()
	started, done := make(chan struct{}), make(chan struct{})
	go func() {
		if err := g.run(context.Background(), func() { close(started); <-done }); err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	<-started
	return func() { close(done) }
}

func TestGate(t *testing.T) {
	t.Run("full queue refuses at once", func(t *testing.T) {
		g := newGate(1, 1, time.Minute)
		defer block(t, g)()
		waiting := make(chan error, 1)
		go func() { waiting <- g.run(context.Background(), func() {}) }()
		for len(g.queue) < 2 {
			runtime.Gosched()
		}
		start := time.Now()
		if err := g.run(context.Background(), func() { t.Error("ran past a full queue") }); !errors.Is(err, ErrBusy) {
			t.Fatalf("run with a full queue = %v, want ErrBusy", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("refusal took %s, want at once", d)
		}
		if g.refused.Load() != 1 {
			t.Errorf("refused = %d, want 1", g.refused.Load())
		}
		select {
		case err := <-waiting:
			t.Fatalf("the waiting caller returned %v while the slot was held", err)
		default:
		}
	})
	t.Run("wait runs out", func(t *testing.T) {
		g := newGate(1, 4, 50*time.Millisecond)
		defer block(t, g)()
		start := time.Now()
		if err := g.run(context.Background(), func() { t.Error("ran without a slot") }); !errors.Is(err, ErrBusy) {
			t.Fatalf("run = %v, want ErrBusy", err)
		}
		if d := time.Since(start); d < 50*time.Millisecond {
			t.Errorf("gave up after %s, want the 50ms wait", d)
		}
	})
	t.Run("caller's context ends the wait", func(t *testing.T) {
		g := newGate(1, 4, time.Minute)
		defer block(t, g)()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if err := g.run(ctx, func() { t.Error("ran without a slot") }); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("run = %v, want context.DeadlineExceeded", err)
		}
		if len(g.queue) != 1 {
			t.Errorf("queue holds %d after the caller left, want 1 (the blocker)", len(g.queue))
		}
	})
	t.Run("a freed slot goes to a waiter", func(t *testing.T) {
		g := newGate(1, 4, time.Minute)
		release := block(t, g)
		done := make(chan error, 1)
		go func() { done <- g.run(context.Background(), func() {}) }()
		for len(g.queue) < 2 {
			runtime.Gosched()
		}
		release()
		if err := <-done; err != nil {
			t.Fatalf("waiter: %v", err)
		}
		if g.peak.Load() != 1 {
			t.Errorf("peak = %d, want 1", g.peak.Load())
		}
	})
}

// TestPasswordGateSize: one computation per core runs, and waitingPerSlot
// callers per core may wait behind them; the rest are refused at once.
func TestPasswordGateSize(t *testing.T) {
	g := passwordGate()
	slots := cap(g.slots)
	if want := max(1, min(runtime.NumCPU(), runtime.GOMAXPROCS(0))); slots != want {
		t.Errorf("%d slots, want %d", slots, want)
	}
	if got, want := cap(g.queue), slots*(1+waitingPerSlot); got != want {
		t.Errorf("room for %d callers running or waiting, want %d", got, want)
	}
	if got := Stats().Slots; got != slots {
		t.Errorf("Stats().Slots = %d, want %d", got, slots)
	}
}
