package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/forwarded"
	"github.com/heraldhq/herald/store"
)

// maxBody is the request body limit for every endpoint.
const maxBody = 1 << 20

// maxDrain is the largest declared body over maxBody that is read and
// dropped before its 413, so that a proxy in front gets to read the answer.
const maxDrain = 8 << 20

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyPrincipal
)

// Request ids need to be unique, not secret: a random per-process prefix
// and a counter, instead of reading crypto/rand on every request.
var (
	requestPrefix = store.NewToken(8)
	requestSeq    atomic.Uint64
)

func nextRequestID() string {
	return requestPrefix + strconv.FormatUint(requestSeq.Add(1), 36)
}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(keyRequestID).(string)
	return id
}

// statusWriter remembers the status code for the access log and metrics.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach Flush on the real writer (SSE).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// outer wraps the whole router: request id, body limit, panic recovery and
// the access log.
func (s *Server) outer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 64 {
			id = nextRequestID()
		}
		h := w.Header()
		h["X-Request-Id"] = []string{id}
		s.securityHeaders(h)
		if !s.hsts && forwarded.HTTPS(r) {
			h["Strict-Transport-Security"] = hstsValue // reached over HTTPS whatever base_url says
		}
		ctx := context.WithValue(r.Context(), keyRequestID, id)
		r = r.WithContext(ctx)
		raw := r.Body
		limit := s.bodyLimit(r)
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.ErrorContext(ctx, "panic", "request_id", id, "method", r.Method, "path", redactPath(r.URL.Path),
					"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if sw.status == 0 {
					writeJSON(sw, http.StatusInternalServerError, map[string]string{"error": "internal_error", "message": "internal error"})
				}
			}
			if !s.log.Enabled(ctx, slog.LevelInfo) {
				return // the access log is off: skip building its line
			}
			status := sw.status
			if status == 0 {
				status = http.StatusOK // nothing written: net/http answers 200
			}
			s.log.InfoContext(ctx, "request", "request_id", id, "method", r.Method, "path", redactPath(r.URL.Path),
				"status", status, "bytes", sw.bytes, "duration_ms", float64(time.Since(start).Microseconds())/1000,
				"remote", r.RemoteAddr)
		}()
		if r.ContentLength > limit {
			// Declared too large: refused before anything decodes it. A
			// body of unknown length meets the limit as it is read
			// (asAPIError). One of up to maxDrain is read and dropped
			// first: a proxy still sending it (nginx) would otherwise see
			// the connection close under it and answer 502 instead of the
			// 413. A larger one is not read; the connection closes.
			if r.ContentLength <= maxDrain {
				_, _ = io.Copy(io.Discard, raw)
			}
			// An ntfy publish (to a topic, or as JSON to /) and a Gotify
			// one are answered in their own shapes, as one refused while
			// it is read is.
			tooLarge := &http.MaxBytesError{Limit: limit}
			switch publish := r.Method == http.MethodPost || r.Method == http.MethodPut; {
			case publish && (ntfyTopicPath(r.URL.Path) || r.URL.Path == "/"):
				s.writeNtfyError(sw, r, tooLarge)
			case r.Method == http.MethodPost && r.URL.Path == "/message":
				s.writeGotifyError(sw, r, tooLarge)
			default:
				s.writeError(sw, r, tooLarge)
			}
			return
		}
		next.ServeHTTP(sw, r)
	})
}

// Header values every response starts with (see securityHeaders).
var (
	referrerPolicy = []string{"no-referrer"}
	apiCSP         = []string{"default-src 'none'; frame-ancestors 'none'"}
	frameDeny      = []string{"DENY"}
	noStore        = []string{"no-store"}
	hstsValue      = []string{"max-age=63072000"}
)

// securityHeaders sets what every response carries. The API's answers are
// data, never pages: no framing, no sub-resources, no referrer, and no
// caching, since many carry tokens, secrets or keys. The admin UI and the
// HTML signature docs replace the policy and cache rule with their own.
// HSTS is sent when base_url is https (outer also sends it on a request
// that came over HTTPS: Herald's own TLS, or a trusted proxy's).
func (s *Server) securityHeaders(h http.Header) {
	h["X-Content-Type-Options"] = noSniff
	h["X-Frame-Options"] = frameDeny
	h["Referrer-Policy"] = referrerPolicy
	h["Content-Security-Policy"] = apiCSP
	h["Cache-Control"] = noStore
	if s.hsts {
		h["Strict-Transport-Security"] = hstsValue
	}
}

// redactPath hides credentials in a request path from the logs. The token
// of a webhook route is always hidden, whatever its shape. Beyond that,
// every segment holding something token-shaped (a run of 16 or more token
// characters with a digit or a capital letter, unless it starts like one of
// Herald's own ids) becomes REDACTED, so that a token in a mistyped path
// (/v1//send/..., /V1/send/..., a webhook path without its source) is
// hidden too.
func redactPath(p string) string {
	segs := strings.Split(p, "/")
	// The webhook routes: /v1/send/{token}, /v1/callback/{token}/...,
	// /v1/webhook/{source}/{token}; and ntfy's answer capabilities.
	if len(segs) >= 4 && segs[0] == "" && segs[1] == "v1" {
		switch segs[2] {
		case "send", "callback":
			if segs[3] != "" {
				segs[3] = "REDACTED"
			}
		case "webhook":
			if len(segs) >= 5 && segs[4] != "" {
				segs[4] = "REDACTED"
			}
		case "ntfy": // /v1/ntfy/answer/{capability}
			if len(segs) >= 5 && segs[3] == "answer" && segs[4] != "" {
				segs[4] = "REDACTED"
			}
		}
	}
	for i, seg := range segs {
		if tokenShaped(seg) {
			segs[i] = "REDACTED"
		}
	}
	return strings.Join(segs, "/")
}

// idPrefixes start Herald's ids, which are not secrets.
var idPrefixes = []string{"att_", "ch_", "dev_", "dlv_", "fld_", "key_", "msg_", "ses_", "usr_"}

// tokenShaped reports whether seg holds a run of token characters that
// could be a credential.
func tokenShaped(seg string) bool {
	for seg != "" {
		i := 0
		for i < len(seg) && isTokenChar(seg[i]) {
			i++
		}
		if run := seg[:i]; len(run) >= 16 && !isID(run) && strings.ContainsFunc(run, func(c rune) bool {
			return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z'
		}) {
			return true
		}
		if i < len(seg) {
			i++ // the character that ended the run
		}
		seg = seg[i:]
	}
	return false
}

func isID(run string) bool {
	for _, prefix := range idPrefixes {
		if strings.HasPrefix(run, prefix) {
			return true
		}
	}
	return false
}

func isTokenChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
