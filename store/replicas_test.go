package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/internal/testkit"
)

// Two stores on one PostgreSQL database are two replicas. These tests hold
// them to what one SQLite writer gives for free.

// replicaPair opens two stores on one new PostgreSQL database, with a user
// and a channel made through the first.
func replicaPair(t *testing.T) (a, b *Store, channelID string) {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	a = openFoundation(t, dsn, Options{})
	b = openFoundation(t, dsn, Options{})
	ctx := context.Background()
	u := &User{Email: "ops@example.com", Plan: "pro"}
	if err := a.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	ch := &Channel{UserID: u.ID, Name: "deploys"}
	if err := a.CreateChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	return a, b, ch.ID
}

// TestReplicasReadOnce: polls queued on both replicas at once, behind a
// held writer, and exactly one of them gets the response.
func TestReplicasReadOnce(t *testing.T) {
	t.Parallel()
	a, b, channelID := replicaPair(t)
	ctx := context.Background()
	m := &Message{ChannelID: channelID, Title: "Deploy?", Priority: "normal"}
	if err := a.CreateMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC()
	if err := b.Respond(ctx, m.ID, json.RawMessage(`{"action":"approve"}`), at, nil); err != nil {
		t.Fatal(err)
	}

	const n = 8
	release := holdWriter(t, a) // holds the writer lock: b's writer waits on it too
	polls := make([]Poll, 2*n)
	errs := make([]error, 2*n)
	var wg sync.WaitGroup
	for i := range 2 * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			polls[i], errs[i] = []*Store{a, b}[i%2].ReadResponse(ctx, channelID, m.ID, at.Add(-time.Minute))
		}()
	}
	waitQueued(t, a, n)
	waitQueued(t, b, n-1) // b's writer holds the first, waiting for the lock
	release()
	wg.Wait()

	got := 0
	for i, p := range polls {
		switch {
		case errs[i] != nil:
			t.Errorf("poll %d: %v", i, errs[i])
		case p.State == StateSubmitted:
			got++
		case p.State != StateAlreadyRead:
			t.Errorf("poll %d: %+v", i, p)
		}
	}
	if got != 1 {
		t.Errorf("%d of %d polls over two replicas got the response, want exactly 1", got, 2*n)
	}
}

// TestReplicasClaimOnce: two replicas claiming the same queue at once never
// get the same delivery.
func TestReplicasClaimOnce(t *testing.T) {
	t.Parallel()
	a, b, channelID := replicaPair(t)
	ctx := context.Background()
	const jobs = 60
	for i := range jobs {
		m := &Message{ChannelID: channelID, Title: fmt.Sprint("job ", i), Priority: "normal"}
		if err := a.CreateMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		cb := &NewDelivery{ChannelID: channelID, Event: "message.responded", URL: "https://example.com/hook", Body: []byte(`{}`)}
		if err := a.Respond(ctx, m.ID, json.RawMessage(`{"action":"ok"}`), time.Now(), cb); err != nil {
			t.Fatal(err)
		}
	}

	claimed := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, s := range []*Store{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ds, err := s.ClaimDeliveries(ctx, 3, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if len(ds) == 0 {
					return
				}
				mu.Lock()
				for _, d := range ds {
					claimed[d.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(claimed) != jobs {
		t.Errorf("%d deliveries claimed, want all %d", len(claimed), jobs)
	}
	for id, n := range claimed {
		if n != 1 {
			t.Errorf("delivery %s claimed %d times", id, n)
		}
	}
}

// TestReplicasWakeEachOther: a commit on one replica wakes the other's
// workers and live-stream feed (LISTEN/NOTIFY), with the rows readable.
func TestReplicasWakeEachOther(t *testing.T) {
	t.Parallel()
	a, b, channelID := replicaPair(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	horizons := make(chan int64, 64)
	go b.FollowEvents(ctx, func(n int64) { horizons <- n })
	start := <-horizons
	deliveries := b.Wakeup(TopicDeliveries)
	drain(deliveries)

	m := &Message{ChannelID: channelID, Title: "Deploy?", Priority: "normal"}
	if err := a.CreateMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, func() error {
		for {
			select {
			case n := <-horizons:
				if n > start {
					return nil
				}
			default:
				return errors.New("b's stream feed has not passed a's new event")
			}
		}
	})
	events, err := b.UserEventsBetween(ctx, mustOwner(t, b, channelID), start, 1<<62, 10)
	if err != nil || len(events) == 0 || events[0].MessageID != m.ID {
		t.Fatalf("b reads %v, %v after the wake-up; want the event of %s", events, err, m.ID)
	}

	cb := &NewDelivery{ChannelID: channelID, Event: "message.responded", URL: "https://example.com/hook", Body: []byte(`{}`)}
	if err := a.Respond(ctx, m.ID, json.RawMessage(`{"action":"ok"}`), time.Now(), cb); err != nil {
		t.Fatal(err)
	}
	select {
	case <-deliveries:
	case <-time.After(30 * time.Second):
		t.Fatal("b's delivery workers were not woken by a's queued callback")
	}
	if ds, err := b.ClaimDeliveries(ctx, 10, time.Minute); err != nil || len(ds) != 1 || ds[0].MessageID != m.ID {
		t.Fatalf("b claims %v, %v after the wake-up; want the callback of %s", ds, err, m.ID)
	}
}

func drain(c <-chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

func mustOwner(t *testing.T, s *Store, channelID string) string {
	t.Helper()
	var owner string
	if err := s.read.QueryRow("SELECT user_id FROM channels WHERE id = ?", channelID).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	return owner
}

// TestReplicasMigrateTogether: replicas started at once on an empty
// database apply each migration once, one after the other, and all start.
func TestReplicasMigrateTogether(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	const n = 4
	stores := make([]*Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = Open(context.Background(), dsn, Options{})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	first, last, files := migrationRange(t, stores[0])
	var rows, minV, maxV int
	if err := stores[0].read.QueryRow("SELECT count(*), min(version), max(version) FROM schema_migrations").Scan(&rows, &minV, &maxV); err != nil {
		t.Fatal(err)
	}
	if rows != files || minV != first || maxV != last {
		t.Errorf("schema_migrations after %d replicas started together: %d rows, %d..%d; want %d rows %d..%d", n, rows, minV, maxV, files, first, last)
	}
	u := &User{Email: "ops@example.com", Plan: "pro"}
	if err := stores[n-1].CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if got, err := stores[0].UserByEmail(context.Background(), "OPS@example.com"); err != nil || got.ID != u.ID {
		t.Errorf("a user made on one replica, read on another: %v, %v", got, err)
	}
}
