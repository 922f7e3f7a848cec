package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// extrasFixture is a store on a settable clock with a user, who has an
// active phone, and a channel of theirs.
type extrasFixture struct {
	s       *Store
	clock   *testkit.Clock
	userID  string
	channel string
}

func newExtrasFixture(t *testing.T, dsn string) *extrasFixture {
	t.Helper()
	clock := testkit.NewClockAt(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	s := openFoundation(t, dsn, Options{Now: clock.Now})
	ctx := context.Background()
	u := &User{Email: "ops@example.com", Plan: "pro"}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterDevice(ctx, &Device{UserID: u.ID, Platform: "android", Name: "phone", PushToken: "tok"}); err != nil {
		t.Fatal(err)
	}
	ch := &Channel{UserID: u.ID, Name: "cron"}
	if err := s.CreateChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	return &extrasFixture{s: s, clock: clock, userID: u.ID, channel: ch.ID}
}

func (f *extrasFixture) send(t *testing.T, m *Message) *Message {
	t.Helper()
	m.ChannelID, m.Priority = f.channel, "normal"
	if m.Title == "" {
		m.Title = "t"
	}
	if err := f.s.CreateMessage(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return m
}

// events lists the (type, message) of the user's stream events.
func (f *extrasFixture) events(t *testing.T) [][2]string {
	t.Helper()
	evs, err := f.s.EventsAfter(context.Background(), f.userID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for _, e := range evs {
		out = append(out, [2]string{e.Type, e.MessageID})
	}
	return out
}

func (f *extrasFixture) pushJobs(t *testing.T, messageID string) int {
	t.Helper()
	var n int
	if err := f.s.read.QueryRow("SELECT count(*) FROM push_jobs WHERE message_id = ?", messageID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *extrasFixture) count(t *testing.T, typ, messageID string) int {
	n := 0
	for _, e := range f.events(t) {
		if e == [2]string{typ, messageID} {
			n++
		}
	}
	return n
}

// TestScheduledRelease: a scheduled message is stored with neither stream
// event nor push job, listed as scheduled, and released once, when due,
// with both; a no-push message gets its event and no push job.
func TestScheduledRelease(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		f := newExtrasFixture(t, dsn)
		ctx := context.Background()
		at := f.clock.Now().Add(time.Minute)
		m := f.send(t, &Message{DeliverAt: &at})
		quiet := f.send(t, &Message{NoPush: true})

		if got := f.count(t, EventCreated, m.ID); got != 0 {
			t.Errorf("%d created events before it is due, want 0", got)
		}
		if got := f.pushJobs(t, m.ID); got != 0 {
			t.Errorf("%d push jobs before it is due, want 0", got)
		}
		if got, want := f.count(t, EventCreated, quiet.ID), 1; got != want {
			t.Errorf("no-push message: %d created events, want %d", got, want)
		}
		if got := f.pushJobs(t, quiet.ID); got != 0 {
			t.Errorf("no-push message: %d push jobs, want 0", got)
		}
		page, err := f.s.ListMessages(ctx, MessageQuery{UserID: f.userID, State: StateScheduled, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Messages) != 1 || page.Messages[0].ID != m.ID || page.Messages[0].DeliverAt == nil ||
			!page.Messages[0].DeliverAt.Equal(at) {
			t.Fatalf("scheduled list: %+v, want only %s due at %s", page.Messages, m.ID, at)
		}

		if n, err := f.s.ReleaseScheduled(ctx, f.clock.Now()); err != nil || n != 0 {
			t.Fatalf("release before due: %d, %v; want 0", n, err)
		}
		if next, ok, err := f.s.NextScheduled(ctx); err != nil || !ok || !next.Equal(at) {
			t.Fatalf("NextScheduled = %s, %v, %v; want %s", next, ok, err, at)
		}
		f.clock.Advance(time.Minute)
		if n, err := f.s.ReleaseScheduled(ctx, f.clock.Now()); err != nil || n != 1 {
			t.Fatalf("release when due: %d, %v; want 1", n, err)
		}
		if n, err := f.s.ReleaseScheduled(ctx, f.clock.Now()); err != nil || n != 0 {
			t.Fatalf("second release: %d, %v; want 0", n, err)
		}
		if got, want := f.count(t, EventCreated, m.ID), 1; got != want {
			t.Errorf("%d created events once released, want %d", got, want)
		}
		if got, want := f.pushJobs(t, m.ID), 1; got != want {
			t.Errorf("%d push jobs once released, want %d", got, want)
		}
		got, err := f.s.Message(ctx, m.ID)
		if err != nil || got.DeliverAt != nil {
			t.Fatalf("released message: %+v, %v; want deliver_at cleared", got, err)
		}
		if _, ok, _ := f.s.NextScheduled(ctx); ok {
			t.Error("NextScheduled still finds a message after the release")
		}
	})
}

// TestScheduledApprovalWindow: a scheduled approval's window starts when
// it is delivered, not when it was sent.
func TestScheduledApprovalWindow(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		f := newExtrasFixture(t, dsn)
		at := f.clock.Now().Add(time.Hour)
		m := f.send(t, &Message{DeliverAt: &at, Approval: &ApprovalRule{RequiredCount: 1, WindowSeconds: 600}})
		want := at.Add(10 * time.Minute)
		if m.ApprovalDeadline == nil || !m.ApprovalDeadline.Equal(want) {
			t.Fatalf("deadline of a message due at %s: %v; want %s", at, m.ApprovalDeadline, want)
		}
		got, err := f.s.Message(context.Background(), m.ID)
		if err != nil || got.ApprovalDeadline == nil || !got.ApprovalDeadline.Equal(want) {
			t.Fatalf("stored deadline: %+v, %v; want %s", got, err, want)
		}
	})
}

// TestSequenceReplacesScheduled: a message of a sequence deletes the
// sequence's message still waiting (a dead man's switch), with its
// message.deleted event, and leaves delivered ones and other sequences be.
func TestSequenceReplacesScheduled(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		f := newExtrasFixture(t, dsn)
		ctx := context.Background()
		at := f.clock.Now().Add(5 * time.Minute)
		delivered := f.send(t, &Message{SequenceID: "heartbeat"})
		first := f.send(t, &Message{SequenceID: "heartbeat", DeliverAt: &at})
		other := f.send(t, &Message{SequenceID: "other", DeliverAt: &at})
		second := f.send(t, &Message{SequenceID: "heartbeat", DeliverAt: &at})

		if _, err := f.s.Message(ctx, first.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("replaced scheduled message: %v, want not found", err)
		}
		if got, want := f.count(t, EventDeleted, first.ID), 1; got != want {
			t.Errorf("%d deleted events for the replaced message, want %d", got, want)
		}
		for _, id := range []string{delivered.ID, other.ID, second.ID} {
			if _, err := f.s.Message(ctx, id); err != nil {
				t.Errorf("message %s: %v, want kept", id, err)
			}
		}
	})
}

