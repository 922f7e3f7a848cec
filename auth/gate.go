package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/internal/cores"
)

// ErrBusy is returned when a password computation could not start in time:
// as many as the machine has cores were running, and the queue behind them
// was full or did not move within the wait.
var ErrBusy = errors.New("auth: too many password checks at once")

// Each argon2id computation holds 19 MiB for its whole run, and more of them
// at once than there are cores only queue for the CPU while holding their
// memory: 80 concurrent sign-ins took a server from 40 MiB to over 1 GiB.
// So at most one runs per core, a few callers per core wait for a turn, and
// the rest are refused at once.
const (
	waitingPerSlot = 8
	maxWait        = time.Second
)

// gate bounds the argon2 computations running at once.
type gate struct {
	slots   chan struct{} // one token per computation running
	queue   chan struct{} // one token per caller running or waiting
	maxWait time.Duration

	running atomic.Int64
	peak    atomic.Int64
	refused atomic.Uint64
}

func newGate(slots, waiting int, maxWait time.Duration) *gate {
	return &gate{slots: make(chan struct{}, slots), queue: make(chan struct{}, slots+waiting), maxWait: maxWait}
}

// passwordGate is made on first use: a slot a core (cores.Count).
var passwordGate = sync.OnceValue(func() *gate {
	n := max(1, cores.Count())
	return newGate(n, waitingPerSlot*n, maxWait)
})

// run calls f once a slot is free. It returns ErrBusy when the queue is full
// or the wait runs out, and ctx's error when ctx ends first; f does not run
// then.
func (g *gate) run(ctx context.Context, f func()) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("auth: password check: %w", err)
	}
	select {
	case g.queue <- struct{}{}:
	default:
		g.refused.Add(1)
		return ErrBusy
	}
	defer func() { <-g.queue }()
	select {
	case g.slots <- struct{}{}:
	default:
		t := time.NewTimer(g.maxWait)
		defer t.Stop()
		select {
		case g.slots <- struct{}{}:
		case <-t.C:
			g.refused.Add(1)
			return ErrBusy
		case <-ctx.Done():
			return fmt.Errorf("auth: password check: %w", ctx.Err())
		}
	}
	defer func() { <-g.slots }()
	n := g.running.Add(1)
	defer g.running.Add(-1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			break
		}
	}
	f()
	return nil
}

// GateStats describes the bound on concurrent password computations.
type GateStats struct {
	Slots   int    // computations allowed at once
	Running int    // computations running now
	Peak    int    // most computations that ever ran at once in this process
	Refused uint64 // callers answered ErrBusy
}

// Stats reports the bound on concurrent password computations and how it
// has held; tests use it to check that a flood never exceeds Slots.
func Stats() GateStats {
	g := passwordGate()
	return GateStats{Slots: cap(g.slots), Running: int(g.running.Load()), Peak: int(g.peak.Load()), Refused: g.refused.Load()}
}
