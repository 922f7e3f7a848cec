package delivery

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/heraldhq/herald/schedule"
	"github.com/heraldhq/herald/store"
)

// fairShare is how many of workers one owner's jobs may hold at once: a
// quarter, and at least one. The claims pass over the jobs of an owner at
// their share, so one user's endpoints that never answer hold a few
// workers at most, and the others' jobs go out meanwhile.
func fairShare(workers int) int { return max(1, workers/4) }

// blockedWait is how long the loop waits, unless woken, when jobs are due
// but none could be claimed because their owners are at their share: a
// freed worker or a commit wakes it at once, and this catches a share
// freed on another replica or a job of someone else coming due.
//
// Woken while so blocked, it waits until blockedPace has passed since the
// claim that found nothing: each claim is a write, and a user at their
// share who keeps sending would otherwise cost one with every commit.
const (
	blockedWait = 250 * time.Millisecond
	blockedPace = 50 * time.Millisecond
)

// pool is the dispatch loop shared by the callback queue and the pusher:
// claim as many due jobs as there are free workers, run each on its own
// goroutine, and sleep until the next job is due or a commit on topic (or a
// freed worker) wakes it. On exit it waits for the jobs in flight.
type pool[T any] struct {
	st      *store.Store
	topic   string
	workers int
	now     func() time.Time
	log     *slog.Logger
	claim   func(ctx context.Context, n int) ([]T, error)
	next    func(ctx context.Context) (time.Time, bool, error)
	work    func(ctx context.Context, job T)
	// settle, if set, is how long the loop waits after a wake-up before it
	// looks, so that the commits of a busy moment cost one look instead of
	// one each.
	settle time.Duration
}

func (p *pool[T]) run(ctx context.Context) {
	wake := p.st.Wakeup(p.topic)
	slots := make(chan struct{}, p.workers)
	var wg sync.WaitGroup
	defer wg.Wait()
	timer := time.NewTimer(time.Hour)
	for {
		// One read per turn says whether anything is due and when the next
		// job will be; a claim is a write, so it is only made when needed.
		next, ok, err := p.next(ctx)
		due := err != nil || (ok && !next.After(p.now()))
		blocked, claimedAt := false, time.Now()
		if free := p.workers - len(slots); free > 0 && due {
			jobs, err := p.claim(ctx, free)
			if err != nil && ctx.Err() == nil {
				p.log.Error("claim jobs", "topic", p.topic, "err", err)
			}
			for _, job := range jobs {
				slots <- struct{}{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					// A freed slot may let the loop claim more.
					defer func() { <-slots; p.st.Poke(p.topic) }()
					p.work(ctx, job)
				}()
			}
			if len(jobs) > 0 {
				continue // look again: more may be due, and next has moved
			}
			blocked = err == nil
		}
		// Sleep until the next job is due; a minute at most, as a safety net.
		wait := time.Minute
		switch {
		case err == nil && ok && blocked:
			wait = blockedWait
		case err == nil && ok:
			wait = min(max(next.Sub(p.now()), time.Millisecond), time.Minute)
		}
		woken, live := schedule.Sleep(ctx, timer, wait, wake)
		if !live {
			return
		}
		// Woken by a commit: let the commits of a busy moment gather, and
		// pace the claims that find only owners at their share.
		gather := time.Duration(0)
		if woken {
			gather = p.settle
			if blocked {
				gather = max(gather, blockedPace-time.Since(claimedAt))
			}
		}
		if gather > 0 {
			if _, live := schedule.Sleep(ctx, timer, gather, nil); !live {
				return
			}
		}
	}
}
