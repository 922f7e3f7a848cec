package server

// Callback delivery, end to end: a real server and store, a real
// delivery.Queue over that store, and real receivers (httptest servers on
// 127.0.0.1). Nothing under test is mocked.
//
// Clocks. newTestEnv's clock is frozen, and the store compares
// next_attempt_at with that clock when it claims jobs. A queue on time.Now
// over a frozen store would never see a retry fall due; a queue on the frozen
// clock (delivery.Options{Now: env.clock.Now}) needs the test to advance the
// clock and poke the queue for every retry. Most tests here need real time
// anyway (receiver timeouts, latency, a 20 ms backoff that takes 0.5 s for
// eight attempts), so cbEnv opens the same server over the real clock.
// TestCallbackBackoffSchedule uses the frozen clock on purpose, to step
// through the production schedule (1m, 2m, ... 1h) exactly.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/delivery"
	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/signature"
	"github.com/heraldhq/herald/store"
)

var cbDeliveryIDRe = regexp.MustCompile(`^dlv_[0-9A-Za-z]{20,}$`)

// cbEnv is newTestEnv on the real clock (see the top of this file). Its
// clock field is a frozen clock that nothing reads.
func cbEnv(t *testing.T) *testEnv {
	t.Helper()
	e, _ := openTestEnv(t, t.TempDir(), nil, func(c *config.Config) { *c = cbConfig(c.DataDir) })
	return e
}

// cbConfig is the test configuration: rate limits out of the way.
func cbConfig(dataDir string) config.Config {
	cfg := config.Default()
	cfg.DataDir = dataDir
	cfg.Plans.Free = config.Plan{SendPerMinute: 1000000, APIPerMinute: 1000000}
	cfg.Plans.Pro = config.Plan{SendPerMinute: 1000000, APIPerMinute: 1000000}
	cfg.Delivery.AllowLoopback = true // the receivers are on 127.0.0.1; each queue's guard decides
	return cfg
}

// cbQueueConfig is the queue these tests run: fast backoff, 8 attempts, and
// loopback allowed, where the receivers listen.
func cbQueueConfig() delivery.Config {
	return delivery.Config{Workers: 4, Timeout: 2 * time.Second, BackoffBase: 20 * time.Millisecond,
		BackoffMax: 80 * time.Millisecond, MaxAttempts: 8, UserAgent: "Herald-Webhooks/test",
		Guard: netguard.Policy{AllowLoopback: true}}
}

// cbStartQueue runs a real queue over st until the test ends. The returned
// func stops it early and waits for it. The queue's log is shown when the
// test fails.
func cbStartQueue(t *testing.T, st *store.Store, cfg delivery.Config, opts delivery.Options) (stop func()) {
	t.Helper()
	logs := &lockedWriter{w: &bytes.Buffer{}}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	q := delivery.New(st, cfg, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("queue.Run: %v", err)
			}
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			logs.mu.Lock()
			t.Logf("queue log:\n%s", logs.w.(*bytes.Buffer).String())
			logs.mu.Unlock()
		}
	})
	return stop
}

// cbHit is one request a receiver got.
type cbHit struct {
	At     time.Time
	Method string
	URI    string // path and query
	Header http.Header
	Body   []byte
}

// cbAnswer writes a receiver's answer to its n-th request (1-based, any path).
type cbAnswer func(w http.ResponseWriter, r *http.Request, n int)

// cbHold holds a receiver's answer until ch is closed, the request ends or
// 5 seconds pass.
func cbHold(r *http.Request, ch <-chan struct{}) {
	select {
	case <-ch:
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
	}
}

// cbStatus answers every request with code.
func cbStatus(code int) cbAnswer {
	return func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(code) }
}

// cbReceiver is a callback receiver on 127.0.0.1 that logs every request
// before it answers.
type cbReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	hits   []cbHit
	answer cbAnswer
}

// cbNewReceiver starts a receiver. Create it before the queue, so that the
// queue stops before the receiver closes.
func cbNewReceiver(t *testing.T, answer cbAnswer) *cbReceiver {
	t.Helper()
	return cbNewReceiverOn(t, "127.0.0.1:0", answer)
}

// cbNewReceiverOn starts a receiver listening on addr, or returns nil if
// the platform cannot listen there.
func cbNewReceiverOn(t *testing.T, addr string, answer cbAnswer) *cbReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil
	}
	rc := &cbReceiver{answer: answer}
	rc.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.hits = append(rc.hits, cbHit{At: time.Now(), Method: r.Method, URI: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body})
		n, answer := len(rc.hits), rc.answer
		rc.mu.Unlock()
		answer(w, r, n)
	}))
	rc.Listener.Close()
	rc.Listener = ln
	rc.Start()
	t.Cleanup(rc.Close)
	return rc
}

func (rc *cbReceiver) setAnswer(a cbAnswer) {
	rc.mu.Lock()
	rc.answer = a
	rc.mu.Unlock()
}

// Hits returns a copy of the log.
func (rc *cbReceiver) Hits() []cbHit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]cbHit(nil), rc.hits...)
}

