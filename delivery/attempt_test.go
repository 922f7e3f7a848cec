package delivery

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/store"
)

// lockedBuffer is a log destination the workers and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// atEnv is a store on a test clock with one message whose response queued
// a callback to url.
func atEnv(t *testing.T, clk *testkit.Clock, url string) (st *store.Store, path, msgID string) {
	t.Helper()
	ctx := context.Background()
	path = pgtest.Or(t, filepath.Join(t.TempDir(), "herald.db"))
	st, err := store.Open(ctx, path, store.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	u := &store.User{Email: "attempt@example.com", Plan: "free"}
	if err := st.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	ch := &store.Channel{UserID: u.ID, Name: "jobs"}
	if err := st.CreateChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	m := &store.Message{ChannelID: ch.ID, Title: "job", Priority: "normal",
		Actions: json.RawMessage(`[{"type":"button","label":"OK","key":"ok"}]`), CallbackURL: &url}
	if err := st.CreateMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"event": "response.received", "message_id": m.ID})
	if err := st.Respond(ctx, m.ID, body, clk.Now(), &store.NewDelivery{ChannelID: ch.ID, Event: "response.received", URL: url, Body: body}); err != nil {
		t.Fatal(err)
	}
	return st, path, m.ID
}

// atRun runs a queue until the test ends; stop ends it early.
func atRun(t *testing.T, st *store.Store, cfg Config, opts Options) (stop func()) {
	t.Helper()
	q := New(st, cfg, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// atWaitAttempts waits until n attempts of msgID are logged.
func atWaitAttempts(t *testing.T, st *store.Store, msgID string, n int) (*store.DeliveryStatus, []store.Attempt) {
	t.Helper()
	var d *store.DeliveryStatus
	var as []store.Attempt
	qtWaitFor(t, 10*time.Second, fmt.Sprintf("attempt %d logged", n), func() bool {
		var err error
		d, as, err = st.DeliveryLog(context.Background(), msgID)
		if err != nil {
			t.Fatal(err)
		}
		return len(as) >= n
	})
	return d, as
}

// TestQueueAttempts follows one callback through two failures and a
// success on a clock that only the test moves: each attempt is numbered,
// claimed with a lease of twice the timeout plus 30 s, and retried after
// the backoff for its number; the queue logs to the logger it was given.
// A zero worker count still means one worker.
func TestQueueAttempts(t *testing.T) {
	clk := testkit.NewClockAt(time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC))
	var hits atomic.Int32
	var path string
	leases := make(chan time.Time, 8)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		driver := "sqlite"
		if store.IsPostgresURL(path) {
			driver = "pgx"
		}
		db, err := sql.Open(driver, path)
		if err == nil {
			var ms int64
			if db.QueryRow("SELECT lease_until FROM deliveries").Scan(&ms) == nil {
				leases <- time.UnixMilli(ms).UTC()
			}
			db.Close()
		}
		if hits.Add(1) <= 2 {
			w.WriteHeader(500)
			return
		}
		w.WriteHeader(204)
	}))
	defer rc.Close()
	st, p, id := atEnv(t, clk, rc.URL+"/hook")
	path = p
	logs := &lockedBuffer{}
	cfg := Config{Workers: 0, Timeout: 5 * time.Second, BackoffBase: time.Minute, BackoffMax: time.Hour, MaxAttempts: 5,
		UserAgent: "Herald-Webhooks/test", Guard: netguard.Policy{AllowLoopback: true}}
	atRun(t, st, cfg, Options{Now: clk.Now, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})

	lease := 2*cfg.Timeout + 30*time.Second
	for n, wait := range []time.Duration{time.Minute, 2 * time.Minute} {
		d, as := atWaitAttempts(t, st, id, n+1)
		if len(as) != n+1 || as[n].Attempt != n+1 || as[n].StatusCode == nil || *as[n].StatusCode != 500 {
			t.Fatalf("after failure %d: attempts %+v", n+1, as)
		}
		if d.State != store.DeliveryPending || d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(clk.Now().Add(wait)) {
			t.Fatalf("after failure %d: %+v (next %v), want pending and due %s later", n+1, d, d.NextAttemptAt, wait)
		}
		if got := <-leases; !got.Equal(clk.Now().Add(lease)) {
			t.Errorf("attempt %d ran under a lease until %s, want %s (now + %s)", n+1, got, clk.Now().Add(lease), lease)
		}
		clk.Advance(wait)
		st.Poke(store.TopicDeliveries) // the queue sleeps on the real clock: wake it
	}
	d, as := atWaitAttempts(t, st, id, 3)
	if d.State != store.DeliveryDelivered || len(as) != 3 || *as[2].StatusCode != 204 {
		t.Errorf("after the success: %+v, attempts %+v", d, as)
	}
	qtWaitFor(t, 10*time.Second, "the delivery logged", func() bool { return strings.Contains(logs.String(), "delivery: delivered") })
	if got := logs.String(); strings.Count(got, "attempt failed, will retry") != 2 || strings.Contains(got, "level=ERROR") {
		t.Errorf("queue log:\n%s\nwant two retries and no error", got)
	}
}

