package server

import (
	"context"
	"math"
	"net/http"
	"strconv"

	"github.com/heraldhq/herald/ratelimit"
)

// rateLimit takes a token for key and sets the X-RateLimit headers; when the
// bucket is empty it returns 429 rate_limited with Retry-After.
func (s *Server) rateLimit(w http.ResponseWriter, r *http.Request, key string, perMinute int) error {
	v := s.takeToken(r.Context(), key, perMinute)
	// Canonical keys assigned directly (Set would canonicalise them on
	// every request); on the wire they read X-Ratelimit-*, which header
	// names being case-insensitive makes the same as X-RateLimit-*.
	h := w.Header()
	// The three values share one array: one allocation, not three.
	vals := []string{strconv.Itoa(v.Limit), strconv.Itoa(v.Remaining), strconv.FormatInt(v.Reset.Unix(), 10)}
	h["X-Ratelimit-Limit"] = vals[0:1:1]
	h["X-Ratelimit-Remaining"] = vals[1:2:2]
	h["X-Ratelimit-Reset"] = vals[2:3:3]
	if v.OK {
		return nil
	}
	secs := int(math.Ceil(v.RetryAfter.Seconds()))
	h.Set("Retry-After", strconv.Itoa(max(1, secs)))
	return newError(http.StatusTooManyRequests, "rate_limited",
		"rate limit of %d requests per minute reached; retry after %d seconds", v.Limit, max(1, secs))
}

// SharedLimits are rate-limit buckets that several servers spend from
// together: on PostgreSQL the store's, so that N replicas do not give a
// channel N times its limit.
type SharedLimits interface {
	// TakeRateToken spends one token of key's bucket of perMinute tokens
	// a minute: ok tells whether there was one; tokens is what is left.
	TakeRateToken(ctx context.Context, key string, perMinute int) (tokens float64, ok bool, err error)
	// SweepRateBuckets drops the buckets idle long enough to be full.
	SweepRateBuckets(ctx context.Context) (int64, error)
}

// takeToken takes a token of key's bucket: in the shared buckets when the
// server has them, else in this process's memory. Should the shared
// buckets fail to answer, this process's own bucket decides.
func (s *Server) takeToken(ctx context.Context, key string, perMinute int) ratelimit.Verdict {
	if s.shared == nil {
		return s.limits.Take(key, perMinute)
	}
	tokens, ok, err := s.shared.TakeRateToken(ctx, key, perMinute)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("shared rate limit unavailable; this replica's own limit applies", "err", err)
		}
		return s.limits.Take(key, perMinute)
	}
	return ratelimit.VerdictFor(perMinute, tokens, ok, s.now())
}