// waitHits waits until the receiver has had at least n requests.
func (rc *cbReceiver) waitHits(t *testing.T, n int, within time.Duration) []cbHit {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		hits := rc.Hits()
		if len(hits) >= n {
			return hits
		}
		if time.Now().After(deadline) {
			t.Fatalf("receiver got %d requests within %s, want %d", len(hits), within, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// cbFixture is a user with one channel.
type cbFixture struct {
	e      *testEnv
	user   *testUser
	token  string // what requests authenticate with
	chID   string
	hook   string // the channel's webhook token
	secret string
}

func cbSetup(e *testEnv, email string) *cbFixture {
	e.t.Helper()
	u := e.newUser(email)
	ch := e.newChannel(u, "Deploys")
	f := &cbFixture{e: e, user: u, token: u.Token, chID: ch["id"].(string), hook: ch["webhook_token"].(string)}
	f.secret = e.do(200, "GET", "/v1/channels/"+f.chID+"/secret", nil, u.Token).Str("webhook_secret")
	if !strings.HasPrefix(f.secret, "whsec_") {
		e.t.Fatalf("secret %q", f.secret)
	}
	return f
}

func cbButton(key string) map[string]any {
	return map[string]any{"type": "button", "label": strings.ToUpper(key[:1]) + key[1:], "key": key}
}

// send sends a message with callbackURL ("" for none) and actions (default:
// an approve button) and returns its id.
func (f *cbFixture) send(callbackURL string, actions ...map[string]any) string {
	f.e.t.Helper()
	if len(actions) == 0 {
		actions = []map[string]any{cbButton("approve"), cbButton("reject")}
	}
	payload := map[string]any{"title": "Deploy v2.3 to production?", "actions": actions}
	if callbackURL != "" {
		payload["callback_url"] = callbackURL
	}
	id := f.e.do(200, "POST", "/v1/send/"+f.hook, payload, "").Str("id")
	if !strings.HasPrefix(id, "msg_") {
		f.e.t.Fatalf("send gave id %q", id)
	}
	return id
}

// tap responds to message id as the app does when a button is tapped.
func (f *cbFixture) tap(id, key string) {
	f.e.t.Helper()
	f.e.do(200, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": key}, f.token)
}

// log is GET /v1/messages/:id/deliveries.
func (f *cbFixture) log(id string) (dlv map[string]any, attempts []map[string]any) {
	f.e.t.Helper()
	r := f.e.do(200, "GET", "/v1/messages/"+id+"/deliveries", nil, f.token)
	dlv, _ = r.Body["delivery"].(map[string]any)
	list, ok := r.Body["deliveries"].([]any)
	if !ok {
		f.e.t.Fatalf("deliveries is not a list: %s", r.Raw)
	}
	for _, a := range list {
		attempts = append(attempts, a.(map[string]any))
	}
	return dlv, attempts
}

// waitLog polls the delivery log until done accepts it.
func (f *cbFixture) waitLog(id string, within time.Duration, what string, done func(dlv map[string]any, attempts []map[string]any) bool) (map[string]any, []map[string]any) {
	f.e.t.Helper()
	deadline := time.Now().Add(within)
	for {
		dlv, attempts := f.log(id)
		if dlv != nil && done(dlv, attempts) {
			return dlv, attempts
		}
		if time.Now().After(deadline) {
			f.e.t.Fatalf("%s: not within %s; delivery %v, attempts %v", what, within, dlv, attempts)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitState waits until the message's delivery is in state.
func (f *cbFixture) waitState(id, state string, within time.Duration) (map[string]any, []map[string]any) {
	f.e.t.Helper()
	return f.waitLog(id, within, "delivery state "+state, func(d map[string]any, _ []map[string]any) bool {
		return d["state"] == state
	})
}

// poll is the sender's polling read.
func (f *cbFixture) poll(id string) response {
	f.e.t.Helper()
	return f.e.do(200, "GET", "/v1/callback/"+f.hook+"/"+id, nil, "")
}

// cbTime parses an RFC 3339 UTC timestamp of the API.
func cbTime(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	at, err := time.Parse(time.RFC3339, s)
	if err != nil || !strings.HasSuffix(s, "Z") {
		t.Fatalf("timestamp %v is not RFC 3339 UTC: %v", v, err)
	}
	return at
}

// cbKeys returns m's keys, sorted.
func cbKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func cbWantKeys[V any](t *testing.T, what string, m map[string]V, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := cbKeys(m); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s has keys %v, want %v", what, got, want)
	}
}

// cbVerify checks a hit's signature against secret over the raw body.
func cbVerify(hit cbHit, secret string) error {
	return signature.Verify(secret, hit.Header.Get("X-Service-Signature"), hit.Body, time.Now(), signature.Tolerance)
}

// cbNum reads a JSON number field as an int (-1 when it is not a number).
func cbNum(v any) int {
	n, ok := v.(float64)
	if !ok {
		return -1
	}
	return int(n)
}

func TestCallbackResponseReceived(t *testing.T) {
	e := cbEnv(t)
	f := cbSetup(e, "cb-body@example.com")
	cbStartQueue(t, e.st, cbQueueConfig(), delivery.Options{})

	form := map[string]any{"type": "form", "label": "Details", "key": "details", "fields": []map[string]any{
		{"key": "comment", "label": "Comment", "type": "text", "required": true},
		{"key": "qty", "label": "Replicas", "type": "number"},
		{"key": "agree", "label": "I agree", "type": "checkbox"},
		{"key": "color", "label": "Colour", "type": "select", "options": []string{"red", "blue"}},
		{"key": "notes", "label": "Notes", "type": "textarea"},
	}}
	tests := []struct {
		name      string
		actions   []map[string]any
		respond   map[string]any
		triggered string
		responses string // JSON
	}{
		{"form", []map[string]any{form, cbButton("skip")},
			map[string]any{"action": "details", "responses": map[string]any{"comment": "Ship it ✓ \"now\"", "qty": 3, "agree": true, "color": "blue"}},
			"details", `{"comment": "Ship it ✓ \"now\"", "qty": 3, "agree": true, "color": "blue"}`},
		{"button", nil, map[string]any{"action": "approve"}, "approve", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := cbNewReceiver(t, cbStatus(200))
			id := f.send(rc.URL+"/hooks/herald?src=test", tt.actions...)
			before := time.Now().UTC().Truncate(time.Millisecond)
			e.do(200, "POST", "/v1/messages/"+id+"/respond", tt.respond, f.token)
			after := time.Now().UTC()
			hit := rc.waitHits(t, 1, 5*time.Second)[0]

			if hit.Method != "POST" || hit.URI != "/hooks/herald?src=test" {
				t.Errorf("callback was %s %s, want POST to the callback_url", hit.Method, hit.URI)
			}
			var body map[string]json.RawMessage
			if err := json.Unmarshal(hit.Body, &body); err != nil {
				t.Fatalf("body %q: %v", hit.Body, err)
			}
			cbWantKeys(t, "response.received body", body,
				"event", "message_id", "channel_id", "timestamp", "triggered_by", "responses", "metadata")
			str := func(k string) string {
				var s string
				if err := json.Unmarshal(body[k], &s); err != nil {
					t.Fatalf("%s = %s is not a string", k, body[k])
				}
				return s
			}
			for _, c := range []struct{ key, want string }{
				{"event", "response.received"}, {"message_id", id}, {"channel_id", f.chID}, {"triggered_by", tt.triggered},
			} {
				if got := str(c.key); got != c.want {
					t.Errorf("%s = %q, want %q", c.key, got, c.want)
				}
			}
			at := cbTime(t, str("timestamp"))
			if at.Before(before) || at.After(after) {
				t.Errorf("timestamp %s is not when the action was triggered (%s..%s)", at, before, after)
			}
			var got, want any
			_ = json.Unmarshal(body["responses"], &got)
			_ = json.Unmarshal([]byte(tt.responses), &want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("responses = %s, want %s", body["responses"], tt.responses)
			}
			if string(body["metadata"]) != "null" {
				t.Errorf("metadata = %s, want null", body["metadata"])
			}

			// The callback and the polling result describe the same response.
			p := f.poll(id)
			result, _ := p.Body["result"].(map[string]any)
			for _, k := range []string{"message_id", "channel_id", "timestamp", "triggered_by", "responses"} {
				var v any
				_ = json.Unmarshal(body[k], &v)
				if !reflect.DeepEqual(result[k], v) {
					t.Errorf("poll result %s = %v, callback has %v", k, result[k], v)
				}
			}

			h := hit.Header
			for _, c := range []struct{ name, want string }{
				{"Content-Type", "application/json"}, {"User-Agent", "Herald-Webhooks/test"}, {"X-Service-Event", "response.received"},
			} {
				if got := h.Get(c.name); got != c.want {
					t.Errorf("%s = %q, want %q", c.name, got, c.want)
				}
			}
			if got := h.Get("X-Service-Delivery"); !cbDeliveryIDRe.MatchString(got) {
				t.Errorf("X-Service-Delivery = %q, want dlv_...", got)
			}
			sig := h.Get("X-Service-Signature")
			if !regexp.MustCompile(`^t=\d+,v1=[0-9a-f]{64}$`).MatchString(sig) {
				t.Errorf("X-Service-Signature = %q, want t=<unix>,v1=<hex>", sig)
			}
			secret := e.do(200, "GET", "/v1/channels/"+f.chID+"/secret", nil, f.token).Str("webhook_secret")
			if err := cbVerify(hit, secret); err != nil {
				t.Errorf("signature %q does not verify over the raw body: %v", sig, err)
			}
			if err := signature.Verify(secret, sig, append(hit.Body, ' '), time.Now(), signature.Tolerance); err == nil {
				t.Error("signature verifies over a changed body")
			}
			if err := cbVerify(hit, secret+"x"); err == nil {
				t.Error("signature verifies with another secret")
			}

			dlv, attempts := f.waitState(id, "delivered", 5*time.Second)
			if cbNum(dlv["attempts"]) != 1 || cbNum(dlv["last_status_code"]) != 200 || dlv["next_attempt_at"] != nil {
				t.Errorf("delivery = %v, want delivered after 1 attempt with 200 and no next attempt", dlv)
			}
			if len(attempts) != 1 || cbNum(attempts[0]["status_code"]) != 200 || attempts[0]["error"] != "" {
				t.Errorf("attempts = %v, want one with 200", attempts)
			}
		})
	}
}

// TestCallbackBackoffSchedule steps a frozen clock through the production
// schedule: attempt n+1 falls due exactly min(1m * 2^(n-1), 1h) after
// attempt n, and not a second earlier.
func TestCallbackBackoffSchedule(t *testing.T) {
	e := newTestEnv(t)
	f := cbSetup(e, "cb-schedule@example.com")
	f.token = e.apiKey(f.user) // sessions expire as the clock moves on; keys do not
	rc := cbNewReceiver(t, cbStatus(500))
	cfg := cbQueueConfig()
	cfg.BackoffBase, cfg.BackoffMax, cfg.Workers = time.Minute, time.Hour, 1
	cbStartQueue(t, e.st, cfg, delivery.Options{Now: e.clock.Now})

	id := f.send(rc.URL)
	f.tap(id, "approve")
	waits := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute,
		16 * time.Minute, 32 * time.Minute, time.Hour}
	for n := 1; n <= 8; n++ {
		rc.waitHits(t, n, 5*time.Second)
		dlv, attempts := f.waitLog(id, 5*time.Second, fmt.Sprintf("attempt %d logged", n),
			func(_ map[string]any, a []map[string]any) bool { return len(a) == n })
		if got, want := cbTime(t, attempts[n-1]["at"]), e.clock.Now(); !got.Equal(want) {
			t.Fatalf("attempt %d at %s, want %s", n, got, want)
		}
		if n == 8 {
			break
		}
		if got, want := cbTime(t, dlv["next_attempt_at"]), e.clock.Now().Add(waits[n-1]); !got.Equal(want) {
			t.Fatalf("after attempt %d next_attempt_at = %s, want %s (+%s)", n, got, want, waits[n-1])
		}
		e.clock.Advance(waits[n-1] - time.Second)
		e.st.Poke(store.TopicDeliveries)
		time.Sleep(30 * time.Millisecond)
		if got := len(rc.Hits()); got != n {
			t.Fatalf("attempt %d came %s after attempt %d, before its backoff of %s", got, waits[n-1]-time.Second, n, waits[n-1])
		}
		e.clock.Advance(time.Second)
		e.st.Poke(store.TopicDeliveries)
	}
	dlv, _ := f.waitState(id, "failed", 5*time.Second)
	if cbNum(dlv["attempts"]) != 8 || dlv["next_attempt_at"] != nil {
		t.Errorf("delivery = %v, want failed after 8 attempts with no next attempt", dlv)
	}
	// The response expired unread long ago; failed is still the last word.
	if got := f.poll(id).Str("status"); got != "failed" {
		t.Errorf("poll status = %q, want failed", got)
	}
	e.clock.Advance(2 * time.Hour)
	e.st.Poke(store.TopicDeliveries)
	time.Sleep(30 * time.Millisecond)
	if got := len(rc.Hits()); got != 8 {
		t.Errorf("receiver got %d requests, want 8", got)
	}
}

// TestCallbackBackoff checks the schedule on a test clock that the store,
// the server and the queue share and only the test moves: waits grow, then
// stay at the cap, to the millisecond, and no attempt comes before it is
// due. Nothing depends on how fast the machine is.
func TestCallbackBackoff(t *testing.T) {
	clk := newClock()
	e, _ := openTestEnv(t, t.TempDir(), clk, func(c *config.Config) { *c = cbConfig(c.DataDir) })
	f := cbSetup(e, "cb-backoff@example.com")
	var mu sync.Mutex
	var due time.Time // when the next attempt may come
	var early []string
	rc := cbNewReceiver(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		mu.Lock()
		if now := clk.Now(); now.Before(due) {
			early = append(early, fmt.Sprintf("attempt %d came at %s, due at %s", n, now.Format(time.RFC3339Nano), due.Format(time.RFC3339Nano)))
		}
		mu.Unlock()
		w.WriteHeader(500)
	})
	cfg := cbQueueConfig()
	cfg.BackoffBase, cfg.BackoffMax = 25*time.Millisecond, 100*time.Millisecond
	cbStartQueue(t, e.st, cfg, delivery.Options{Now: clk.Now})

	id := f.send(rc.URL)
	f.tap(id, "approve")
	const ms = time.Millisecond
	waits := []time.Duration{25 * ms, 50 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms}
	for n := 1; n <= 8; n++ {
		dlv, attempts := f.waitLog(id, 10*time.Second, fmt.Sprintf("attempt %d logged", n), func(_ map[string]any, a []map[string]any) bool {
			return len(a) >= n
		})
		if len(attempts) != n {
			t.Fatalf("%d attempts logged while the clock stood still, want %d", len(attempts), n)
		}
		if at := cbTime(t, attempts[n-1]["at"]); !at.Equal(clk.Now()) {
			t.Errorf("attempt %d logged at %s, want %s", n, at, clk.Now())
		}
		if n == 8 {
			if dlv["state"] != "failed" || dlv["next_attempt_at"] != nil {
				t.Errorf("after the last attempt: %v, want failed with no next attempt", dlv)
			}
			break
		}
		want := waits[n-1]
		if next := cbTime(t, dlv["next_attempt_at"]); next.Sub(clk.Now()) != want {
			t.Errorf("after attempt %d the next is due in %s, want %s", n, next.Sub(clk.Now()), want)
		}
		// The receiver checks that nothing comes before the clock is here.
		mu.Lock()
		due = clk.Now().Add(want)
		mu.Unlock()
		clk.Advance(want)
	}
	mu.Lock()
	for _, msg := range early {
		t.Error(msg)
	}
	mu.Unlock()
	_, attempts := f.log(id)
	hits := rc.Hits()
	if len(attempts) != 8 || len(hits) != 8 {
		t.Fatalf("%d attempts logged, %d received; want 8", len(attempts), len(hits))
	}
	for i, a := range attempts {
		if cbNum(a["attempt"]) != i+1 || cbNum(a["status_code"]) != 500 || !strings.Contains(fmt.Sprint(a["error"]), "500") {
			t.Errorf("attempt %d logged as %v", i+1, a)
		}
	}
	// Every attempt carries the same delivery and body, freshly signed.
	for i, h := range hits {
		if h.Header.Get("X-Service-Delivery") != hits[0].Header.Get("X-Service-Delivery") || !bytes.Equal(h.Body, hits[0].Body) {
			t.Errorf("attempt %d differs from the first: %s %s", i+1, h.Header.Get("X-Service-Delivery"), h.Body)
		}
		if err := cbVerify(h, f.secret); err != nil {
			t.Errorf("attempt %d: %v", i+1, err)
		}
	}
}

// TestCallbackMaxAttempts: 8 attempts, then dead-lettered for good.
func TestCallbackMaxAttempts(t *testing.T) {
	e := cbEnv(t)
	f := cbSetup(e, "cb-max@example.com")
	rc := cbNewReceiver(t, cbStatus(500))
	cfg := cbQueueConfig()
	cbStartQueue(t, e.st, cfg, delivery.Options{})

	id := f.send(rc.URL)
	f.tap(id, "approve")
	// The sender reads the stored response before the delivery gives up.
	if got := f.poll(id).Str("status"); got != "submitted" {
		t.Fatalf("first poll status = %q, want submitted", got)
	}
	dlv, attempts := f.waitState(id, "failed", 10*time.Second)
	if cbNum(dlv["attempts"]) != 8 || cbNum(dlv["last_status_code"]) != 500 || dlv["next_attempt_at"] != nil {
		t.Errorf("delivery = %v, want failed, 8 attempts, last 500, no next attempt", dlv)
	}
	if len(attempts) != 8 {
		t.Errorf("%d attempts logged, want 8", len(attempts))
	}
	for i := 0; i < 2; i++ {
		if got := f.poll(id).Str("status"); got != "failed" {
			t.Errorf("poll %d after dead-lettering: status %q, want failed", i+1, got)
		}
	}
	m := e.do(200, "GET", "/v1/messages/"+id, nil, f.token)
	if m.Str("status") != "failed" || m.Body["response"] != nil {
		t.Errorf("message status %q response %v, want failed and null", m.Str("status"), m.Body["response"])
	}

	// The receiver recovers; nothing more comes.
	rc.setAnswer(cbStatus(200))
	time.Sleep(5 * cfg.BackoffMax)
	if got := len(rc.Hits()); got != 8 {
		t.Errorf("receiver got %d requests, want 8 (no retry after dead-lettering)", got)
	}
	if dlv, _ := f.log(id); dlv["state"] != "failed" || cbNum(dlv["attempts"]) != 8 {
		t.Errorf("delivery moved on after dead-lettering: %v", dlv)
	}
}

func TestCallbackRedirectNotFollowed(t *testing.T) {
	e := cbEnv(t)
	f := cbSetup(e, "cb-redirect@example.com")
	rc := cbNewReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		if r.URL.Path == "/elsewhere" {
			w.WriteHeader(200)
			return
		}
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hook/"))
		http.Redirect(w, r, "/elsewhere", code)
	})
	cfg := cbQueueConfig()
	cfg.MaxAttempts = 1
	cbStartQueue(t, e.st, cfg, delivery.Options{})

	for _, code := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			id := f.send(fmt.Sprintf("%s/hook/%d", rc.URL, code))
			f.tap(id, "approve")
			dlv, attempts := f.waitState(id, "failed", 5*time.Second)
			if cbNum(dlv["last_status_code"]) != code || len(attempts) != 1 {
				t.Fatalf("delivery %v attempts %v, want one failed attempt with %d", dlv, attempts, code)
			}
			if got, want := fmt.Sprint(attempts[0]["error"]), fmt.Sprintf("receiver answered %d; redirects are not followed", code); got != want {
				t.Errorf("error %q, want %q", got, want)
			}
		})
	}
	for _, h := range rc.Hits() {
		if !strings.HasPrefix(h.URI, "/hook/") {
			t.Errorf("the redirect was followed to %s", h.URI)
		}
	}
}