// TestQueueShutdownDuringAttempt: an attempt cut short by the shutdown is
// not counted; the job stays pending for the next start.
func TestQueueShutdownDuringAttempt(t *testing.T) {
	clk := testkit.NewClockAt(time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC))
	inHand := make(chan struct{}, 1)
	var requests atomic.Int32
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		// Read the body: only then does the server notice a closed
		// connection and end r.Context().
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case inHand <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	defer rc.Close()
	st, _, id := atEnv(t, clk, rc.URL+"/hook")
	stop := atRun(t, st, Config{Workers: 1, Timeout: time.Minute, BackoffBase: time.Second, BackoffMax: time.Minute, MaxAttempts: 5,
		Guard: netguard.Policy{AllowLoopback: true}}, Options{Now: clk.Now, Logger: slog.New(slog.DiscardHandler)})
	select {
	case <-inHand:
	case <-time.After(10 * time.Second):
		t.Fatal("the callback did not arrive within 10s")
	}
	stop()
	if n := requests.Load(); n != 1 {
		t.Errorf("the receiver got %d requests, want 1", n)
	}
	d, as, err := st.DeliveryLog(context.Background(), id)
	if err != nil || d.State != store.DeliveryPending || d.Attempts != 0 || len(as) != 0 {
		t.Errorf("after a shutdown mid-attempt: %+v, %d attempts logged, %v; want pending with none", d, len(as), err)
	}
}

// TestQueueTransport: the guarded transport refuses loopback by default; a
// transport given in Options replaces it.
func TestQueueTransport(t *testing.T) {
	for _, tc := range []struct {
		name      string
		transport http.RoundTripper
		state     string
		errText   string
	}{
		{"guarded", nil, store.DeliveryPending, "blocked: 127.0.0.1 is a loopback address; set delivery.allow_loopback = true to allow callbacks to this host"},
		{"replaced", &http.Transport{}, store.DeliveryDelivered, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testkit.NewClockAt(time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC))
			rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) }))
			defer rc.Close()
			st, _, id := atEnv(t, clk, rc.URL+"/hook")
			atRun(t, st, Config{Workers: 1, Timeout: 5 * time.Second, BackoffBase: time.Minute, BackoffMax: time.Hour, MaxAttempts: 5},
				Options{Now: clk.Now, Logger: slog.New(slog.DiscardHandler), Transport: tc.transport})
			d, as := atWaitAttempts(t, st, id, 1)
			if d.State != tc.state || as[0].Error != tc.errText {
				t.Errorf("delivery %+v, attempt %+v; want %s with error %q", d, as[0], tc.state, tc.errText)
			}
		})
	}
}