// TestDeleteAndClearSequence: deleting a sequence deletes each of its
// messages with a message.deleted event; clearing it records
// message.cleared for its newest delivered message.
func TestDeleteAndClearSequence(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		f := newExtrasFixture(t, dsn)
		ctx := context.Background()
		a := f.send(t, &Message{SequenceID: "backup"})
		b := f.send(t, &Message{SequenceID: "backup"})
		keep := f.send(t, &Message{SequenceID: "deploy"})

		if _, err := f.s.ClearSequence(ctx, f.channel, "nothing"); !errors.Is(err, ErrNotFound) {
			t.Errorf("clear an unknown sequence: %v, want not found", err)
		}
		id, err := f.s.ClearSequence(ctx, f.channel, "backup")
		if err != nil || id != b.ID {
			t.Fatalf("clear: %q, %v; want %s", id, err, b.ID)
		}
		if got, want := f.count(t, EventCleared, b.ID), 1; got != want {
			t.Errorf("%d cleared events, want %d", got, want)
		}
		n, err := f.s.DeleteSequence(ctx, f.channel, "backup")
		if err != nil || n != 2 {
			t.Fatalf("delete: %d, %v; want 2", n, err)
		}
		for _, m := range []*Message{a, b} {
			if _, err := f.s.Message(ctx, m.ID); !errors.Is(err, ErrNotFound) {
				t.Errorf("message %s: %v, want deleted", m.ID, err)
			}
			if got, want := f.count(t, EventDeleted, m.ID), 1; got != want {
				t.Errorf("%s: %d deleted events, want %d", m.ID, got, want)
			}
		}
		if _, err := f.s.Message(ctx, keep.ID); err != nil {
			t.Errorf("another sequence's message: %v", err)
		}
		// A deletion's event still names the sequence: the notification
		// to remove, once the message is gone.
		evs, err := f.s.UserEventsBetween(ctx, f.userID, 0, 1<<62, 1000)
		if err != nil {
			t.Fatal(err)
		}
		named := 0
		for _, e := range evs {
			if e.Type == EventDeleted && e.SequenceID == "backup" {
				named++
			}
		}
		if named != 2 {
			t.Errorf("%d deleted events name sequence backup, want 2", named)
		}
	})
}

