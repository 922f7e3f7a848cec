package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/heraldhq/herald/internal/pgtest"
)

// rowsFixture is a user with two channels on an empty database.
type rowsFixture struct {
	s      *Store
	user   *User
	kept   *Channel
	doomed *Channel // deleted by the tests
}

func newRowsFixture(t *testing.T, dsn string) *rowsFixture {
	t.Helper()
	ctx := context.Background()
	f := &rowsFixture{s: openFoundation(t, dsn, Options{}), user: &User{Email: "ann@example.com", Plan: "free"}}
	if err := f.s.CreateUser(ctx, f.user); err != nil {
		t.Fatal(err)
	}
	f.kept = &Channel{UserID: f.user.ID, Name: "kept"}
	f.doomed = &Channel{UserID: f.user.ID, Name: "doomed"}
	for _, c := range []*Channel{f.kept, f.doomed} {
		if err := f.s.CreateChannel(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// rowReq is a send of a message titled title to ch as the writer gets it:
// a row of insertMessages, whose fn inserts the same row alone.
func rowReq(ctx context.Context, s *Store, ch *Channel, title string) *writeReq {
	now := s.now()
	args := []any{NewSortableID("msg_", now), ch.ID, title, "", "normal", "[]", nil, false, nil, StatePending, ms(now), nil,
		nil, nil, nil, false, false}
	return &writeReq{ctx: ctx, single: true, row: &rowWrite{ins: insertMessages, args: args},
		fn: func(tx *writeTx) error { _, err := tx.ExecStmt(s.st.insertMessage, args...); return err }}
}

// rowsBatch runs sends to channels, in order, in one transaction of the
// writer, with the runner that runner makes on it; it returns their errors
// and what measure reads before the commit.
func (f *rowsFixture) rowsBatch(t *testing.T, channels []*Channel,
	runner func(tx *writeTx) (run func(*writeReq, *error) error, flush func() error), measure func(*tx) int) ([]error, int) {
	t.Helper()
	ctx := context.Background()
	sqlTx, err := f.s.write.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sqlTx.Rollback()
	run, flush := runner(&writeTx{tx: sqlTx, texts: f.s.st.texts})
	errs := make([]error, len(channels))
	for i, ch := range channels {
		if err := run(rowReq(ctx, f.s, ch, fmt.Sprint(i)), &errs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := flush(); err != nil {
		t.Fatal(err)
	}
	n := measure(sqlTx)
	if err := sqlTx.Commit(); err != nil {
		t.Fatal(err)
	}
	return errs, n
}

// count is how many messages ch holds.
func (f *rowsFixture) count(t *testing.T, ch *Channel) int {
	t.Helper()
	var n int
	if err := f.s.read.QueryRow("SELECT COUNT(*) FROM messages WHERE channel_id = ?", ch.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// stored is the titles of a channel's messages, oldest first, and of the
// owner's stream events in order.
func (f *rowsFixture) stored(t *testing.T, ch *Channel) (titles, events []string) {
	t.Helper()
	ctx := context.Background()
	page, err := f.s.ListMessages(ctx, MessageQuery{UserID: f.user.ID, ChannelID: ch.ID, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]string{}
	for _, m := range slices.Backward(page.Messages) {
		titles = append(titles, m.Title)
		byID[m.ID] = m.Title
	}
	evs, err := f.s.EventsAfter(ctx, f.user.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if title, ok := byID[e.MessageID]; ok && e.Type == "message.created" {
			events = append(events, title)
		}
	}
	return titles, events
}

// TestSendsInOneBatch: sends that the writer commits together, with
// another write between them, sends to a channel deleted earlier in the
// batch and callers that gave up while queued: each send gets its own
// answer, and what is stored is in the order the writes came, messages
// and stream events alike. On PostgreSQL the writer inserts the sends
// between two other writes with one statement (pgrows.go), and when that
// statement fails, each send again on its own.
func TestSendsInOneBatch(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		f := newRowsFixture(t, dsn)

		release := holdWriter(t, f.s)
		var wg sync.WaitGroup
		queued := 0
		errs := map[string]error{}
		var mu sync.Mutex
		// In order: each write is queued before the next starts.
		send := func(ctx context.Context, ch *Channel, title string) {
			queued++
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := f.s.CreateMessage(ctx, &Message{ChannelID: ch.ID, Title: title, Priority: "normal"})
				mu.Lock()
				errs[title] = err
				mu.Unlock()
			}()
			waitQueued(t, f.s, queued)
		}
		var want []string
		gaveUp, cancel := context.WithCancel(ctx)
		for i := range 10 {
			title := fmt.Sprintf("a%02d", i)
			if i == 5 {
				send(gaveUp, f.kept, title)
				continue
			}
			send(ctx, f.kept, title)
			want = append(want, title)
		}
		queued++
		wg.Add(1)
		var deleteErr error
		go func() { defer wg.Done(); deleteErr = f.s.DeleteChannel(ctx, f.user.ID, f.doomed.ID) }()
		waitQueued(t, f.s, queued)
		for i := range 10 {
			title := fmt.Sprintf("b%02d", i)
			switch {
			case i%4 == 1:
				send(ctx, f.doomed, title)
			case i == 6:
				send(gaveUp, f.kept, title)
			default:
				send(ctx, f.kept, title)
				want = append(want, title)
			}
		}
		cancel()
		release()
		wg.Wait()

		if deleteErr != nil {
			t.Fatalf("DeleteChannel: %v", deleteErr)
		}
		for title, err := range errs {
			switch {
			case title == "a05" || title == "b06":
				if !errors.Is(err, context.Canceled) {
					t.Errorf("send %s, whose caller gave up: %v, want context.Canceled", title, err)
				}
			case title == "b01" || title == "b05" || title == "b09":
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("send %s to the deleted channel: %v, want ErrNotFound", title, err)
				}
			case err != nil:
				t.Errorf("send %s: %v", title, err)
			}
		}
		titles, events := f.stored(t, f.kept)
		if !slices.Equal(titles, want) {
			t.Errorf("stored, oldest first: %v\nwant %v", titles, want)
		}
		if !slices.Equal(events, want) {
			t.Errorf("stream events, in order: %v\nwant %v", events, want)
		}
	})
}

// TestRowsShareOneStatement: on PostgreSQL, rows queued one after another
// go in one statement, with one savepoint for them all; when it fails,
// each row goes again with a savepoint of its own.
func TestRowsShareOneStatement(t *testing.T) {
	t.Parallel()
	f := newRowsFixture(t, pgtest.NewDatabase(t))
	ctx := context.Background()
	if err := f.s.DeleteChannel(ctx, f.user.ID, f.doomed.ID); err != nil {
		t.Fatal(err)
	}

	// batch runs sends to channels, in order, as the writer runs a batch,
	// and returns their errors and how many savepoints it opened.
	batch := func(channels ...*Channel) ([]error, int) {
		t.Helper()
		var b *pgBatch
		return f.rowsBatch(t, channels, func(tx *writeTx) (func(*writeReq, *error) error, func() error) {
			b = &pgBatch{s: f.s, tx: tx}
			return b.run, b.insertRows
		}, func(*tx) int { return b.n })
	}
	count := func() int { return f.count(t, f.kept) }

	errs, savepoints := batch(f.kept, f.kept, f.kept, f.kept, f.kept)
	if err := errors.Join(errs...); err != nil || savepoints != 1 || count() != 5 {
		t.Errorf("5 sends: %v, %d savepoints, %d stored; want 1 savepoint, 5 stored", err, savepoints, count())
	}
	errs, savepoints = batch(f.kept, f.doomed, f.kept)
	if errs[0] != nil || !isForeignKey(errs[1]) || errs[2] != nil || savepoints != 4 || count() != 7 {
		t.Errorf("3 sends, the second to a deleted channel: %v, %d savepoints, %d stored; "+
			"want the second refused, 4 savepoints (the statement's, then one a send), 7 stored", errs, savepoints, count())
	}
}
