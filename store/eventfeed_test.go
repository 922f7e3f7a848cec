package store

import (
	"context"
	"database/sql"
	"testing"
	"time"
)

// TestFollowEventsWithoutAReader: on SQLite the writer reads the event
// horizon inside the transaction that wrote the events, so the live stream
// hub's feed reports each commit without a reader, whose first read after
// a commit starts a new snapshot and reads its pages from the file again.
// Here every reader is taken, and the feed still reports each send.
func TestFollowEventsWithoutAReader(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newSearchFixture(t, Options{})
	horizons := make(chan int64, 64)
	go f.s.FollowEvents(ctx, func(n int64) { horizons <- n })
	start := <-horizons

	var taken []*sql.Conn
	for range f.s.read.Stats().MaxOpenConnections {
		c, err := f.s.read.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		taken = append(taken, c)
	}
	for i := range 3 {
		if err := f.s.CreateMessage(ctx, &Message{ChannelID: f.ch.ID, Title: "Backup finished", Priority: "normal"}); err != nil {
			t.Fatal(err)
		}
		select {
		case n := <-horizons:
			if want := start + int64(i) + 1; n != want {
				t.Fatalf("after send %d the feed reports %d, want %d", i+1, n, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the feed reported nothing after send %d with every reader taken", i+1)
		}
	}
	for _, c := range taken {
		c.Close()
	}
	n, err := f.s.EventHorizon(ctx)
	if err != nil || n != start+3 {
		t.Fatalf("EventHorizon = %d, %v; want %d", n, err, start+3)
	}
}
