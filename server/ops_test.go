package server

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/config"
)

func TestHealthz(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	r := env.do(200, "GET", "/healthz", nil, "")
	if got, want := strings.TrimSpace(string(r.Raw)), `{"ok":true}`; got != want {
		t.Errorf("body = %s, want %s", got, want)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q", ct)
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("ops@example.com")
	ch := env.newChannel(u, "metrics")
	token := ch["webhook_token"].(string)
	env.do(200, "GET", "/v1/channels", nil, u.Token)
	env.do(200, "GET", "/v1/channels", nil, u.Token)
	env.request("GET", "/v1/channels/"+ch["id"].(string), nil, u.Token)
	env.request("POST", "/v1/send/"+token, map[string]string{"title": "hi"}, "")
	env.request("GET", "/v1/callback/"+token+"/msg_x", nil, "")
	env.request("POST", "/v1/webhook/github/"+token, "{}", "")

	r := env.do(200, "GET", "/metrics", nil, "")
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type = %q, want Prometheus text", ct)
	}
	body := string(r.Raw)
	want := regexp.MustCompile(`(?m)^herald_http_requests_total\{code="200",method="GET",route="/v1/channels"\} 2$`)
	if !want.MatchString(body) {
		t.Errorf("metrics lack GET /v1/channels counted twice with code 200:\n%s", grepLines(body, "herald_http_requests_total"))
	}
	if !strings.Contains(body, `route="/v1/channels/:id"`) {
		t.Errorf("metrics do not label by route pattern:\n%s", grepLines(body, "herald_http_requests_total"))
	}
	for _, leak := range []string{token, ch["id"].(string), u.Token} {
		if strings.Contains(body, leak) {
			t.Errorf("metrics contain a raw path value or credential %q", leak)
		}
	}
	if !strings.Contains(body, "herald_http_request_duration_seconds_bucket") {
		t.Error("metrics lack the latency histogram")
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestMetricsOff(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(c *config.Config) { c.Metrics = false })
	wantError(t, env.request("GET", "/metrics", nil, ""), 404, "not_found")
}

func TestUnknownRouteAndMethod(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("route@example.com")

	for _, path := range []string{"/v1/nope", "/v1/channels/x/y/z", "/v1/", "/v2/channels", "/v1/channels/"} {
		r := env.request("GET", path, nil, u.Token)
		wantError(t, r, 404, "not_found")
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("GET %s: Content-Type %q", path, ct)
		}
	}

	r := env.request("PUT", "/v1/channels", map[string]string{"name": "x"}, u.Token)
	wantError(t, r, 405, "method_not_allowed")
	allow := r.Header.Get("Allow")
	for _, m := range []string{"GET", "POST"} {
		if !strings.Contains(allow, m) {
			t.Errorf("Allow = %q, want it to list %s", allow, m)
		}
	}
	if strings.Contains(allow, "PUT") {
		t.Errorf("Allow = %q lists the refused method", allow)
	}
	r = env.request("DELETE", "/healthz", nil, "")
	wantError(t, r, 405, "method_not_allowed")
	if !strings.Contains(r.Header.Get("Allow"), "GET") {
		t.Errorf("Allow = %q", r.Header.Get("Allow"))
	}
	// The refused request did nothing.
	if r := env.do(200, "GET", "/v1/channels", nil, u.Token); len(r.Body["channels"].([]any)) != 0 {
		t.Errorf("PUT /v1/channels created something: %s", r.Raw)
	}
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	idRe := regexp.MustCompile(`^[0-9A-Za-z]{8,64}$`)
	seen := map[string]bool{}
	for _, c := range []struct{ method, path string }{
		{"GET", "/healthz"}, {"GET", "/v1/nope"}, {"PUT", "/v1/channels"}, {"GET", "/v1/channels"},
		{"POST", "/v1/auth/local"}, {"GET", "/metrics"},
	} {
		r := env.request(c.method, c.path, nil, "")
		id := r.Header.Get("X-Request-Id")
		if !idRe.MatchString(id) {
			t.Errorf("%s %s (%d): X-Request-Id = %q", c.method, c.path, r.Status, id)
		}
		if seen[id] {
			t.Errorf("X-Request-Id %q given twice", id)
		}
		seen[id] = true
	}

	// An incoming id is echoed, so a proxy's id follows the request.
	r := env.request("GET", "/healthz", nil, "", "X-Request-Id", "proxy-abc-123")
	if got := r.Header.Get("X-Request-Id"); got != "proxy-abc-123" {
		t.Errorf("echoed X-Request-Id = %q, want proxy-abc-123", got)
	}
	// An absurdly long one is replaced rather than echoed.
	long := strings.Repeat("x", 65)
	if got := env.request("GET", "/healthz", nil, "", "X-Request-Id", long).Header.Get("X-Request-Id"); got == long || !idRe.MatchString(got) {
		t.Errorf("X-Request-Id for a 65-char incoming id = %q", got)
	}

	logs := env.opsLogs()
	for id := range seen {
		if !strings.Contains(logs, "request_id="+id+" ") {
			t.Errorf("access log lacks request id %s", id)
		}
	}
	if !strings.Contains(logs, "request_id=proxy-abc-123 ") {
		t.Error("access log lacks the incoming request id")
	}
}