func TestCallbackTimeout(t *testing.T) {
	e := cbEnv(t)
	f := cbSetup(e, "cb-timeout@example.com")
	rc := cbNewReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		w.WriteHeader(200)
	})
	cfg := cbQueueConfig()
	cfg.Timeout, cfg.MaxAttempts = 200*time.Millisecond, 2
	cbStartQueue(t, e.st, cfg, delivery.Options{})

	id := f.send(rc.URL)
	f.tap(id, "approve")
	dlv, attempts := f.waitState(id, "failed", 10*time.Second)
	if len(attempts) != 2 || dlv["last_status_code"] != nil {
		t.Fatalf("delivery %v attempts %v, want 2 attempts without a status", dlv, attempts)
	}
	for _, a := range attempts {
		if a["status_code"] != nil || a["error"] != "timed out" {
			t.Errorf("attempt %v: want no status and error \"timed out\"", a)
		}
		if d := cbNum(a["duration_ms"]); d < 150 || d > 5000 {
			t.Errorf("attempt took %d ms, want about the 200 ms timeout", d)
		}
	}
	if got := f.poll(id).Str("status"); got != "failed" {
		t.Errorf("poll status %q, want failed", got)
	}
}

func TestCallbackAny2xxSucceeds(t *testing.T) {
	e := cbEnv(t)
	f := cbSetup(e, "cb-2xx@example.com")
	rc := cbNewReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		w.WriteHeader(code)
	})
	cfg := cbQueueConfig()
	cbStartQueue(t, e.st, cfg, delivery.Options{})
	for _, code := range []int{200, 201, 202, 204, 299} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			id := f.send(fmt.Sprintf("%s/%d", rc.URL, code))
			f.tap(id, "approve")
			dlv, attempts := f.waitState(id, "delivered", 5*time.Second)
			if cbNum(dlv["attempts"]) != 1 || cbNum(dlv["last_status_code"]) != code || len(attempts) != 1 || attempts[0]["error"] != "" {
				t.Errorf("delivery %v attempts %v, want delivered once with %d", dlv, attempts, code)
			}
		})
	}
	time.Sleep(3 * cfg.BackoffMax)
	if got := len(rc.Hits()); got != 5 {
		t.Errorf("receiver got %d requests, want 5 (one per message)", got)
	}
}

