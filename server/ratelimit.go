package server

import (
	"math"
	"net/http"
	"strconv"
)

// rateLimit takes a token for key and sets the X-RateLimit headers; when the
// bucket is empty it returns 429 rate_limited with Retry-After.
func (s *Server) rateLimit(w http.ResponseWriter, key string, perMinute int) error {
	v := s.limits.Take(key, perMinute)
	// Canonical keys assigned directly (Set would canonicalise them on
	// every request); on the wire they read X-Ratelimit-*, which header
	// names being case-insensitive makes the same as X-RateLimit-*.
	h := w.Header()
	h["X-Ratelimit-Limit"] = []string{strconv.Itoa(v.Limit)}
	h["X-Ratelimit-Remaining"] = []string{strconv.Itoa(v.Remaining)}
	h["X-Ratelimit-Reset"] = []string{strconv.FormatInt(v.Reset.Unix(), 10)}
	if v.OK {
		return nil
	}
	secs := int(math.Ceil(v.RetryAfter.Seconds()))
	h.Set("Retry-After", strconv.Itoa(max(1, secs)))
	return newError(http.StatusTooManyRequests, "rate_limited",
		"rate limit of %d requests per minute reached; retry after %d seconds", v.Limit, max(1, secs))
}
