package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/store"
)

func TestBackoff(t *testing.T) {
	const base, maxWait = time.Minute, time.Hour
	want := []time.Duration{
		1: time.Minute, 2: 2 * time.Minute, 3: 4 * time.Minute, 4: 8 * time.Minute, 5: 16 * time.Minute,
		6: 32 * time.Minute, 7: time.Hour, 8: time.Hour, 9: time.Hour, 10: time.Hour,
	}
	for n := 1; n <= 10; n++ {
		if got := Backoff(base, maxWait, n); got != want[n] {
			t.Errorf("Backoff(1m, 1h, %d) = %s, want %s", n, got, want[n])
		}
	}
	for _, tt := range []struct {
		base, max time.Duration
		n         int
		want      time.Duration
	}{
		{20 * time.Millisecond, 80 * time.Millisecond, 1, 20 * time.Millisecond},
		{20 * time.Millisecond, 80 * time.Millisecond, 3, 80 * time.Millisecond},
		{20 * time.Millisecond, 80 * time.Millisecond, 4, 80 * time.Millisecond},
		{time.Minute, time.Hour, 64, time.Hour},   // 2^63 overflows
		{time.Minute, time.Hour, 1000, time.Hour}, // and keeps overflowing
		{time.Hour, time.Minute, 1, time.Minute},  // a cap below the base still caps
		{time.Second, 90 * time.Second, 7, 64 * time.Second},
		{time.Second, 90 * time.Second, 8, 90 * time.Second}, // capped at max, not at a power of two
	} {
		if got := Backoff(tt.base, tt.max, tt.n); got != tt.want {
			t.Errorf("Backoff(%s, %s, %d) = %s, want %s", tt.base, tt.max, tt.n, got, tt.want)
		}
	}
}

// qtEnv is a store with one channel whose messages call back to a receiver.
type qtEnv struct {
	path    string
	st      *store.Store
	channel *store.Channel
}

func qtOpen(t *testing.T, path string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func newQTEnv(t *testing.T) *qtEnv {
	t.Helper()
	ctx := context.Background()
	e := &qtEnv{path: pgtest.Or(t, filepath.Join(t.TempDir(), "herald.db"))}
	e.st = qtOpen(t, e.path)
	t.Cleanup(func() { e.st.Close() })
	u := &store.User{Email: "queue@example.com", Name: "queue", Plan: "free"}
	if err := e.st.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	e.channel = &store.Channel{UserID: u.ID, Name: "jobs"}
	if err := e.st.CreateChannel(ctx, e.channel); err != nil {
		t.Fatal(err)
	}
	return e
}

// respond creates n messages calling back to url and responds to each, the
// way the server does: response and delivery job in one transaction.
func (e *qtEnv) respond(t *testing.T, url string, n int) []string {
	t.Helper()
	ctx := context.Background()
	ids := make([]string, n)
	for i := range ids {
		m := &store.Message{ChannelID: e.channel.ID, Title: fmt.Sprint("job ", i), Priority: "normal",
			Actions: json.RawMessage(`[{"type":"button","label":"OK","key":"ok"}]`), CallbackURL: &url}
		if err := e.st.CreateMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(map[string]any{"event": "response.received", "message_id": m.ID, "channel_id": m.ChannelID,
			"triggered_by": "ok", "responses": map[string]any{}, "metadata": nil})
		job := &store.NewDelivery{ChannelID: m.ChannelID, Event: "response.received", URL: url, Body: body}
		if err := e.st.Respond(ctx, m.ID, body, time.Now(), job); err != nil {
			t.Fatal(err)
		}
		ids[i] = m.ID
	}
	return ids
}

// qtReceiver counts the callbacks it accepted, per message.
type qtReceiver struct {
	*httptest.Server
	mu   sync.Mutex
	got  map[string]int
	hold time.Duration // how long each request takes
}

func newQTReceiver(t *testing.T, hold time.Duration) *qtReceiver {
	t.Helper()
	rc := &qtReceiver{got: map[string]int{}, hold: hold}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			MessageID string `json:"message_id"`
		}
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &b); err != nil || b.MessageID == "" {
			w.WriteHeader(400)
			return
		}
		select {
		case <-time.After(rc.hold):
		case <-r.Context().Done():
			return // the queue gave up on this one: not accepted
		}
		rc.mu.Lock()
		rc.got[b.MessageID]++
		rc.mu.Unlock()
		w.WriteHeader(200)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *qtReceiver) distinct() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
}

// qtWaitFor polls cond until it holds.
func qtWaitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, within, func() error {
		if !cond() {
			return errors.New(what)
		}
		return nil
	})
}