// TestCallbackSecretRotation: a retry after a rotation is signed with the
// new secret.
func TestCallbackSecretRotation(t *testing.T) {
	e := cbEnv(t)
	f := cbSetup(e, "cb-rotate@example.com")
	rotated := make(chan struct{})
	rc := cbNewReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 { // hold the first attempt until the secret has changed, then fail it
			cbHold(r, rotated)
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(200)
	})
	cbStartQueue(t, e.st, cbQueueConfig(), delivery.Options{})

	id := f.send(rc.URL)
	f.tap(id, "approve")
	rc.waitHits(t, 1, 5*time.Second)
	old := f.secret
	fresh := e.do(200, "POST", "/v1/channels/"+f.chID+"/secret/rotate", nil, f.token).Str("webhook_secret")
	close(rotated)
	if fresh == old || !strings.HasPrefix(fresh, "whsec_") {
		t.Fatalf("rotated secret %q (old %q)", fresh, old)
	}
	if got := e.do(200, "GET", "/v1/channels/"+f.chID+"/secret", nil, f.token).Str("webhook_secret"); got != fresh {
		t.Fatalf("secret after rotation = %q, want %q", got, fresh)
	}
	dlv, _ := f.waitState(id, "delivered", 5*time.Second)
	hits := rc.Hits()
	if len(hits) != 2 || cbNum(dlv["attempts"]) != 2 {
		t.Fatalf("%d requests, delivery %v; want 2", len(hits), dlv)
	}
	if err := cbVerify(hits[0], old); err != nil {
		t.Errorf("first attempt does not verify with the old secret: %v", err)
	}
	if err := cbVerify(hits[1], fresh); err != nil {
		t.Errorf("retry does not verify with the new secret: %v", err)
	}
	if err := cbVerify(hits[1], old); err == nil {
		t.Error("retry still verifies with the old secret")
	}
}

