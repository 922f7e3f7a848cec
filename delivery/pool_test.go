package delivery

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
)

// poolProbe runs a pool in lock step with the test: every look at the
// next due time and every claim waits for the test's answer, so the test
// sees each turn of the loop and what it did, in order.
type poolProbe struct {
	t        *testing.T
	st       *store.Store
	now      time.Time
	nexts    chan chan poolNext
	claims   chan poolClaim
	started  chan int
	release  chan struct{}
	finished chan struct{}
	logs     lockedBuffer
}

type poolNext struct {
	at  time.Time
	ok  bool
	err error
}

type poolClaim struct {
	n      int
	answer chan []int
	err    chan error
}

const probeTimeout = 10 * time.Second

func newPoolProbe(t *testing.T, workers int) (*poolProbe, context.CancelFunc) {
	st := qtOpen(t, filepath.Join(t.TempDir(), "herald.db"))
	t.Cleanup(func() { st.Close() })
	p := &poolProbe{t: t, st: st, now: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC),
		nexts: make(chan chan poolNext), claims: make(chan poolClaim), started: make(chan int, 16),
		release: make(chan struct{}), finished: make(chan struct{})}
	loop := &pool[int]{st: st, topic: store.TopicDeliveries, workers: workers, log: slog.New(slog.NewTextHandler(&p.logs, nil)),
		now: func() time.Time { return p.now },
		next: func(ctx context.Context) (time.Time, bool, error) {
			r := make(chan poolNext)
			select {
			case p.nexts <- r:
			case <-ctx.Done():
				return time.Time{}, false, ctx.Err()
			}
			a := <-r
			return a.at, a.ok, a.err
		},
		claim: func(ctx context.Context, n int) ([]int, error) {
			c := poolClaim{n: n, answer: make(chan []int), err: make(chan error, 1)}
			select {
			case p.claims <- c:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			jobs := <-c.answer
			select {
			case err := <-c.err:
				return nil, err
			default:
				return jobs, nil
			}
		},
		work: func(ctx context.Context, job int) {
			p.started <- job
			<-p.release
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { loop.run(ctx); close(p.finished) }()
	return p, cancel
}

// look waits for the loop's next look at the due time, answers it, and
// fails if the loop claims instead.
func (p *poolProbe) look(what string, a poolNext) {
	p.t.Helper()
	select {
	case r := <-p.nexts:
		r <- a
	case c := <-p.claims:
		p.t.Fatalf("%s: the pool claimed %d jobs where it should have looked at the due time", what, c.n)
	case <-time.After(probeTimeout):
		p.t.Fatalf("%s: the pool did not look at the due time within %s", what, probeTimeout)
	}
}

// claim waits for the loop's claim, checks it asks for want jobs, and
// hands it jobs.
func (p *poolProbe) claim(what string, want int, jobs ...int) {
	p.t.Helper()
	select {
	case c := <-p.claims:
		if c.n != want {
			p.t.Errorf("%s: claimed %d jobs, want %d", what, c.n, want)
		}
		c.answer <- jobs
	case <-p.nexts:
		p.t.Fatalf("%s: the pool looked at the due time again where it should have claimed", what)
	case <-time.After(probeTimeout):
		p.t.Fatalf("%s: no claim within %s", what, probeTimeout)
	}
	for range jobs {
		select {
		case <-p.started:
		case <-time.After(probeTimeout):
			p.t.Fatalf("%s: a claimed job did not start within %s", what, probeTimeout)
		}
	}
}

// failClaim waits for the loop's claim and fails it.
func (p *poolProbe) failClaim(what string, err error) {
	p.t.Helper()
	select {
	case c := <-p.claims:
		c.err <- err
		c.answer <- nil
	case <-time.After(probeTimeout):
		p.t.Fatalf("%s: no claim within %s", what, probeTimeout)
	}
}

// TestPoolClaimsOnlyWhatIsDueAndFree walks the dispatch loop through its
// decisions: nothing due, no claim; due, claim as many as there are free
// workers and look again at once; no free worker, no claim; a failed look
// counts as due; a job due soon is looked at again when it is due.
func TestPoolClaimsOnlyWhatIsDueAndFree(t *testing.T) {
	p, cancel := newPoolProbe(t, 2)
	now := p.now

	p.look("start, next job in an hour", poolNext{now.Add(time.Hour), true, nil})
	p.st.Poke(store.TopicDeliveries) // a commit wakes it
	p.look("woken, no job at all", poolNext{})
	p.st.Poke(store.TopicDeliveries)

	p.look("a job due now", poolNext{now, true, nil})
	p.claim("both workers free", 2, 1)
	// One job taken: look again at once, without waiting for a wake-up.
	p.look("after a claim", poolNext{now.Add(-time.Second), true, nil})
	p.claim("one worker free", 1, 2)
	p.look("after the second claim", poolNext{now, true, nil})
	// Both workers busy: no claim, only another look once the wait is over.
	p.look("both workers busy", poolNext{now.Add(20 * time.Millisecond), true, nil})

	// A freed worker wakes the loop; a look that failed counts as due.
	p.release <- struct{}{}
	p.look("a worker freed, the look fails", poolNext{err: errors.New("database is locked")})
	p.claim("after a failed look", 1)
	// An empty claim sends the loop to sleep, not straight to another look.
	select {
	case <-p.nexts:
		t.Fatal("after an empty claim the pool looked again without waiting")
	case <-time.After(50 * time.Millisecond):
	}
	// Nothing claimed, and no due time known: it sleeps until woken (or a
	// minute). Then it sleeps until the next job, 20 ms away on the loop's
	// clock, and looks again then without being woken.
	p.st.Poke(store.TopicDeliveries)
	p.look("next job in 20 ms", poolNext{now.Add(20 * time.Millisecond), true, nil})
	if got := p.logs.String(); got != "" {
		t.Errorf("the pool logged with every claim and look fine:\n%s", got)
	}
	// A claim that fails is logged, and the loop goes on.
	p.look("20 ms later", poolNext{now, true, nil})
	p.failClaim("a claim that fails", errors.New("disk I/O error"))
	p.look("after the failed claim", poolNext{now.Add(time.Hour), true, nil})
	if got := p.logs.String(); !strings.Contains(got, "claim jobs") || !strings.Contains(got, "disk I/O error") {
		t.Errorf("a failed claim was not logged: %q", got)
	}

	// On exit the loop waits for the job still running.
	cancel()
	select {
	case <-p.finished:
		t.Fatal("the pool returned with a job still running")
	case <-time.After(20 * time.Millisecond):
	}
	p.release <- struct{}{}
	select {
	case <-p.finished:
	case <-time.After(probeTimeout):
		t.Fatal("the pool did not return after its last job ended")
	}
}

// TestPoolPacesBlockedClaims: a claim that finds due jobs but takes none
// (their owners are at their share) sends the loop to sleep, not straight
// into another claim: a commit wakes it no sooner than blockedPace after
// that claim, and without one it looks again after blockedWait, for a
// share freed elsewhere.
func TestPoolPacesBlockedClaims(t *testing.T) {
	p, cancel := newPoolProbe(t, 2)
	now := p.now
	expectNoLook := func(what string, d time.Duration) {
		t.Helper()
		select {
		case r := <-p.nexts:
			r <- poolNext{now, true, nil}
			t.Fatalf("%s: the pool looked again within %s", what, d)
		case c := <-p.claims:
			c.answer <- nil
			t.Fatalf("%s: the pool claimed within %s", what, d)
		case <-time.After(d):
		}
	}

	p.look("jobs due", poolNext{now, true, nil})
	start := time.Now()
	p.claim("owners at their share", 2) // takes nothing
	expectNoLook("after a blocked claim", 20*time.Millisecond)
	p.st.Poke(store.TopicDeliveries) // a commit, at once
	p.look("woken", poolNext{now, true, nil})
	if waited := time.Since(start); waited < blockedPace {
		t.Errorf("a commit woke the loop %s after the blocked claim, want %s at least", waited, blockedPace)
	}
	start = time.Now()
	p.claim("still at their share", 2)
	p.look("not woken", poolNext{now, true, nil})
	if waited := time.Since(start); waited < blockedWait-10*time.Millisecond {
		t.Errorf("unwoken, the loop looked again %s after a blocked claim, want about %s", waited, blockedWait)
	}
	p.claim("a share freed elsewhere", 2, 1)
	p.look("after a claim that took a job", poolNext{now.Add(time.Hour), true, nil})
	cancel()
	p.release <- struct{}{}
	<-p.finished
}