// qtRun starts a queue over st; stop cancels it and waits for Run to return.
func qtRun(t *testing.T, st *store.Store) (stop func()) {
	t.Helper()
	q := New(st, Config{Workers: 4, Timeout: 2 * time.Second, BackoffBase: 20 * time.Millisecond,
		BackoffMax: 80 * time.Millisecond, MaxAttempts: 8, UserAgent: "Herald-Webhooks/test",
		Guard: netguard.Policy{AllowLoopback: true}},
		Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return within 10s of its context ending")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// TestQueueCrashSafety stops queues part-way, twice, once also closing and
// re-opening the database: every job is still delivered, at least once.
func TestQueueCrashSafety(t *testing.T) {
	pgtest.SkipIfAll(t, "a start does not free claims there, since other replicas' claims are alive; a dead replica's come back after their lease (e2e/replicas_test.go)")
	e := newQTEnv(t)
	rc := newQTReceiver(t, 3*time.Millisecond)
	const n = 60
	ids := e.respond(t, rc.URL, n)

	stop := qtRun(t, e.st)
	qtWaitFor(t, 10*time.Second, "first queue delivers some", func() bool { return rc.distinct() >= n/4 })
	stop()
	first := rc.distinct()

	stop = qtRun(t, e.st)
	qtWaitFor(t, 10*time.Second, "second queue delivers more", func() bool { return rc.distinct() >= n/2 })
	stop()
	second := rc.distinct()

	// Close the database and open it again from the file.
	if err := e.st.Close(); err != nil {
		t.Fatal(err)
	}
	e.st = qtOpen(t, e.path)
	if pending, err := e.st.PendingDeliveries(context.Background()); err != nil || pending == 0 {
		t.Fatalf("after re-opening: %d pending, %v; want some left for the third queue", pending, err)
	}
	qtRun(t, e.st)
	qtWaitFor(t, 20*time.Second, "every job delivered", func() bool { return rc.distinct() == n })
	t.Logf("delivered after each stop: %d, %d, then %d of %d", first, second, rc.distinct(), n)

	qtWaitFor(t, 5*time.Second, "queue drained", func() bool {
		pending, err := e.st.PendingDeliveries(context.Background())
		return err == nil && pending == 0
	})
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, id := range ids {
		if rc.got[id] < 1 {
			t.Errorf("message %s was never delivered", id)
		}
		st, _, err := e.st.DeliveryLog(context.Background(), id)
		if err != nil || st == nil || st.State != store.DeliveryDelivered {
			t.Errorf("message %s delivery %+v, %v; want delivered", id, st, err)
		}
	}
}

// TestQueueReleasesDeadLeases: a job claimed by a worker that died (claimed,
// never recorded) goes out as soon as a queue starts, not when its lease
// runs out.
func TestQueueReleasesDeadLeases(t *testing.T) {
	pgtest.SkipIfAll(t, "a start does not free claims there, since other replicas' claims are alive; a dead replica's come back after their lease (e2e/replicas_test.go)")
	e := newQTEnv(t)
	rc := newQTReceiver(t, 0)
	ids := e.respond(t, rc.URL, 3)
	claimed, err := e.st.ClaimDeliveries(context.Background(), 10, time.Hour)
	if err != nil || len(claimed) != 3 {
		t.Fatalf("claimed %d, %v; want 3", len(claimed), err)
	}
	// Claimed jobs are not claimed twice, and the next one is due in an hour.
	if again, err := e.st.ClaimDeliveries(context.Background(), 10, time.Hour); err != nil || len(again) != 0 {
		t.Fatalf("claimed again: %d, %v; want none", len(again), err)
	}
	if next, ok, err := e.st.NextDeliveryAt(context.Background()); err != nil || !ok || time.Until(next) < 59*time.Minute {
		t.Fatalf("next delivery at %s (%v, %v), want after the lease", next, ok, err)
	}

	qtRun(t, e.st)
	qtWaitFor(t, 5*time.Second, "leased jobs delivered after a restart", func() bool { return rc.distinct() == len(ids) })
}

func TestLogURL(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://hooks.example.com/h/1?token=s3cret", "https://hooks.example.com/h/1"},
		{"http://user:pass@10.0.0.5:8080/cb#frag", "http://10.0.0.5:8080/cb"},
		{"http://[::1]:9/", "http://[::1]:9/"},
		{"http://%zz", "(invalid URL)"},
	} {
		if got := logURL(tt.in); got != tt.want {
			t.Errorf("logURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