// TestCallbackBlockedNetwork: with the default policy, a callback to this
// host, however spelt, is refused at dial time: the receivers on loopback
// get nothing and the delivery fails without a status.
func TestCallbackBlockedNetwork(t *testing.T) {
	e := cbEnv(t)
	f := cbSetup(e, "cb-blocked@example.com")
	v4 := cbNewReceiver(t, cbStatus(200))
	port := func(rc *cbReceiver) int { return rc.Listener.Addr().(*net.TCPAddr).Port }
	receivers := []*cbReceiver{v4}
	urls := []string{
		fmt.Sprintf("http://127.0.0.1:%d/hook?token=query-secret", port(v4)),
		fmt.Sprintf("http://localhost:%d/hook", port(v4)),
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/hook", port(v4)),
	}
	if rc := cbNewReceiverOn(t, "127.0.0.2:0", cbStatus(200)); rc != nil {
		receivers = append(receivers, rc)
		urls = append(urls, fmt.Sprintf("http://127.0.0.2:%d/hook", port(rc)))
	}
	if rc := cbNewReceiverOn(t, "[::1]:0", cbStatus(200)); rc != nil {
		receivers = append(receivers, rc)
		urls = append(urls, fmt.Sprintf("http://[::1]:%d/hook", port(rc)))
	}
	cfg := cbQueueConfig()
	cfg.Guard, cfg.MaxAttempts = netguard.Policy{}, 2 // the default
	cbStartQueue(t, e.st, cfg, delivery.Options{})

	for _, url := range urls {
		t.Run(url, func(t *testing.T) {
			id := f.send(url)
			f.tap(id, "approve")
			dlv, attempts := f.waitState(id, "failed", 5*time.Second)
			if len(attempts) != 2 || dlv["last_status_code"] != nil {
				t.Fatalf("delivery %v attempts %v, want 2 attempts without a status", dlv, attempts)
			}
			// The log names the rule and the setting that would allow it.
			want := "is a loopback address; set delivery.allow_loopback = true to allow callbacks to this host"
			for _, a := range attempts {
				if got := fmt.Sprint(a["error"]); !strings.HasPrefix(got, "blocked: ") || !strings.Contains(got, want) {
					t.Errorf("error %q, want blocked: ... %s", got, want)
				}
			}
		})
	}
	// The unspecified addresses are never called, whatever the settings:
	// refused at send time.
	for _, url := range []string{fmt.Sprintf("http://0.0.0.0:%d/hook", port(v4)), fmt.Sprintf("http://[::]:%d/hook", port(v4))} {
		r := e.request("POST", "/v1/send/"+f.hook, map[string]any{"title": "Deploy?", "callback_url": url,
			"actions": []map[string]any{cbButton("approve")}}, "")
		wantError(t, r, 400, "invalid_payload")
		if msg := r.Str("message"); !strings.HasPrefix(msg, "callback_url is refused: ") || !strings.Contains(msg, "unspecified") {
			t.Errorf("%s: %q", url, msg)
		}
	}
	for _, rc := range receivers {
		if got := len(rc.Hits()); got != 0 {
			t.Errorf("receiver on %s got %d requests, want 0", rc.Listener.Addr(), got)
		}
	}
}