// opsLogs stops the test server and returns everything it logged. The
// access log line is written after the response has gone out, so the log is
// complete (and safe to read) only once Close has waited for every
// connection. The env serves no more requests afterwards.
func (e *testEnv) opsLogs() string {
	e.t.Helper()
	e.srv.Close()
	return e.logs.String()
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("big@example.com")

	big := `{"name":"big","icon":"` + strings.Repeat("a", 1<<20) + `"}`
	r := env.request("POST", "/v1/channels", big, u.Token)
	wantError(t, r, 413, "payload_too_large")
	if !strings.Contains(r.Str("message"), "larger than") {
		t.Errorf("message %q does not say the body is too large", r.Str("message"))
	}
	if r := env.do(200, "GET", "/v1/channels", nil, u.Token); len(r.Body["channels"].([]any)) != 0 {
		t.Fatalf("an oversized request stored a channel: %s", r.Raw)
	}
	wantError(t, env.request("POST", "/v1/auth/local", `{"email":"`+strings.Repeat("a", 1<<20)+`"}`, ""), 413, "payload_too_large")

	// Exactly 1 MiB is still read (and then judged on its content).
	pad := 1<<20 - len(`{"name":"ok","icon":""}`)
	exact := `{"name":"ok","icon":"` + strings.Repeat("a", pad) + `"}`
	if len(exact) != 1<<20 {
		t.Fatalf("test body is %d bytes", len(exact))
	}
	r = env.request("POST", "/v1/channels", exact, u.Token)
	wantError(t, r, 400, "invalid_payload")
	if !strings.Contains(r.Str("message"), "icon") {
		t.Errorf("a 1 MiB body was refused for its size, not its icon: %q", r.Str("message"))
	}
	// The server still works on the same client.
	env.do(201, "POST", "/v1/channels", map[string]string{"name": "small"}, u.Token)
}

func TestPanicIsRecovered(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.s.handle("GET", "/v1/test-panic", func(http.ResponseWriter, *http.Request, httprouter.Params) error {
		panic("boom")
	})

	r := env.request("GET", "/v1/test-panic", nil, "")
	wantError(t, r, 500, "internal_error")
	if strings.Contains(string(r.Raw), "boom") {
		t.Errorf("response reveals the panic: %s", r.Raw)
	}
	id := r.Header.Get("X-Request-Id")
	if id == "" {
		t.Fatal("500 without X-Request-Id")
	}
	// The process and the server survive, also for a second panic.
	env.do(200, "GET", "/healthz", nil, "")
	wantError(t, env.request("GET", "/v1/test-panic", nil, ""), 500, "internal_error")
	env.do(200, "GET", "/healthz", nil, "")

	logs := env.opsLogs()
	var line string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "msg=panic") && strings.Contains(l, "request_id="+id+" ") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no panic log line with request id %s in:\n%s", id, logs)
	}
	if !strings.Contains(line, "level=ERROR") || !strings.Contains(line, "boom") {
		t.Errorf("panic log line lacks level or value: %s", line)
	}
	if !strings.Contains(logs, "request_id="+id+" method=GET path=/v1/test-panic status=500") {
		t.Errorf("access log does not record the 500 for request %s", id)
	}
}

