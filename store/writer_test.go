package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// fillChannel gives a channel n messages in one write, to make deleting it
// a slow statement.
func fillChannel(t *testing.T, s *Store, channelID string, n int) {
	t.Helper()
	err := s.update(context.Background(), func(tx *writeTx) error {
		q := `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
			INSERT INTO messages (id, channel_id, title, body, priority, actions, callback_url, muted, state, created_at)
			SELECT printf('msg_fill%s_%08d', ?, i), ?, 'filler', 'body', 'normal', '[]', '', 1, 'pending', i FROM seq`
		if onPostgres(s) {
			q = `INSERT INTO messages (id, channel_id, title, body, priority, actions, callback_url, muted, state, created_at)
			SELECT 'msg_fill' || ?2 || '_' || lpad(i::text, 8, '0'), ?3, 'filler', 'body', 'normal', '[]', '', 1, 'pending', i
			FROM generate_series(1, ?1::int) AS seq(i)`
		}
		_, err := tx.Exec(q, n, channelID, channelID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// holdBatch starts a batch whose first write blocks until release is
// called, so that writes submitted meanwhile join that batch. Unlike
// holdWriter, release returns at once; the holding write's outcome arrives
// on done once the batch has ended.
func holdBatch(t *testing.T, s *Store) (release func(), done <-chan error) {
	t.Helper()
	started, stop := make(chan struct{}), make(chan struct{})
	out := make(chan error, 1)
	go func() {
		out <- s.update(context.Background(), func(*writeTx) error {
			close(started)
			<-stop
			return nil
		})
	}()
	<-started
	return func() { close(stop) }, out
}

// writeOutcome is what one caller was told and what the database holds.
type writeOutcome struct {
	name string
	err  error
}

// TestCancelledWriteHarmsNoOther cancels a slow write (deleting a channel
// with many messages) while it runs inside a batch, with other callers'
// writes before and after it in the same batch. No other caller may fail,
// and what each caller was told must match what is stored.
func TestCancelledWriteHarmsNoOther(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openFoundation(t, dsn, Options{})
		owner := &User{Email: "owner@example.com", Plan: "free"}
		if err := s.CreateUser(ctx, owner); err != nil {
			t.Fatal(err)
		}
		for round, after := range []time.Duration{0, time.Millisecond, 4 * time.Millisecond, 10 * time.Millisecond} {
			ch := &Channel{UserID: owner.ID, Name: fmt.Sprintf("big %d", round)}
			if err := s.CreateChannel(ctx, ch); err != nil {
				t.Fatal(err)
			}
			fillChannel(t, s, ch.ID, 3000)

			release, held := holdBatch(t, s)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var innocent []writeOutcome
			queued := 0
			innocentWrite := func(i int) {
				queued++
				wg.Add(1)
				go func() {
					defer wg.Done()
					email := fmt.Sprintf("r%d-u%d@example.com", round, i)
					err := s.CreateUser(ctx, &User{Email: email, Plan: "free"})
					mu.Lock()
					innocent = append(innocent, writeOutcome{email, err})
					mu.Unlock()
				}()
			}
			for i := range 10 {
				innocentWrite(i)
			}
			waitQueued(t, s, queued)
			dctx, cancel := context.WithCancel(ctx)
			var delErr error
			queued++
			wg.Add(1)
			go func() { defer wg.Done(); delErr = s.DeleteChannel(dctx, owner.ID, ch.ID) }()
			waitQueued(t, s, queued)
			for i := 10; i < 20; i++ {
				innocentWrite(i)
			}
			waitQueued(t, s, queued)
			release()
			time.Sleep(after)
			cancel()
			wg.Wait()
			if err := <-held; err != nil {
				t.Errorf("round %d: the holding write failed: %v", round, err)
			}

			for _, o := range innocent {
				if o.err != nil {
					t.Errorf("round %d: innocent write %s failed: %v", round, o.name, o.err)
				}
				if _, err := s.UserByEmail(ctx, o.name); err != nil {
					t.Errorf("round %d: %s told %v, but reading it back: %v", round, o.name, o.err, err)
				}
			}
			_, err := s.ChannelByID(ctx, ch.ID)
			switch {
			case delErr == nil && !errors.Is(err, ErrNotFound):
				t.Errorf("round %d: delete succeeded but the channel is still there (%v)", round, err)
			case delErr != nil && err != nil:
				t.Errorf("round %d: delete failed (%v) but the channel is gone (%v)", round, delErr, err)
			case delErr != nil && !errors.Is(delErr, context.Canceled):
				t.Errorf("round %d: delete failed with %v, want context.Canceled or success", round, delErr)
			}
		}
	})
}

// TestRolledBackBatchFailsWhole makes SQLite roll back a batch's
// transaction by itself (a ROLLBACK conflict clause, as an interrupt, an
// I/O error or a full disk would): every write in the batch must then fail,
// none may run on outside the transaction, and each caller's answer must
// match what is stored.
func TestRolledBackBatchFailsWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openFoundation(t, filepath.Join(t.TempDir(), "herald.db"), Options{})
	if err := s.CreateUser(ctx, &User{Email: "taken@example.com", Plan: "free"}); err != nil {
		t.Fatal(err)
	}
	for _, single := range []bool{true, false} {
		t.Run(fmt.Sprintf("single=%v", single), func(t *testing.T) {
			release, held := holdBatch(t, s)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var outcomes []writeOutcome
			queued := 0
			write := func(email string) {
				queued++
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := s.CreateUser(ctx, &User{Email: email, Plan: "free"})
					mu.Lock()
					outcomes = append(outcomes, writeOutcome{email, err})
					mu.Unlock()
				}()
				waitQueued(t, s, queued)
			}
			for i := range 5 {
				write(fmt.Sprintf("before%d-%v@example.com", i, single))
			}
			// One statement whose conflict clause rolls back the whole
			// transaction.
			var culpritErr error
			queued++
			wg.Add(1)
			go func() {
				defer wg.Done()
				submit := s.update
				if single {
					submit = s.updateStatement
				}
				culpritErr = submit(ctx, func(tx *writeTx) error {
					_, err := tx.Exec(`INSERT OR ROLLBACK INTO users (id, email, plan, created_at)
						SELECT 'usr_dup', email, plan, 0 FROM users WHERE email = 'taken@example.com'
						UNION ALL SELECT 'usr_dup', 'dup@example.com', 'free', 0`)
					return err
				})
			}()
			waitQueued(t, s, queued)
			for i := range 5 {
				write(fmt.Sprintf("after%d-%v@example.com", i, single))
			}
			release()
			wg.Wait()
			holdErr := <-held

			if holdErr == nil {
				t.Error("the holding write in the rolled-back batch was told it succeeded")
			}
			if culpritErr == nil {
				t.Fatal("the rolling-back write succeeded")
			}
			for _, o := range outcomes {
				_, err := s.UserByEmail(ctx, o.name)
				stored := err == nil
				if o.err == nil && !stored {
					t.Errorf("%s: told success, but it is not stored (%v)", o.name, err)
				}
				if o.err != nil && stored {
					t.Errorf("%s: told %v, but it was committed", o.name, o.err)
				}
			}
			// The writer still works after a rolled-back batch.
			if err := s.CreateUser(ctx, &User{Email: fmt.Sprintf("later-%v@example.com", single), Plan: "free"}); err != nil {
				t.Fatalf("write after the rolled-back batch: %v", err)
			}
		})
	}
}