func TestCallbackDeliveriesEndpoint(t *testing.T) {
	e := cbEnv(t)
	f := cbSetup(e, "cb-log@example.com")
	rc := cbNewReceiver(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 1 {
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(200)
	})
	cbStartQueue(t, e.st, cbQueueConfig(), delivery.Options{})

	// No callback yet: no delivery.
	polling := f.send("")
	f.tap(polling, "approve")
	id := f.send(rc.URL)
	for _, m := range []string{polling, id} {
		r := e.do(200, "GET", "/v1/messages/"+m+"/deliveries", nil, f.token)
		cbWantKeys(t, "deliveries response", r.Body, "delivery", "deliveries")
		if r.Body["delivery"] != nil || !reflect.DeepEqual(r.Body["deliveries"], []any{}) {
			t.Errorf("deliveries of %s before a callback = %s, want delivery null and no attempts", m, r.Raw)
		}
		if got := e.do(200, "GET", "/v1/messages/"+m, nil, f.token).Body; got["delivery"] != nil {
			t.Errorf("message %s delivery = %v, want null", m, got["delivery"])
		}
	}

	f.tap(id, "approve")
	f.waitState(id, "delivered", 5*time.Second)
	r := e.do(200, "GET", "/v1/messages/"+id+"/deliveries", nil, f.token)
	cbWantKeys(t, "deliveries response", r.Body, "delivery", "deliveries")
	dlv := r.Body["delivery"].(map[string]any)
	cbWantKeys(t, "delivery", dlv, "state", "attempts", "last_status_code", "next_attempt_at")
	if dlv["state"] != "delivered" || cbNum(dlv["attempts"]) != 2 || cbNum(dlv["last_status_code"]) != 200 || dlv["next_attempt_at"] != nil {
		t.Errorf("delivery = %v", dlv)
	}
	list := r.Body["deliveries"].([]any)
	if len(list) != 2 {
		t.Fatalf("deliveries = %v, want 2 attempts", list)
	}
	var prev time.Time
	for i, want := range []struct {
		code int
		err  string
	}{{503, "503"}, {200, ""}} {
		a := list[i].(map[string]any)
		cbWantKeys(t, "attempt", a, "attempt", "at", "status_code", "error", "duration_ms", "event")
		if cbNum(a["attempt"]) != i+1 || cbNum(a["status_code"]) != want.code || cbNum(a["duration_ms"]) < 0 {
			t.Errorf("attempt %d = %v", i+1, a)
		}
		if msg, _ := a["error"].(string); (want.err == "") != (msg == "") || !strings.Contains(msg, want.err) {
			t.Errorf("attempt %d error %q, want one mentioning %q", i+1, msg, want.err)
		}
		at := cbTime(t, a["at"])
		if at.Before(prev) {
			t.Errorf("attempt %d at %s is before the previous one", i+1, at)
		}
		prev = at
	}

	// The message resource shows the same delivery, alone and in the list.
	if m := e.do(200, "GET", "/v1/messages/"+id, nil, f.token).Body; !reflect.DeepEqual(m["delivery"], r.Body["delivery"]) {
		t.Errorf("message delivery %v, deliveries endpoint %v", m["delivery"], r.Body["delivery"])
	}
	for _, m := range e.do(200, "GET", "/v1/messages?channel_id="+f.chID, nil, f.token).Body["messages"].([]any) {
		if m := m.(map[string]any); m["id"] == id && !reflect.DeepEqual(m["delivery"], r.Body["delivery"]) {
			t.Errorf("listed delivery %v, deliveries endpoint %v", m["delivery"], r.Body["delivery"])
		}
	}

	// Nobody else sees it.
	other := e.newUser("cb-log-other@example.com")
	wantError(t, e.request("GET", "/v1/messages/"+id+"/deliveries", nil, other.Token), 404, "not_found")
	wantError(t, e.request("GET", "/v1/messages/msg_doesnotexist000000000/deliveries", nil, f.token), 404, "not_found")
	wantError(t, e.request("GET", "/v1/messages/"+id+"/deliveries", nil, ""), 401, "invalid_token")
}

