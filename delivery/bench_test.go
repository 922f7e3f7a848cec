package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/store"
)

// The end-to-end figure (HTTP respond to callback) is
// server.BenchmarkTapToCallback; these measure the queue alone, from the
// commit of a response with its job to the callback arriving.
//
//	go test ./delivery/ -run '^$' -bench . -benchtime 200x

// benchSetup opens a store with one channel, a receiver that reports each
// arrival, and a running queue with workers workers.
func benchSetup(b *testing.B, workers int, start bool) (st *store.Store, channelID, url string, arrivals <-chan string, run func()) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "herald.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	u := &store.User{Email: "bench@example.com", Name: "bench", Plan: "pro"}
	if err := st.CreateUser(ctx, u); err != nil {
		b.Fatal(err)
	}
	ch := &store.Channel{UserID: u.ID, Name: "bench"}
	if err := st.CreateChannel(ctx, ch); err != nil {
		b.Fatal(err)
	}
	got := make(chan string, 1<<16)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			MessageID string `json:"message_id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.WriteHeader(204)
		got <- body.MessageID
	}))
	q := New(st, Config{Workers: workers, Timeout: 5 * time.Second, BackoffBase: 20 * time.Millisecond,
		BackoffMax: 80 * time.Millisecond, MaxAttempts: 8, UserAgent: "Herald-Webhooks/bench",
		Guard: netguard.Policy{AllowLoopback: true}},
		Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	done := make(chan struct{})
	started := false
	run = func() {
		started = true
		go func() { defer close(done); _ = q.Run(ctx) }()
	}
	if start {
		run()
	}
	b.Cleanup(func() {
		cancel()
		if started {
			<-done
		}
		rc.Close()
		st.Close()
	})
	return st, ch.ID, rc.URL, got, run
}

// benchMessages creates n messages calling back to url.
func benchMessages(b *testing.B, st *store.Store, channelID, url string, n int) []string {
	b.Helper()
	ids := make([]string, n)
	for i := range ids {
		m := &store.Message{ChannelID: channelID, Title: fmt.Sprint("bench ", i), Priority: "normal",
			Actions: json.RawMessage(`[{"type":"button","label":"OK","key":"ok"}]`), CallbackURL: &url}
		if err := st.CreateMessage(context.Background(), m); err != nil {
			b.Fatal(err)
		}
		ids[i] = m.ID
	}
	return ids
}

// benchRespond commits a response to id with its delivery job.
func benchRespond(b *testing.B, st *store.Store, channelID, url, id string) {
	body, _ := json.Marshal(map[string]any{"event": "response.received", "message_id": id, "channel_id": channelID,
		"triggered_by": "ok", "responses": map[string]any{}, "metadata": nil})
	if err := st.Respond(context.Background(), id, body, time.Now(),
		&store.NewDelivery{ChannelID: channelID, Event: "response.received", URL: url, Body: body}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCommitToCallback: one response at a time on an idle queue.
func BenchmarkCommitToCallback(b *testing.B) {
	st, channelID, url, arrivals, _ := benchSetup(b, 8, true)
	ids := benchMessages(b, st, channelID, url, b.N)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	start := time.Now()
	for _, id := range ids {
		t0 := time.Now()
		benchRespond(b, st, channelID, url, id)
		for got := ""; got != id; {
			select {
			case got = <-arrivals:
			case <-time.After(10 * time.Second):
				b.Fatalf("no callback for %s within 10s", id)
			}
		}
		lat = append(lat, time.Since(t0))
	}
	elapsed := time.Since(start)
	b.StopTimer()
	benchReportLatency(b, lat, elapsed)
}

// BenchmarkQueueDrain: b.N jobs committed while no queue runs (a backlog
// after a restart), then drained by 8 workers.
func BenchmarkQueueDrain(b *testing.B) {
	st, channelID, url, arrivals, run := benchSetup(b, 8, false)
	ids := benchMessages(b, st, channelID, url, b.N)
	for _, id := range ids {
		benchRespond(b, st, channelID, url, id)
	}
	b.ResetTimer()
	start := time.Now()
	run()
	seen := map[string]bool{}
	for len(seen) < len(ids) {
		select {
		case id := <-arrivals:
			seen[id] = true
		case <-time.After(10 * time.Second):
			b.Fatalf("%d of %d callbacks within 10s of the last one", len(seen), len(ids))
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(len(ids))/elapsed.Seconds(), "deliveries/s")
}

func benchReportLatency(b *testing.B, lat []time.Duration, elapsed time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "deliveries/s")
}
