package server

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/internal/testkit"
)

// TestRateLimitSharedByReplicas: two servers on one PostgreSQL database
// (replicas) spend a channel's tokens together: the Free plan's 5 sends a
// minute hold for the channel, not for each server.
func TestRateLimitSharedByReplicas(t *testing.T) {
	dir := t.TempDir()
	dsns.Store(filepath.Join(dir, "herald.db"), pgtest.NewDatabase(t))
	clk := testkit.NewClock()
	a, _ := openTestEnv(t, dir, clk, msgFreeSend5)
	b, _ := openTestEnv(t, dir, clk, msgFreeSend5)
	u := a.newUser("ann@example.com")
	_, token := msgChannel(a, u, "one")
	for i := range 5 {
		r := []*testEnv{a, b}[i%2].do(200, "POST", "/v1/send/"+token, msgPayload(), "")
		msgWantLimitHeaders(t, r, 5, 4-i)
	}
	msgWantRateLimited(t, a.request("POST", "/v1/send/"+token, msgPayload(), ""), 5)
	msgWantRateLimited(t, b.request("POST", "/v1/send/"+token, msgPayload(), ""), 5)
}

// failingLimits are shared buckets whose database does not answer.
type failingLimits struct{ takes atomic.Int32 }

func (f *failingLimits) TakeRateToken(context.Context, string, int) (float64, bool, error) {
	f.takes.Add(1)
	return 0, false, errors.New("connection refused")
}

func (f *failingLimits) SweepRateBuckets(context.Context) (int64, error) { return 0, nil }

// TestRateLimitSharedFailing: while the shared buckets do not answer, the
// server's own bucket decides, and the log says so: the limit still holds.
func TestRateLimitSharedFailing(t *testing.T) {
	env := newTestEnv(t, msgFreeSend5)
	u := env.newUser("ann@example.com")
	_, token := msgChannel(env, u, "one")

	shared := &failingLimits{}
	logs := &lockedWriter{w: &bytes.Buffer{}}
	s := New(Options{Config: env.cfg, Store: env.st, Now: env.clock.Now, Version: "test", SharedLimits: shared,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	send := func() response {
		return testkit.Do(t, srv.Client(), "POST", srv.URL+"/v1/send/"+token, msgPayload(), "")
	}
	for i := range 5 {
		r := send()
		if r.Status != 200 {
			t.Fatalf("send %d: %d %s", i, r.Status, r.Raw)
		}
		msgWantLimitHeaders(t, r, 5, 4-i)
	}
	msgWantRateLimited(t, send(), 5)
	if n := shared.takes.Load(); n != 6 {
		t.Errorf("shared buckets asked %d times, want 6", n)
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if got := logs.w.(*bytes.Buffer).String(); !strings.Contains(got, "shared rate limit unavailable") {
		t.Errorf("log does not say the shared limit failed:\n%s", got)
	}
}