func TestCallbackRedeliver(t *testing.T) {
	e := cbEnv(t)
	f := cbSetup(e, "cb-redeliver@example.com")
	rc := cbNewReceiver(t, cbStatus(500))
	id := f.send(rc.URL)
	f.tap(id, "approve")
	redeliver := func(id, token string) response {
		return e.request("POST", "/v1/messages/"+id+"/redeliver", nil, token)
	}

	// No queue runs yet: the delivery is pending and cannot be replayed.
	wantError(t, redeliver(id, f.token), 400, "invalid_payload")
	polling := f.send("")
	f.tap(polling, "approve")
	wantError(t, redeliver(polling, f.token), 404, "not_found")
	other := e.newUser("cb-redeliver-other@example.com")
	wantError(t, redeliver(id, other.Token), 404, "not_found")
	wantError(t, redeliver(id, ""), 401, "invalid_token")

	cfg := cbQueueConfig()
	cfg.MaxAttempts = 3
	cbStartQueue(t, e.st, cfg, delivery.Options{})
	f.waitState(id, "failed", 5*time.Second)
	if got := f.poll(id).Str("status"); got != "failed" {
		t.Fatalf("poll status %q, want failed", got)
	}
	wantError(t, redeliver(id, other.Token), 404, "not_found")

	rc.setAnswer(cbStatus(200))
	r := e.do(200, "POST", "/v1/messages/"+id+"/redeliver", nil, f.token)
	if r.Body["ok"] != true {
		t.Errorf("redeliver = %s, want ok", r.Raw)
	}
	dlv, attempts := f.waitState(id, "delivered", 5*time.Second)
	if cbNum(dlv["attempts"]) != 1 || cbNum(dlv["last_status_code"]) != 200 {
		t.Errorf("delivery after redeliver = %v, want delivered at attempt 1", dlv)
	}
	var nums []int
	for _, a := range attempts {
		nums = append(nums, cbNum(a["attempt"]))
	}
	if !reflect.DeepEqual(nums, []int{1, 2, 3, 1}) {
		t.Errorf("attempt numbers %v, want [1 2 3 1]: the replay starts again at 1", nums)
	}
	hits := rc.Hits()
	if len(hits) != 4 {
		t.Fatalf("receiver got %d requests, want 4", len(hits))
	}
	last := hits[3]
	if !bytes.Equal(last.Body, hits[0].Body) || last.Header.Get("X-Service-Delivery") != hits[0].Header.Get("X-Service-Delivery") {
		t.Errorf("replay differs from the original: %s %s", last.Header.Get("X-Service-Delivery"), last.Body)
	}
	if err := cbVerify(last, f.secret); err != nil {
		t.Errorf("replay signature: %v", err)
	}
}

