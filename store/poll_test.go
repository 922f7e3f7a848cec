package store

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"
)

// pollFixture is a store with one message in one channel.
type pollFixture struct {
	s       *Store
	channel string
	other   string // a second channel of the same user
	msg     string
}

func newPollFixture(t *testing.T, dsn string) *pollFixture {
	t.Helper()
	ctx := context.Background()
	s := openFoundation(t, dsn, Options{})
	u := &User{Email: "poll@example.com", Plan: "free"}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	ch, other := &Channel{UserID: u.ID, Name: "poll"}, &Channel{UserID: u.ID, Name: "other"}
	for _, c := range []*Channel{ch, other} {
		if err := s.CreateChannel(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	m := &Message{ChannelID: ch.ID, Title: "Deploy?", Priority: "normal"}
	if err := s.CreateMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	return &pollFixture{s: s, channel: ch.ID, other: other.ID, msg: m.ID}
}

func (f *pollFixture) respond(t *testing.T, result string, at time.Time) {
	t.Helper()
	if err := f.s.Respond(context.Background(), f.msg, json.RawMessage(result), at, nil); err != nil {
		t.Fatal(err)
	}
}

// stored reads the message's state and response as the database has them.
func (f *pollFixture) stored(t *testing.T) (state string, response *string) {
	t.Helper()
	if err := f.s.read.QueryRow("SELECT state, response FROM messages WHERE id = ?", f.msg).Scan(&state, &response); err != nil {
		t.Fatal(err)
	}
	return state, response
}

// TestReadResponse: a fresh response is read once and cleared; later reads
// say already_read. Pending and expired messages keep their state.
func TestReadResponse(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		f := newPollFixture(t, dsn)
		at := time.Date(2026, 3, 4, 5, 6, 7, 8e6, time.UTC)

		if p, err := f.s.ReadResponse(ctx, f.channel, f.msg, at.Add(-time.Hour)); err != nil || p.State != StatePending || p.Response != nil {
			t.Fatalf("before any response: %+v, %v; want pending", p, err)
		}
		for _, where := range [][2]string{{f.other, f.msg}, {f.channel, "no-such-message"}} {
			if _, err := f.s.ReadResponse(ctx, where[0], where[1], at.Add(-time.Hour)); !errors.Is(err, ErrNotFound) {
				t.Errorf("ReadResponse(%s, %s) = %v, want ErrNotFound", where[0], where[1], err)
			}
		}

		f.respond(t, `{"action":"approve"}`, at)
		p, err := f.s.ReadResponse(ctx, f.channel, f.msg, at.Add(-time.Millisecond))
		if err != nil || p.State != StateSubmitted || string(p.Response) != `{"action":"approve"}` || !p.SubmittedAt.Equal(at) {
			t.Fatalf("first read: %+v, %v; want submitted with the response at %s", p, err, at)
		}
		if state, resp := f.stored(t); state != StateAlreadyRead || resp != nil {
			t.Errorf("after the first read the row holds %q, %v; want already_read and no response", state, resp)
		}
		for i := range 2 {
			if p, err := f.s.ReadResponse(ctx, f.channel, f.msg, at.Add(-time.Millisecond)); err != nil || p.State != StateAlreadyRead || p.Response != nil {
				t.Errorf("read %d after the first: %+v, %v; want already_read without the response", i+2, p, err)
			}
		}
	})
}

// TestReadResponseExpired: a response submitted at or before expireBefore
// reads as expired, and stays stored as it was.
func TestReadResponseExpired(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		f := newPollFixture(t, dsn)
		at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
		f.respond(t, `{"action":"approve"}`, at)
		for _, expireBefore := range []time.Time{at, at.Add(time.Second)} {
			p, err := f.s.ReadResponse(ctx, f.channel, f.msg, expireBefore)
			if err != nil || p.State != StateExpired || p.Response != nil {
				t.Errorf("expireBefore %s: %+v, %v; want expired", expireBefore, p, err)
			}
		}
		if state, resp := f.stored(t); state != StateSubmitted || resp == nil || *resp != `{"action":"approve"}` {
			t.Errorf("an expired read changed the row to %q, %v", state, resp)
		}
	})
}

// TestReadResponseRace is the read-once promise under a real race, made
// deterministic: the writer is held, n polls all see the response as
// submitted and queue their read behind it, and then the writer runs them
// in one batch. Exactly one gets the response.
func TestReadResponseRace(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		f := newPollFixture(t, dsn)
		at := time.Now().UTC()
		f.respond(t, `{"action":"approve"}`, at)

		const n = 16
		release := holdWriter(t, f.s)
		polls := make([]Poll, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				polls[i], errs[i] = f.s.ReadResponse(ctx, f.channel, f.msg, at.Add(-time.Minute))
			}()
		}
		waitQueued(t, f.s, n) // every poll has read "submitted" and waits for the writer
		release()
		wg.Wait()

		got := 0
		for i, p := range polls {
			switch {
			case errs[i] != nil:
				t.Errorf("poll %d: %v", i, errs[i])
			case p.State == StateSubmitted && string(p.Response) == `{"action":"approve"}`:
				got++
			case p.State == StateAlreadyRead && p.Response == nil:
			default:
				t.Errorf("poll %d: %+v", i, p)
			}
		}
		if got != 1 {
			t.Errorf("%d of %d polls got the response, want exactly 1", got, n)
		}
		if state, resp := f.stored(t); state != StateAlreadyRead || resp != nil {
			t.Errorf("after the polls the row holds %q, %v; want already_read and no response", state, resp)
		}
	})
}