// TestPanicMetricCode checks that a panicking request is counted as a 500.
func TestPanicMetricCode(t *testing.T) {
	env := newTestEnv(t)
	env.s.handle("GET", "/v1/test-panic", func(http.ResponseWriter, *http.Request, httprouter.Params) error {
		panic("boom")
	})
	env.request("GET", "/v1/test-panic", nil, "")
	body := string(env.do(200, "GET", "/metrics", nil, "").Raw)
	if !strings.Contains(body, `herald_http_requests_total{code="500",method="GET",route="/v1/test-panic"} 1`) {
		t.Errorf("panic not counted as 500:\n%s", grepLines(body, "test-panic"))
	}
}

func TestLogsHideWebhookTokens(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("logs@example.com")
	real := env.newChannel(u, "real")["webhook_token"].(string)

	// Whatever the send routes answer today, their tokens stay out of the log.
	env.request("POST", "/v1/send/SOMETOKEN", map[string]string{"title": "x"}, "")
	env.request("POST", "/v1/send/"+real, map[string]string{"title": "x"}, "")
	env.request("GET", "/v1/callback/CALLBACKTOKEN/msg_123", nil, "")
	env.request("POST", "/v1/webhook/github/GITHUBTOKEN", "{}", "")

	// A handler on a token path that fails or panics must not log the token
	// either. PUT is used so that no real route can collide.
	env.s.handle("PUT", "/v1/send/:token", func(_ http.ResponseWriter, _ *http.Request, p httprouter.Params) error {
		if strings.HasPrefix(p.ByName("token"), "PANIC") {
			panic("handler failed")
		}
		return errors.New("database is on fire")
	})
	wantError(t, env.request("PUT", "/v1/send/PANICTOKEN", nil, ""), 500, "internal_error")
	wantError(t, env.request("PUT", "/v1/send/ERRORTOKEN", nil, ""), 500, "internal_error")

	logs := env.opsLogs()
	for _, tok := range []string{"SOMETOKEN", real, "CALLBACKTOKEN", "GITHUBTOKEN", "PANICTOKEN", "ERRORTOKEN"} {
		if strings.Contains(logs, tok) {
			t.Errorf("log contains webhook token %q:\n%s", tok, grepLines(logs, tok))
		}
	}
	// The requests were logged, with the token redacted.
	for _, want := range []string{"path=/v1/send/REDACTED", "path=/v1/callback/REDACTED/msg_123", "path=/v1/webhook/github/REDACTED", "database is on fire", "handler failed"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

// opsRateHeaders checks the X-RateLimit headers of a limited response.
func opsRateHeaders(t *testing.T, r response, limit, remaining int, now time.Time) {
	t.Helper()
	if got := r.Header.Get("X-RateLimit-Limit"); got != strconv.Itoa(limit) {
		t.Errorf("X-RateLimit-Limit = %q, want %d", got, limit)
	}
	if got := r.Header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(remaining) {
		t.Errorf("X-RateLimit-Remaining = %q, want %d", got, remaining)
	}
	reset, err := strconv.ParseInt(r.Header.Get("X-RateLimit-Reset"), 10, 64)
	if err != nil || reset < now.Unix() || reset > now.Add(time.Minute+time.Second).Unix() {
		t.Errorf("X-RateLimit-Reset = %q, want a unix time within the next minute of %d", r.Header.Get("X-RateLimit-Reset"), now.Unix())
	}
}

func opsRateLimited(c *config.Config) {
	c.Plans.Free.APIPerMinute = 3
	c.Plans.Pro.APIPerMinute = 10
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, opsRateLimited)
	u := env.newUser("rate@example.com")
	key := env.apiKey(u)
	now := env.clock.Now()

	for i := range 3 {
		r := env.do(200, "GET", "/v1/channels", nil, u.Token)
		opsRateHeaders(t, r, 3, 2-i, now)
		if r.Header.Get("Retry-After") != "" {
			t.Errorf("Retry-After on an allowed request")
		}
	}
	r := env.request("GET", "/v1/channels", nil, u.Token)
	wantError(t, r, 429, "rate_limited")
	opsRateHeaders(t, r, 3, 0, now)
	if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
		t.Errorf("Retry-After = %q, want 1..60 seconds", r.Header.Get("Retry-After"))
	}
	if r.Header.Get("X-Request-Id") == "" {
		t.Error("429 without X-Request-Id")
	}
	// The limit is per user: an API key of the same user shares the bucket.
	wantError(t, env.request("GET", "/v1/channels", nil, key), 429, "rate_limited")

	// Per endpoint: other routes have their own buckets.
	opsRateHeaders(t, env.do(200, "GET", "/v1/folders", nil, u.Token), 3, 2, now)
	env.do(200, "GET", "/v1/auth/me", nil, u.Token)
	env.do(201, "POST", "/v1/channels", map[string]string{"name": "x"}, u.Token)
	// Per user: another user is not limited.
	env.do(200, "GET", "/v1/channels", nil, env.newUser("other@example.com").Token)
	// Public endpoints are not limited.
	for range 5 {
		env.do(200, "GET", "/healthz", nil, "")
	}

	// A token comes back after 20 s (3 a minute), the full bucket after a minute.
	env.clock.Advance(20 * time.Second)
	env.do(200, "GET", "/v1/channels", nil, u.Token)
	wantError(t, env.request("GET", "/v1/channels", nil, u.Token), 429, "rate_limited")
	env.clock.Advance(time.Minute)
	for range 3 {
		env.do(200, "GET", "/v1/channels", nil, u.Token)
	}
	wantError(t, env.request("GET", "/v1/channels", nil, u.Token), 429, "rate_limited")
}