// TestCallbackOutbox: the response and its delivery job commit together, so
// a job exists before any queue runs and a queue started later sends it.
func TestCallbackOutbox(t *testing.T) {
	e := cbEnv(t)
	f := cbSetup(e, "cb-outbox@example.com")
	rc := cbNewReceiver(t, cbStatus(200))
	id := f.send(rc.URL)
	f.tap(id, "approve")
	// A second response is refused and queues nothing.
	wantError(t, e.request("POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "reject"}, f.token), 409, "already_responded")

	m := e.do(200, "GET", "/v1/messages/"+id, nil, f.token).Body
	dlv, _ := m["delivery"].(map[string]any)
	if dlv["state"] != "pending" || cbNum(dlv["attempts"]) != 0 || dlv["last_status_code"] != nil {
		t.Fatalf("delivery right after respond, no queue running = %v, want pending with 0 attempts", m["delivery"])
	}
	due := cbTime(t, dlv["next_attempt_at"])
	if d := time.Since(due); d < 0 || d > time.Minute {
		t.Errorf("next_attempt_at %s, want now", due)
	}
	if n, err := e.st.PendingDeliveries(context.Background()); err != nil || n != 1 {
		t.Fatalf("pending deliveries = %d, %v; want 1", n, err)
	}
	if got := len(rc.Hits()); got != 0 {
		t.Fatalf("receiver got %d requests with no queue running", got)
	}

	cbStartQueue(t, e.st, cbQueueConfig(), delivery.Options{})
	f.waitState(id, "delivered", 5*time.Second)
	time.Sleep(50 * time.Millisecond)
	if hits := rc.Hits(); len(hits) != 1 || !strings.Contains(string(hits[0].Body), `"triggered_by":"approve"`) {
		t.Errorf("receiver got %d requests, want the first response once", len(hits))
	}
}

// TestCallbackLatency is a sanity bound only; BenchmarkTapToCallback has
// the real figures.
func TestCallbackLatency(t *testing.T) {
	e := cbEnv(t)
	f := cbSetup(e, "cb-latency@example.com")
	rc := cbNewReceiver(t, cbStatus(200))
	cbStartQueue(t, e.st, cbQueueConfig(), delivery.Options{})
	var worst time.Duration
	for i := 1; i <= 5; i++ {
		id := f.send(rc.URL)
		start := time.Now()
		f.tap(id, "approve")
		hit := rc.waitHits(t, i, 5*time.Second)[i-1]
		if d := hit.At.Sub(start); d > worst {
			worst = d
		}
		f.waitState(id, "delivered", 5*time.Second) // idle again
	}
	if worst > 2*time.Second {
		t.Errorf("a callback arrived %s after the tap on an idle queue, want well under 2s", worst)
	}
	t.Logf("slowest tap-to-callback of 5: %s", worst)
}

// TestCallbackManyMessages: concurrent responses, several workers; each
// callback arrives exactly once (no crash, so no duplicate either).
func TestCallbackManyMessages(t *testing.T) {
	e := cbEnv(t)
	f := cbSetup(e, "cb-many@example.com")
	rc := cbNewReceiver(t, cbStatus(200))
	cbStartQueue(t, e.st, cbQueueConfig(), delivery.Options{})
	const n = 40
	ids := make([]string, n)
	for i := range ids {
		ids[i] = f.send(rc.URL)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, err := cbPost(e.srv.URL+"/v1/messages/"+id+"/respond", `{"action":"approve"}`, f.token); err != nil || code != 200 {
				errs <- fmt.Errorf("respond %s: %d %v", id, code, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rc.waitHits(t, n, 10*time.Second)
	// Every attempt recorded: no job is left to send anything more.
	deadline := time.Now().Add(10 * time.Second)
	for {
		pending, err := e.st.PendingDeliveries(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries still pending 10s after every callback arrived", pending)
		}
		time.Sleep(5 * time.Millisecond)
	}
	seen := map[string]int{}
	for _, h := range rc.Hits() {
		var b struct {
			MessageID string `json:"message_id"`
		}
		_ = json.Unmarshal(h.Body, &b)
		seen[b.MessageID]++
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Errorf("message %s delivered %d times, want once", id, seen[id])
		}
	}
}

// cbPost posts a JSON body with a bearer token; safe to call from any
// goroutine.
func cbPost(url, body, token string) (int, error) {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode, nil
}

// cbCall is one JSON request for the benchmark, which has no testEnv.
func cbCall(b *testing.B, method, url string, body any, token string, want int) map[string]any {
	b.Helper()
	buf, _ := json.Marshal(body)
	req, err := http.NewRequest(method, url, bytes.NewReader(buf))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		b.Fatalf("%s %s: %d %s, want %d", method, url, res.StatusCode, raw, want)
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// BenchmarkTapToCallback measures what a sender waits for: from the app's
// respond request to the signed callback arriving at the receiver, on an
// idle queue (one response at a time), over HTTP and a real SQLite file.
//
//	go test ./server/ -run '^$' -bench TapToCallback -benchtime 200x
func BenchmarkTapToCallback(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := cbConfig(b.TempDir())
	st, err := store.Open(ctx, filepath.Join(cfg.DataDir, "herald.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := New(Options{Config: cfg, Store: st, Logger: quiet, Version: "bench"})
	srv := httptest.NewServer(s.Handler())
	s.baseURL = srv.URL
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = runJobs(ctx, s) }()

	type arrival struct {
		id string
		at time.Time
	}
	arrivals := make(chan arrival, 1024)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		var body struct {
			MessageID string `json:"message_id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.WriteHeader(200)
		arrivals <- arrival{body.MessageID, at}
	}))
	qcfg := cbQueueConfig()
	qcfg.Workers = 8
	q := delivery.New(st, qcfg, delivery.Options{Logger: quiet})
	wg.Add(1)
	go func() { defer wg.Done(); _ = q.Run(ctx) }()
	defer func() {
		cancel()
		wg.Wait()
		rc.Close()
		srv.Close()
		st.Close()
	}()

	hash, err := auth.HashPassword(context.Background(), "bench-password")
	if err != nil {
		b.Fatal(err)
	}
	u := &store.User{Email: "bench@example.com", Name: "bench", Plan: "pro", PasswordHash: hash}
	if err := st.CreateUser(ctx, u); err != nil {
		b.Fatal(err)
	}
	token, _ := cbCall(b, "POST", srv.URL+"/v1/auth/local", map[string]string{"email": u.Email, "password": "bench-password"}, "", 200)["access_token"].(string)
	hook, _ := cbCall(b, "POST", srv.URL+"/v1/channels", map[string]string{"name": "bench"}, token, 201)["webhook_token"].(string)
	ids := make([]string, b.N)
	for i := range ids {
		ids[i], _ = cbCall(b, "POST", srv.URL+"/v1/send/"+hook, map[string]any{"title": "bench", "callback_url": rc.URL,
			"actions": []any{cbButton("approve")}}, "", 200)["id"].(string)
	}
	lat := make([]time.Duration, 0, b.N)

	b.ResetTimer()
	start := time.Now()
	for _, id := range ids {
		t0 := time.Now()
		cbCall(b, "POST", srv.URL+"/v1/messages/"+id+"/respond", map[string]string{"action": "approve"}, token, 200)
		for got := false; !got; {
			select {
			case a := <-arrivals:
				if a.id == id {
					lat = append(lat, a.at.Sub(t0))
					got = true
				}
			case <-time.After(10 * time.Second):
				b.Fatalf("no callback for %s within 10s", id)
			}
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()

	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "deliveries/s")
}

// TestCallbackDeliveryLogConsistent reads the log while a worker records
// attempts: the status and the list always come from the same moment.
func TestCallbackDeliveryLogConsistent(t *testing.T) {
	e := cbEnv(t)
	f := cbSetup(e, "cb-consistent@example.com")
	rc := cbNewReceiver(t, cbStatus(500))
	cfg := cbQueueConfig()
	cfg.BackoffBase, cfg.BackoffMax, cfg.MaxAttempts = time.Millisecond, 2*time.Millisecond, 40
	cbStartQueue(t, e.st, cfg, delivery.Options{})
	id := f.send(rc.URL)
	f.tap(id, "approve")
	for reads := 0; ; reads++ {
		dlv, attempts := f.log(id)
		if dlv == nil {
			t.Fatal("no delivery")
		}
		if got := cbNum(dlv["attempts"]); got != len(attempts) {
			t.Fatalf("read %d: delivery says %d attempts, the log lists %d", reads, got, len(attempts))
		}
		if dlv["state"] == "failed" {
			break
		}
	}
}
