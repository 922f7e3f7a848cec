package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/store"
)

// maxBody is the request body limit for every endpoint.
const maxBody = 1 << 20

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
		w.Header()["X-Request-Id"] = []string{id}
		ctx := context.WithValue(r.Context(), keyRequestID, id)
		r = r.WithContext(ctx)
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
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
			s.log.InfoContext(ctx, "request", "request_id", id, "method", r.Method, "path", redactPath(r.URL.Path),
				"status", sw.status, "bytes", sw.bytes, "duration_ms", float64(time.Since(start).Microseconds())/1000,
				"remote", r.RemoteAddr)
		}()
		next.ServeHTTP(sw, r)
	})
}

// redactPath hides webhook tokens, which are credentials, from the logs.
func redactPath(p string) string {
	for _, prefix := range []string{"/v1/send/", "/v1/callback/", "/v1/webhook/"} {
		if len(p) > len(prefix) && p[:len(prefix)] == prefix {
			rest := p[len(prefix):]
			if prefix == "/v1/webhook/" {
				// /v1/webhook/{source}/{token}
				for i := 0; i < len(rest); i++ {
					if rest[i] == '/' {
						return prefix + rest[:i+1] + "REDACTED"
					}
				}
				return p
			}
			tail := ""
			for i := 0; i < len(rest); i++ {
				if rest[i] == '/' {
					tail = rest[i:]
					break
				}
			}
			return prefix + "REDACTED" + tail
		}
	}
	return p
}