// TestFailedSingleWriteHarmsNoOther: single-statement writes (a send) share
// a batch without savepoints of their own on SQLite, and open theirs in the
// same round trip on PostgreSQL. One that fails (its channel is gone) gets
// its error; the writes before and after it in the batch commit.
func TestFailedSingleWriteHarmsNoOther(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openFoundation(t, dsn, Options{})
		u := &User{Email: "ops@example.com", Plan: "pro"}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		ch := &Channel{UserID: u.ID, Name: "deploys"}
		if err := s.CreateChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}

		release := holdWriter(t, s)
		const n = 20
		msgs := make([]*Message, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			channel := ch.ID
			if i%5 == 2 {
				channel = "ch_gone" // no such channel: the insert fails its foreign key
			}
			msgs[i] = &Message{ChannelID: channel, Title: fmt.Sprint("m", i), Priority: "normal"}
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = s.CreateMessage(ctx, msgs[i]) }()
			waitQueued(t, s, i+1) // queued in this order
		}
		release()
		wg.Wait()

		for i, err := range errs {
			bad := i%5 == 2
			switch {
			case bad && !errors.Is(err, ErrNotFound):
				t.Errorf("send %d to a missing channel: %v, want ErrNotFound", i, err)
			case !bad && err != nil:
				t.Errorf("send %d, in a batch with failed sends: %v", i, err)
			}
		}
		var stored int
		if err := s.read.QueryRow("SELECT count(*) FROM messages WHERE channel_id = ?", ch.ID).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if want := n - n/5; stored != want {
			t.Errorf("%d messages stored, want the %d good ones", stored, want)
		}
		var events int
		if err := s.read.QueryRow("SELECT count(*) FROM events WHERE channel_id = ?", ch.ID).Scan(&events); err != nil {
			t.Fatal(err)
		}
		if events != n-n/5 {
			t.Errorf("%d events recorded, want one per stored message (%d)", events, n-n/5)
		}
	})
}

// TestSQLiteRolledBackBatchSaysWhy: when one write's error makes SQLite
// roll the whole transaction back (here a conflict clause, which only
// SQLite has), that write gets its own error, and every other write of the
// batch an error that says the batch was rolled back and by what.
func TestSQLiteRolledBackBatchSaysWhy(t *testing.T) {
	ctx := context.Background()
	s := openFoundation(t, filepath.Join(t.TempDir(), "herald.db"), Options{})
	if err := s.CreateUser(ctx, &User{Email: "taken@example.com", Plan: "free"}); err != nil {
		t.Fatal(err)
	}
	release, held := holdBatch(t, s)
	culprit := make(chan error, 1)
	go func() {
		culprit <- s.update(ctx, func(tx *writeTx) error {
			_, err := tx.Exec(`INSERT OR ROLLBACK INTO users (id, email, plan, created_at)
				SELECT 'usr_dup', email, plan, 0 FROM users WHERE email = 'taken@example.com'`)
			return err
		})
	}()
	waitQueued(t, s, 1)
	release()
	if err := <-culprit; !isUnique(err) {
		t.Errorf("the rolling-back write was told %v, want its own UNIQUE violation", err)
	}
	err := <-held
	if !errors.Is(err, errRolledBack) || !isUnique(err) {
		t.Errorf("another write of the batch was told %v, want the rollback and its cause", err)
	}
}
