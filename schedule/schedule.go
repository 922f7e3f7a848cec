// Package schedule runs Herald's background jobs in one place: jobs that
// run every so often, and loops that sleep until a deadline or a wake-up
// (Sleep, which the delivery workers use too). Run starts them all and
// returns once every one has stopped.
package schedule

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Sleep waits until d has passed, wake fires (a nil wake never does) or ctx
// ends, on timer, which it resets: a loop keeps one timer for all its
// sleeps. It reports whether wake ended the sleep, and whether ctx is still
// live.
func Sleep(ctx context.Context, timer *time.Timer, d time.Duration, wake <-chan struct{}) (woken, live bool) {
	timer.Reset(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false, false
	case <-wake:
		return true, true
	case <-timer.C:
		return false, true
	}
}

// Scheduler is a set of background jobs.
type Scheduler struct {
	log  *slog.Logger
	jobs []func(ctx context.Context)
}

// New returns an empty scheduler that logs to log.
func New(log *slog.Logger) *Scheduler { return &Scheduler{log: log} }

// Every runs fn at once, then every interval until ctx ends.
func (s *Scheduler) Every(name string, interval time.Duration, fn func(ctx context.Context)) {
	s.jobs = append(s.jobs, func(ctx context.Context) {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			fn(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	s.log.Debug("job", "name", name, "every", interval)
}

// Loop runs fn, a loop of its own that returns when ctx ends.
func (s *Scheduler) Loop(name string, fn func(ctx context.Context)) {
	s.jobs = append(s.jobs, fn)
	s.log.Debug("job", "name", name, "loop", true)
}

// AtExit runs fn once ctx has ended, with a fresh context of its own that
// ends after timeout: for work that must not be lost at shutdown, such as
// buffered writes. Run waits for it.
func (s *Scheduler) AtExit(name string, timeout time.Duration, fn func(ctx context.Context)) {
	s.jobs = append(s.jobs, func(ctx context.Context) {
		<-ctx.Done()
		fctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		fn(fctx)
	})
	s.log.Debug("job", "name", name, "at_exit", true)
}

// Run runs every job until ctx ends and waits for all of them.
func (s *Scheduler) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, job := range s.jobs {
		wg.Add(1)
		go func() { defer wg.Done(); job(ctx) }()
	}
	wg.Wait()
	return nil
}
