package store

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSweepLeavesSendsUnharmed sweeps a large backlog of expired messages
// while senders keep sending: every send must succeed and stay stored, and
// none may wait for the whole sweep (as it did when a sweep was one
// statement in one transaction).
func TestSweepLeavesSendsUnharmed(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openFoundation(t, dsn, Options{})
		u := &User{Email: "sweep@example.com", Plan: "free"}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		old, live := &Channel{UserID: u.ID, Name: "old"}, &Channel{UserID: u.ID, Name: "live"}
		for _, c := range []*Channel{old, live} {
			if err := s.CreateChannel(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		const backlog = 5000
		fillChannel(t, s, old.ID, backlog) // created_at 1..n ms: long expired

		var sweepDone atomic.Bool
		var wg sync.WaitGroup
		var mu sync.Mutex
		var sent []string
		var longest time.Duration
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !sweepDone.Load() {
					start := time.Now()
					m := &Message{ChannelID: live.ID, Title: "during the sweep", Priority: "normal"}
					err := s.CreateMessage(ctx, m)
					took := time.Since(start)
					mu.Lock()
					if err != nil {
						t.Errorf("send during the sweep: %v", err)
					} else {
						sent = append(sent, m.ID)
					}
					longest = max(longest, took)
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
		}
		time.Sleep(20 * time.Millisecond) // the senders are under way
		start := time.Now()
		n, err := s.DeleteMessagesBefore(ctx, time.UnixMilli(backlog+1))
		sweepTook := time.Since(start)
		sweepDone.Store(true)
		wg.Wait()
		if err != nil || n != backlog {
			t.Fatalf("DeleteMessagesBefore = %d, %v; want %d", n, err, backlog)
		}
		if len(sent) < 10 {
			t.Fatalf("only %d sends during a %v sweep", len(sent), sweepTook)
		}
		// The sweep goes in batches, so no send waits for all of it.
		if longest > sweepTook/4 {
			t.Errorf("a send waited %v during a sweep of %v", longest, sweepTook)
		}
		for _, id := range sent {
			if _, err := s.Message(ctx, id); err != nil {
				t.Fatalf("a send during the sweep is missing: %v", err)
			}
		}
		if left, err := s.ListMessages(ctx, MessageQuery{ChannelID: old.ID, Limit: 1}); err != nil || left.Total != 0 {
			t.Fatalf("after the sweep the old channel holds %+v, %v", left, err)
		}
		t.Logf("swept %d messages in %v; %d sends meanwhile, the longest %v", n, sweepTook, len(sent), longest)
	})
}

// TestReclaimSpace: after a sweep the file gives its free pages back.
func TestReclaimSpace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openFoundation(t, filepath.Join(t.TempDir(), "herald.db"), Options{})
	u := &User{Email: "space@example.com", Plan: "free"}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	c := &Channel{UserID: u.ID, Name: "space"}
	if err := s.CreateChannel(ctx, c); err != nil {
		t.Fatal(err)
	}
	fillChannel(t, s, c.ID, 5000)
	if _, err := s.DeleteMessagesBefore(ctx, time.UnixMilli(1e6)); err != nil {
		t.Fatal(err)
	}
	// The search index's file too: a table dropped there leaves its pages.
	if _, err := s.search.ExecContext(ctx, `CREATE TABLE junk AS WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < 100)
		SELECT randomblob(4000) AS b FROM i; DROP TABLE junk`); err != nil {
		t.Fatal(err)
	}
	free := func(schema string) (n int64) {
		if err := s.read.QueryRowContext(ctx, "PRAGMA "+schema+".freelist_count").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before, index := free("main"), free("search")
	if before == 0 || index < 100 {
		t.Fatalf("%d free pages after deleting 5000 messages, %d in the search index", before, index)
	}
	pages, err := s.ReclaimSpace(ctx)
	if err != nil || pages < before+index {
		t.Fatalf("ReclaimSpace = %d, %v; %d + %d pages were free", pages, err, before, index)
	}
	if after, index := free("main"), free("search"); after != 0 || index != 0 {
		t.Fatalf("%d pages still free, %d in the search index", after, index)
	}
}
