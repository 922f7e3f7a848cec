package server

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiter holds one token bucket per key (user and endpoint, or channel).
// A bucket refills perMinute tokens a minute up to perMinute. Buckets idle
// long enough to be full again are evicted, so memory follows active keys,
// not all keys ever seen.
type limiter struct {
	mu      sync.Mutex
	now     func() time.Time
	buckets map[string]*bucket
}

type bucket struct {
	lim       *rate.Limiter
	perMinute int
	last      time.Time
}

func newLimiter(now func() time.Time) *limiter {
	return &limiter{now: now, buckets: map[string]*bucket{}}
}

// verdict is the outcome of one take.
type verdict struct {
	ok         bool
	limit      int
	remaining  int
	reset      time.Time     // when the bucket is full again
	retryAfter time.Duration // until the next token, when !ok
}

// take spends one token of key's bucket. A changed perMinute (a plan change)
// applies at once to the existing bucket.
func (l *limiter) take(key string, perMinute int) verdict {
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
	v := verdict{limit: perMinute}
	v.ok = b.lim.AllowN(now, 1)
	tokens := b.lim.TokensAt(now)
	v.remaining = max(0, int(math.Floor(tokens)))
	perToken := time.Minute / time.Duration(perMinute)
	v.reset = now.Add(time.Duration((float64(perMinute) - tokens) * float64(perToken)))
	if !v.ok {
		v.retryAfter = time.Duration((1 - tokens) * float64(perToken))
	}
	return v
}

// sweep evicts buckets idle for over a minute: by then they are full, so
// forgetting them changes nothing.
func (l *limiter) sweep() {
	cutoff := l.now().Add(-time.Minute - time.Second)
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, b := range l.buckets {
		if b.last.Before(cutoff) {
			delete(l.buckets, k)
		}
	}
}

// size is the number of live buckets.
func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// rateLimit takes a token for key and sets the X-RateLimit headers; when the
// bucket is empty it returns 429 rate_limited with Retry-After.
func (s *Server) rateLimit(w http.ResponseWriter, key string, perMinute int) error {
	v := s.limits.take(key, perMinute)
	// Canonical keys assigned directly (Set would canonicalise them on
	// every request); on the wire they read X-Ratelimit-*, which header
	// names being case-insensitive makes the same as X-RateLimit-*.
	h := w.Header()
	h["X-Ratelimit-Limit"] = []string{strconv.Itoa(v.limit)}
	h["X-Ratelimit-Remaining"] = []string{strconv.Itoa(v.remaining)}
	h["X-Ratelimit-Reset"] = []string{strconv.FormatInt(v.reset.Unix(), 10)}
	if v.ok {
		return nil
	}
	secs := int(math.Ceil(v.retryAfter.Seconds()))
	h.Set("Retry-After", strconv.Itoa(max(1, secs)))
	return newError(http.StatusTooManyRequests, "rate_limited",
		"rate limit of %d requests per minute reached; retry after %d seconds", v.limit, max(1, secs))
}
