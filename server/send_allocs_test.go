package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// sendAllocBudget is how many heap allocations one send may make, from the
// request reaching the router to its durable commit (handler, auth lookup,
// decode, validation, the group-commit writer and its statement), measured
// on SQLite without the race detector. A change that adds allocations to the
// send path fails TestSendAllocBudget: lower the budget when a change saves
// some, and raise it only with the reason in the commit message.
const sendAllocBudget = 95

// TestSendAllocBudget counts the allocations of one send through the
// server's handler and the store. Allocation counts do not depend on the
// machine's speed or load, so unlike a timing this can run in CI. The
// background jobs (search indexer, push, sweeps) do not run: their work
// happens after the answer and in batches, and would make the count depend
// on timing.
func TestSendAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own; .ci/run runs this test without -race")
	}
	if testing.Short() {
		t.Skip("short")
	}
	dir := t.TempDir()
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.LogLevel = "warn"
	testkit.UnlimitedPlans(&cfg)
	st, err := store.Open(context.Background(), filepath.Join(dir, "herald.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	subs, err := service.NewSubscriptions(cfg.Subscriptions, &http.Client{Timeout: 10 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Config: cfg, Store: st, Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Version: "test", Subscriptions: subs, StreamBuffer: streamTestBuffer})
	h := s.Handler()
	u := &store.User{Email: "allocs@example.com", Name: "Allocs", Plan: config.PlanPro}
	if err := st.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	ch := &store.Channel{UserID: u.ID, Name: "Allocs"}
	if err := st.CreateChannel(context.Background(), ch); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"title":"Load test","body":"**bold** message body of a realistic length for a homelab alert","priority":"high"}`)
	send := func() {
		req := httptest.NewRequest("POST", "/v1/send/"+ch.WebhookToken, bytes.NewReader(body))
		req.RemoteAddr = "127.0.0.1:40000"
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("send: %d %s", rec.Code, rec.Body)
		}
	}
	for range 50 { // the token cache, the prepared statements, the pools
		send()
	}
	got := testing.AllocsPerRun(200, send)
	t.Logf("%.1f allocations per send (budget %d)", got, sendAllocBudget)
	if got > sendAllocBudget {
		t.Errorf("a send makes %.1f allocations; the budget is %d. Find what the change allocates (go test -run TestSendAllocBudget -memprofile), or raise sendAllocBudget with the reason.", got, sendAllocBudget)
	}
}
