// Package ratelimit holds the per-key token buckets behind Herald's rate
// limits (per user and endpoint, per channel). It knows nothing of HTTP: the
// server turns a Verdict into headers and a 429.
package ratelimit

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter holds one token bucket per key. A bucket refills perMinute tokens
// a minute up to perMinute. Buckets idle long enough to be full again are
// evicted, so memory follows active keys, not all keys ever seen.
type Limiter struct {
	mu      sync.Mutex
	now     func() time.Time
	buckets map[string]*bucket
}

type bucket struct {
	lim       *rate.Limiter
	perMinute int
	last      time.Time
}

// New returns an empty limiter on the clock now.
func New(now func() time.Time) *Limiter {
	return &Limiter{now: now, buckets: map[string]*bucket{}}
}

// Verdict is the outcome of one Take.
type Verdict struct {
	OK         bool
	Limit      int
	Remaining  int
	Reset      time.Time     // when the bucket is full again
	RetryAfter time.Duration // until the next token, when !OK
}

// Take spends one token of key's bucket. A changed perMinute (a plan change)
// applies at once to the existing bucket.
func (l *Limiter) Take(key string, perMinute int) Verdict {
	now := l.now()
	every := rate.Limit(float64(perMinute) / 60)
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(every, perMinute), perMinute: perMinute}
		l.buckets[key] = b
	} else if b.perMinute != perMinute {
		// Carry over what was used, not what is left: after an upgrade from
		// 3 to 10 with 3 used, 7 are left at once (SetBurst alone would leave
		// 0); after a downgrade the used ones count against the new limit.
		used := float64(b.perMinute) - b.lim.TokensAt(now)
		b.lim = rate.NewLimiter(every, perMinute)
		if n := int(math.Ceil(used - 1e-9)); n > 0 {
			b.lim.AllowN(now, min(n, perMinute))
		}
		b.perMinute = perMinute
	}
	b.last = now
	ok := b.lim.AllowN(now, 1)
	return VerdictFor(perMinute, b.lim.TokensAt(now), ok, now)
}

// VerdictFor is the verdict of a bucket of perMinute that holds tokens
// after a Take at now that succeeded (ok) or not: for buckets kept
// elsewhere, such as in a database several servers share.
func VerdictFor(perMinute int, tokens float64, ok bool, now time.Time) Verdict {
	v := Verdict{Limit: perMinute, OK: ok}
	v.Remaining = max(0, int(math.Floor(tokens)))
	perToken := time.Minute / time.Duration(perMinute)
	v.Reset = now.Add(time.Duration((float64(perMinute) - tokens) * float64(perToken)))
	if !ok {
		v.RetryAfter = time.Duration((1 - tokens) * float64(perToken))
	}
	return v
}

// Sweep evicts buckets idle for over a minute: by then they are full, so
// forgetting them changes nothing.
func (l *Limiter) Sweep() {
	cutoff := l.now().Add(-time.Minute - time.Second)
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, b := range l.buckets {
		if b.last.Before(cutoff) {
			delete(l.buckets, k)
		}
	}
}

// Size is the number of live buckets.
func (l *Limiter) Size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}
