package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/internal/testkit"
)

// alertFixture is a store on a test clock with an owner (ann, one device),
// a channel whose escalation list names carol (who never answers) and bob
// (who accepted, one device).
type alertFixture struct {
	t        *testing.T
	s        *Store
	clock    *testkit.Clock
	ann, bob *User
	ch       *Channel
}

func newAlertFixture(t *testing.T, dsn string) *alertFixture {
	t.Helper()
	ctx := context.Background()
	f := &alertFixture{t: t, clock: testkit.NewClock()}
	f.s = openFoundation(t, dsn, Options{Now: f.clock.Now})
	f.ann, f.bob = f.user("ann@example.com"), f.user("bob@example.com")
	f.ch = &Channel{UserID: f.ann.ID, Name: "disks"}
	if err := f.s.CreateChannel(ctx, f.ch); err != nil {
		t.Fatal(err)
	}
	pol := UrgentPolicy{RepeatSeconds: 60, ExpireSeconds: 300, EscalateAfterSeconds: 120,
		Escalation: []string{"carol@example.com", f.bob.ID}}
	if _, err := f.s.UpdateChannel(ctx, f.ann.ID, f.ch.ID, ChannelPatch{Urgent: Optional[UrgentPolicy]{Set: true, Value: &pol}}); err != nil {
		t.Fatal(err)
	}
	invs, err := f.s.Invitations(ctx, f.bob.ID, f.bob.Email)
	if err != nil || len(invs) != 1 || invs[0].Role != RoleEscalation {
		t.Fatalf("bob's invitations = %+v, %v; want one escalation invitation", invs, err)
	}
	if _, err := f.s.AnswerInvitation(ctx, f.bob.ID, f.bob.Email, invs[0].ID, true); err != nil {
		t.Fatal(err)
	}
	for _, u := range []*User{f.ann, f.bob} {
		if err := f.s.RegisterDevice(ctx, &Device{UserID: u.ID, Platform: "ios", Name: u.Name, PushToken: "tok-" + u.Name}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *alertFixture) user(email string) *User {
	f.t.Helper()
	u := &User{Email: email, Name: email[:3], Plan: "free"}
	if err := f.s.CreateUser(context.Background(), u); err != nil {
		f.t.Fatal(err)
	}
	return u
}

// send stores an urgent message with alert a.
func (f *alertFixture) send(a NewAlert, callbackURL *string) *Message {
	f.t.Helper()
	m := &Message{ChannelID: f.ch.ID, Title: "disk failing", Priority: "urgent", CallbackURL: callbackURL, Alert: &a}
	if err := f.s.CreateMessage(context.Background(), m); err != nil {
		f.t.Fatal(err)
	}
	return m
}

// sweep sweeps at the clock's time and returns what it did; notices
// collects the events it told.
func (f *alertFixture) sweep(notices *[]string) AlertSweep {
	f.t.Helper()
	r, err := f.s.SweepAlerts(context.Background(), f.clock.Now(), 100, func(a *Alert, event string) (*NewDelivery, error) {
		*notices = append(*notices, event+":"+a.State)
		return nil, nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// jobs claims every due push job and finishes it, and returns them as
// "<device or fan-out>" strings.
func (f *alertFixture) jobs() []string {
	f.t.Helper()
	ctx := context.Background()
	got, err := f.s.ClaimPushJobs(ctx, 100, time.Minute)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, j := range got {
		out = append(out, "fanout")
		if j.DeviceID != "" {
			out[len(out)-1] = j.DeviceID
		}
		if err := f.s.FinishPushJob(ctx, j, nil); err != nil {
			f.t.Fatal(err)
		}
	}
	return out
}

func (f *alertFixture) alert(id string) *Alert {
	f.t.Helper()
	a, err := f.s.Alert(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return a
}

func TestAlertSweepRepeatsEscalatesExpires(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		f := newAlertFixture(t, dsn)
		start := f.clock.Now()
		m := f.send(NewAlert{Repeat: time.Minute, Expire: 5 * time.Minute, EscalateAfter: 2 * time.Minute}, nil)
		if got := f.jobs(); len(got) != 1 || got[0] != "fanout" {
			t.Fatalf("jobs after the send = %v, want the first fan-out", got)
		}
		a := f.alert(m.ID)
		if a.State != AlertActive || a.Repeats != 0 || !a.NextRepeatAt.Equal(start.Add(time.Minute)) ||
			!a.ExpiresAt.Equal(start.Add(5*time.Minute)) || len(a.Alerted) != 1 || a.Alerted[0].ID != f.ann.ID {
			t.Fatalf("new alert = %+v", a)
		}
		var notices []string
		step := func(at time.Duration, want AlertSweep, wantJobs int) {
			t.Helper()
			f.clock.Set(start.Add(at))
			if got := f.sweep(&notices); got != want {
				t.Fatalf("sweep at +%s = %+v, want %+v", at, got, want)
			}
			if got := f.jobs(); len(got) != wantJobs {
				t.Fatalf("push jobs at +%s = %v, want %d", at, got, wantJobs)
			}
		}
		step(59*time.Second, AlertSweep{}, 0)
		step(time.Minute, AlertSweep{Claimed: 1, Repeated: 1}, 1)
		step(time.Minute, AlertSweep{}, 0) // no repeat twice
		// A repeat and the first level at once: bob (carol never
		// accepted) is reached by the repeat's fan-out, no job of his own.
		step(2*time.Minute, AlertSweep{Claimed: 1, Repeated: 1, Escalated: 1}, 1)
		a = f.alert(m.ID)
		if a.Level != 1 || len(a.Alerted) != 2 || a.Alerted[1].ID != f.bob.ID || a.Alerted[1].Level != 1 {
			t.Fatalf("alert after escalation = %+v", a)
		}
		if ok, err := f.s.Alerted(context.Background(), m.ID, f.bob.ID); err != nil || !ok {
			t.Fatalf("Alerted(bob) = %v, %v", ok, err)
		}
		targets, err := f.s.PushTargets(context.Background(), m.ID, "", PushMessage)
		if err != nil || len(targets) != 2 {
			t.Fatalf("push targets after escalation = %v, %v; want ann's and bob's devices", targets, err)
		}
		// A late sweep sends one repeat, not one per interval missed, and
		// the list has no second level.
		step(4*time.Minute+time.Second, AlertSweep{Claimed: 1, Repeated: 1}, 1)
		a = f.alert(m.ID)
		if a.Repeats != 3 || a.Level != 1 || a.NextEscalationAt != nil || !a.NextRepeatAt.Equal(start.Add(5*time.Minute)) {
			t.Fatalf("alert after a late sweep = %+v", a)
		}
		step(5*time.Minute, AlertSweep{Claimed: 1, Expired: 1}, 0)
		if a = f.alert(m.ID); a.State != AlertExpired || a.ResolvedAt == nil || a.NextRepeatAt != nil {
			t.Fatalf("alert after expiry = %+v", a)
		}
		if len(notices) != 1 || notices[0] != "alert.expired:expired" {
			t.Fatalf("notices = %v", notices)
		}
		step(time.Hour, AlertSweep{}, 0)
	})
}

func TestAlertEscalationAlonePushesTheNewPerson(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		f := newAlertFixture(t, dsn)
		start := f.clock.Now()
		m := f.send(NewAlert{Repeat: 2 * time.Minute, Expire: 10 * time.Minute, EscalateAfter: time.Minute}, nil)
		f.jobs()
		var notices []string
		f.clock.Set(start.Add(time.Minute))
		if got := f.sweep(&notices); got != (AlertSweep{Claimed: 1, Escalated: 1}) {
			t.Fatalf("sweep = %+v", got)
		}
		got := f.jobs()
		devs, err := f.s.ListDevices(context.Background(), f.bob.ID)
		if err != nil || len(got) != 1 || got[0] != devs[0].ID {
			t.Fatalf("jobs = %v, want one to bob's device %v (%v)", got, devs, err)
		}
		if a := f.alert(m.ID); a.Repeats != 0 || a.Level != 1 {
			t.Fatalf("alert = %+v", a)
		}
	})
}

func TestAlertAcknowledgeAndCancel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		f := newAlertFixture(t, dsn)
		ctx := context.Background()
		cb := "https://example.com/hook"
		notice := func(a *Alert, event string) (*NewDelivery, error) {
			return &NewDelivery{ChannelID: a.ChannelID, Event: event, URL: *a.CallbackURL, Body: []byte(`{"event":"` + event + `"}`)}, nil
		}
		m := f.send(NewAlert{Repeat: time.Minute, Expire: time.Hour}, &cb)
		at := f.clock.Now().Add(time.Second).Truncate(time.Millisecond)
		a, err := f.s.AcknowledgeAlert(ctx, m.ID, AlertAck{UserID: f.ann.ID, At: at, Device: "dev_1"}, notice)
		if err != nil {
			t.Fatal(err)
		}
		if a.State != AlertAcknowledged || a.AcknowledgedBy == nil || a.AcknowledgedBy.ID != f.ann.ID ||
			!a.AcknowledgedAt.Equal(at) || a.AcknowledgedDevice != "dev_1" || a.NextRepeatAt != nil {
			t.Fatalf("acknowledged alert = %+v", a)
		}
		if _, err := f.s.AcknowledgeAlert(ctx, m.ID, AlertAck{UserID: f.bob.ID, At: at}, notice); !errors.Is(err, ErrAlertClosed) {
			t.Fatalf("second acknowledgement: %v, want ErrAlertClosed", err)
		}
		if _, err := f.s.CancelAlert(ctx, m.ID, "sender", notice); !errors.Is(err, ErrAlertClosed) {
			t.Fatalf("cancel after acknowledgement: %v, want ErrAlertClosed", err)
		}
		if a := f.alert(m.ID); a.AcknowledgedBy.ID != f.ann.ID || a.CancelledBy != "" {
			t.Fatalf("alert changed by refused writes: %+v", a)
		}
		f.clock.Advance(time.Hour)
		var notices []string
		if got := f.sweep(&notices); got.Claimed != 0 {
			t.Fatalf("an acknowledged alert was swept: %+v", got)
		}

		m2 := f.send(NewAlert{Repeat: time.Minute, Expire: time.Hour}, &cb)
		if a, err := f.s.CancelAlert(ctx, m2.ID, "sender", notice); err != nil || a.State != AlertCancelled || a.CancelledBy != "sender" {
			t.Fatalf("cancel = %+v, %v", a, err)
		}
		plain := &Message{ChannelID: f.ch.ID, Title: "plain", Priority: "high"}
		if err := f.s.CreateMessage(ctx, plain); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.CancelAlert(ctx, plain.ID, "sender", notice); !errors.Is(err, ErrNotFound) {
			t.Fatalf("cancel of a message without an alert: %v, want ErrNotFound", err)
		}
		for _, id := range []string{m.ID, m2.ID} {
			var n int
			if err := f.s.read.QueryRow("SELECT count(*) FROM deliveries WHERE message_id = ? AND kind = ?", id, KindAlert).Scan(&n); err != nil || n != 1 {
				t.Errorf("alert deliveries of %s = %d, %v; want 1", id, n, err)
			}
		}
	})
}