func TestRateLimitFollowsPlanChange(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, opsRateLimited)
	u := env.newUser("upgrade@example.com")
	ctx := context.Background()
	now := env.clock.Now()

	for range 3 {
		env.do(200, "GET", "/v1/channels", nil, u.Token)
	}
	wantError(t, env.request("GET", "/v1/channels", nil, u.Token), 429, "rate_limited")

	// An upgrade applies on the next request: 3 of 10 are used, so 7 are left.
	if err := env.st.SetUserPlan(ctx, u.ID, "pro"); err != nil {
		t.Fatal(err)
	}
	opsRateHeaders(t, env.do(200, "GET", "/v1/channels", nil, u.Token), 10, 6, now)
	for i := range 6 {
		opsRateHeaders(t, env.do(200, "GET", "/v1/channels", nil, u.Token), 10, 5-i, now)
	}
	wantError(t, env.request("GET", "/v1/channels", nil, u.Token), 429, "rate_limited")

	// A downgrade applies on the next request too.
	env.clock.Advance(time.Minute)
	now = env.clock.Now()
	for range 4 {
		env.do(200, "GET", "/v1/channels", nil, u.Token)
	}
	if err := env.st.SetUserPlan(ctx, u.ID, "free"); err != nil {
		t.Fatal(err)
	}
	r := env.request("GET", "/v1/channels", nil, u.Token)
	wantError(t, r, 429, "rate_limited")
	opsRateHeaders(t, r, 3, 0, now)
}