// TestEphemeralNotListedThenDeleted: an ephemeral message is streamed and
// pushed, never listed, and deleted once its push is done and the grace
// has passed.
func TestEphemeralNotListedThenDeleted(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		f := newExtrasFixture(t, dsn)
		ctx := context.Background()
		kept := f.send(t, &Message{})
		gone := f.send(t, &Message{Ephemeral: true})
		if got, want := f.count(t, EventCreated, gone.ID), 1; got != want {
			t.Errorf("%d created events, want %d", got, want)
		}
		page, err := f.s.ListMessages(ctx, MessageQuery{UserID: f.userID, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Messages) != 1 || page.Messages[0].ID != kept.ID {
			t.Fatalf("list: %d messages, want only %s", len(page.Messages), kept.ID)
		}
		f.clock.Advance(time.Hour)
		if n, err := f.s.DeleteDeliveredEphemeral(ctx, f.clock.Now()); err != nil || n != 0 {
			t.Fatalf("sweep while its push is queued: %d, %v; want 0", n, err)
		}
		if _, err := f.s.write.Exec("DELETE FROM push_jobs"); err != nil {
			t.Fatal(err)
		}
		if n, err := f.s.DeleteDeliveredEphemeral(ctx, f.clock.Now().Add(-2*time.Hour)); err != nil || n != 0 {
			t.Fatalf("sweep before the grace has passed: %d, %v; want 0", n, err)
		}
		if n, err := f.s.DeleteDeliveredEphemeral(ctx, f.clock.Now()); err != nil || n != 1 {
			t.Fatalf("sweep once pushed: %d, %v; want 1", n, err)
		}
		if _, err := f.s.Message(ctx, kept.ID); err != nil {
			t.Errorf("kept message: %v", err)
		}
	})
}

// TestReleaseOnceAcrossReplicas: two replicas releasing the same due
// messages at once release each exactly once: one stream event and one
// push job a message.
func TestReleaseOnceAcrossReplicas(t *testing.T) {
	t.Parallel()
	a, b, channelID := replicaPair(t)
	ctx := context.Background()
	ch, err := a.ChannelByID(ctx, channelID)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.RegisterDevice(ctx, &Device{UserID: ch.UserID, Platform: "android", Name: "p", PushToken: "tok"}); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(time.Minute)
	const n = 300
	for range n {
		if err := a.CreateMessage(ctx, &Message{ChannelID: channelID, Title: "t", Priority: "normal", DeliverAt: &at}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	released := make([]int64, 4)
	errs := make([]error, 4)
	for i := range released {
		wg.Add(1)
		go func() {
			defer wg.Done()
			released[i], errs[i] = []*Store{a, b}[i%2].ReleaseScheduled(ctx, at.Add(time.Second))
		}()
	}
	wg.Wait()
	var total int64
	for i := range released {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		total += released[i]
	}
	if total != n {
		t.Errorf("released %d in all (%v), want %d", total, released, n)
	}
	var events, jobs, distinct int
	if err := a.read.QueryRow("SELECT count(*), count(DISTINCT message_id) FROM events WHERE type = ?", EventCreated).
		Scan(&events, &distinct); err != nil {
		t.Fatal(err)
	}
	if err := a.read.QueryRow("SELECT count(*) FROM push_jobs").Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if events != n || distinct != n || jobs != n {
		t.Errorf("%d created events for %d messages and %d push jobs, want %d of each", events, distinct, jobs, n)
	}
}