// TestAlertAckWithAnswer: an answer acknowledges in the same write.
func TestAlertAckWithAnswer(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		f := newAlertFixture(t, dsn)
		m := f.send(NewAlert{Repeat: time.Minute, Expire: time.Hour}, nil)
		at := f.clock.Now().Truncate(time.Millisecond)
		ack := &AlertAcking{Ack: AlertAck{UserID: f.ann.ID, At: at, Device: "session"}}
		if err := f.s.RespondWithJobs(context.Background(), m.ID, []byte(`{}`), nil, at, nil, nil, ack); err != nil {
			t.Fatal(err)
		}
		if a := f.alert(m.ID); a.State != AlertAcknowledged || a.AcknowledgedDevice != "session" {
			t.Fatalf("alert after an answer = %+v", a)
		}
	})
}

// TestReplicasSweepAlertsOnce: two replicas sweeping the same due alerts
// at once move each on once: each repeat is queued once.
func TestReplicasSweepAlertsOnce(t *testing.T) {
	t.Parallel()
	clock := testkit.NewClock()
	dsn := pgtest.NewDatabase(t)
	a := openFoundation(t, dsn, Options{Now: clock.Now})
	b := openFoundation(t, dsn, Options{Now: clock.Now})
	ctx := context.Background()
	u := &User{Email: "ops@example.com", Plan: "pro"}
	if err := a.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	ch := &Channel{UserID: u.ID, Name: "disks"}
	if err := a.CreateChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	const n = 60
	for range n {
		m := &Message{ChannelID: ch.ID, Title: "disk", Priority: "urgent", Alert: &NewAlert{Repeat: time.Minute, Expire: time.Hour}}
		if err := a.CreateMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Minute)
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	for _, s := range []*Store{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				r, err := s.SweepAlerts(ctx, clock.Now(), 7, nil)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				total += r.Repeated
				mu.Unlock()
				if r.Claimed == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	var jobs, repeats int
	if err := a.read.QueryRow("SELECT count(*) FROM push_jobs").Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if err := a.read.QueryRow("SELECT COALESCE(SUM(repeats), 0) FROM alerts").Scan(&repeats); err != nil {
		t.Fatal(err)
	}
	if total != n || jobs != n || repeats != n {
		t.Fatalf("repeated %d, push jobs %d, repeats counted %d; want %d each", total, jobs, repeats, n)
	}
}

// TestAlertEscalatedFindsBySearch: a person an urgent message escalated
// to finds it by search, as they find it in their list; another user
// on the channel's escalation list whom it never reached does not.
func TestAlertEscalatedFindsBySearch(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		f := newAlertFixture(t, dsn)
		start := f.clock.Now()
		m := f.send(NewAlert{Repeat: 2 * time.Minute, Expire: 10 * time.Minute, EscalateAfter: time.Minute}, nil)
		if _, err := f.s.IndexForSearch(ctx, 100); err != nil {
			t.Fatal(err)
		}
		find := func(q MessageQuery) []string {
			t.Helper()
			q.Limit = 10
			page, err := f.s.ListMessages(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, got := range page.Messages {
				ids = append(ids, got.ID)
			}
			return ids
		}
		if got := find(MessageQuery{UserID: f.bob.ID, Search: "disk"}); len(got) != 0 {
			t.Fatalf("bob's search before the escalation = %v, want nothing", got)
		}
		var notices []string
		f.clock.Set(start.Add(time.Minute))
		if got := f.sweep(&notices); got.Escalated != 1 {
			t.Fatalf("sweep = %+v", got)
		}
		for _, q := range []MessageQuery{
			{UserID: f.bob.ID, Approver: f.bob.ID},
			{UserID: f.bob.ID, Search: "disk"},
			{UserID: f.bob.ID, Search: "fail*", ReaderEmail: f.bob.Email},
			{UserID: f.bob.ID, Approver: f.bob.ID, Search: "disk"},
		} {
			if got := find(q); len(got) != 1 || got[0] != m.ID {
				t.Errorf("%+v finds %v, want %s", q, got, m.ID)
			}
		}
		if got := find(MessageQuery{UserID: f.ann.ID, Search: "disk"}); len(got) != 1 {
			t.Errorf("the owner's search finds %v", got)
		}
		// carol is on the list by email but never accepted, so the alert
		// never reached her: the index names her, her search finds nothing.
		carol := f.user("carol@example.com")
		if got := find(MessageQuery{UserID: carol.ID, Search: "disk", ReaderEmail: carol.Email}); len(got) != 0 {
			t.Errorf("carol's search finds %v, want nothing", got)
		}
	})
}
