package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// claimFixture is two users, each with a channel and an active device, on a
// clock that moves a millisecond per message, so that jobs queue in order.
type claimFixture struct {
	s                 *Store
	clk               *testkit.Clock
	mallory, ann      *User
	malloryCh, annCh  string
	malloryDev, annDv string
}

func newClaimFixture(t *testing.T, dsn string) *claimFixture {
	t.Helper()
	ctx := context.Background()
	f := &claimFixture{clk: testkit.NewClockAt(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))}
	f.s = openFoundation(t, dsn, Options{Now: f.clk.Now})
	for _, who := range []struct {
		u       **User
		ch, dev *string
		email   string
	}{{&f.mallory, &f.malloryCh, &f.malloryDev, "mallory@example.com"}, {&f.ann, &f.annCh, &f.annDv, "ann@example.com"}} {
		u := &User{Email: who.email, Plan: "pro"}
		if err := f.s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		ch := &Channel{UserID: u.ID, Name: "ops"}
		if err := f.s.CreateChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}
		d := &Device{UserID: u.ID, Platform: "web", Name: "browser", PushToken: `{"endpoint":"https://push.example/` + u.ID + `"}`}
		if err := f.s.RegisterDevice(ctx, d); err != nil {
			t.Fatal(err)
		}
		*who.u, *who.ch, *who.dev = u, ch.ID, d.ID
	}
	return f
}

// messages sends n messages to channel, answered with a callback when
// callback is set; it returns their ids, oldest first.
func (f *claimFixture) messages(t *testing.T, channel string, n int, callback bool) []string {
	t.Helper()
	ctx := context.Background()
	var ids []string
	for i := range n {
		f.clk.Advance(time.Millisecond)
		m := &Message{ChannelID: channel, Title: fmt.Sprint("m", i), Priority: "normal"}
		if err := f.s.CreateMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		if callback {
			body := json.RawMessage(`{"event":"response.received"}`)
			if err := f.s.Respond(ctx, m.ID, body, f.clk.Now(), &NewDelivery{ChannelID: channel, Event: "response.received",
				URL: "https://hooks.example.com/" + m.ID, Body: body}); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, m.ID)
	}
	return ids
}

// TestClaimPushJobsFair: a claim takes no more of one owner's jobs than the
// share, counting those already in flight, and takes the other owners'
// jobs behind them; an owner at the share gets more only once one of
// theirs is finished. A retry's owner is its device's user.
func TestClaimPushJobsFair(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		f := newClaimFixture(t, dsn)
		mal := f.messages(t, f.malloryCh, 40, false) // far more than a claim's window
		ann := f.messages(t, f.annCh, 1, false)

		// The first claim looks at the oldest jobs only: mallory's.
		jobs, err := f.s.ClaimPushJobsFair(ctx, 4, 2, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		has := func(id string) func(PushJob) bool { return func(j PushJob) bool { return j.MessageID == id } }
		if len(jobs) != 2 || !slices.ContainsFunc(jobs, has(mal[0])) || !slices.ContainsFunc(jobs, has(mal[1])) {
			t.Fatalf("claim of 4 with a share of 2: %+v, want mallory's 2 oldest", jobs)
		}
		slices.SortFunc(jobs, func(a, b PushJob) int { return int(a.ID - b.ID) }) // mal[0]'s first
		// The next passes over mallory's 38 due jobs to ann's.
		next, err := f.s.ClaimPushJobsFair(ctx, 4, 2, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(next) != 1 || next[0].MessageID != ann[0] {
			t.Fatalf("claim with mallory at the share: %+v, want ann's %s alone", next, ann[0])
		}
		// Mallory is at the share: 38 due jobs, none claimable.
		if again, err := f.s.ClaimPushJobsFair(ctx, 4, 2, time.Minute); err != nil || len(again) != 0 {
			t.Fatalf("claim with mallory at the share: %d jobs (%v), want none", len(again), err)
		}
		// Ann sends again: hers is taken, and no more (n = 1).
		late := f.messages(t, f.annCh, 2, false)
		if again, err := f.s.ClaimPushJobsFair(ctx, 1, 2, time.Minute); err != nil || len(again) != 1 || again[0].MessageID != late[0] {
			t.Fatalf("claim of 1 behind 38 jobs of an owner at the share: %+v (%v), want ann's %s", again, err, late[0])
		}
		// Ann is at the share now too.
		if again, err := f.s.ClaimPushJobsFair(ctx, 4, 2, time.Minute); err != nil || len(again) != 0 {
			t.Fatalf("claim with both owners at the share: %d jobs (%v), want none", len(again), err)
		}
		// One of mallory's finishes, leaving a retry to ann's device (an
		// approver's, say), and ann's first: each may have one more.
		if err := f.s.FinishPushJob(ctx, jobs[0], []PushRetry{{DeviceID: f.annDv, OwnerID: f.ann.ID, At: f.clk.Now()}}); err != nil {
			t.Fatal(err)
		}
		if err := f.s.FinishPushJob(ctx, next[0], nil); err != nil {
			t.Fatal(err)
		}
		claim := func(what string, n int, want ...string) []PushJob {
			t.Helper()
			got, err := f.s.ClaimPushJobsFair(ctx, n, 2, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			var gotIDs []string
			for _, j := range got {
				gotIDs = append(gotIDs, j.MessageID)
			}
			// In no particular order: PostgreSQL returns the rows as it
			// updated them.
			slices.Sort(gotIDs)
			want = slices.Sorted(slices.Values(want))
			if fmt.Sprint(gotIDs) != fmt.Sprint(want) {
				t.Fatalf("%s: claimed %v, want %v", what, gotIDs, want)
			}
			return got
		}
		claim("after one of each finished", 4, mal[2])
		claim("mallory at the share again", 4, late[1]) // ann's oldest; the retry is her third
		// The retry, once one of ann's is done, is hers.
		if err := f.s.FinishPushJob(ctx, PushJob{ID: findJob(t, f.s, late[0])}, nil); err != nil {
			t.Fatal(err)
		}
		retry := claim("one of ann's finished", 4, mal[0])
		if retry[0].DeviceID != f.annDv {
			t.Errorf("claimed %+v, want the retry to ann's device", retry[0])
		}
		// A lease that ran out does not count: its job is due again.
		f.clk.Advance(2 * time.Minute)
		claim("every lease ran out", 8, mal[1], mal[2])
		claim("mallory at the share", 8, late[1], mal[0])
	})
}

// TestClaimDeliveriesFair: the callback queue's claim passes over the jobs
// of a user (the channel's owner) at the share, as the push queue's does.
func TestClaimDeliveriesFair(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		f := newClaimFixture(t, dsn)
		f.messages(t, f.malloryCh, 40, true)
		ann := f.messages(t, f.annCh, 1, true)

		jobs, err := f.s.ClaimDeliveriesFair(ctx, 8, 2, time.Minute)
		if err != nil || len(jobs) != 2 || jobs[0].ChannelID != f.malloryCh || jobs[1].ChannelID != f.malloryCh {
			t.Fatalf("claim of 8 with a share of 2: %+v (%v), want 2 of mallory's", jobs, err)
		}
		if next, err := f.s.ClaimDeliveriesFair(ctx, 8, 2, time.Minute); err != nil || len(next) != 1 || next[0].MessageID != ann[0] {
			t.Fatalf("claim with mallory at the share: %+v (%v), want ann's alone", next, err)
		}
		if again, err := f.s.ClaimDeliveriesFair(ctx, 8, 2, time.Minute); err != nil || len(again) != 0 {
			t.Fatalf("claim with mallory at the share and ann's taken: %d jobs (%v), want none", len(again), err)
		}
		// An attempt recorded ends the lease: one more of mallory's.
		first := &jobs[0]
		if _, err := f.s.RecordAttempt(ctx, first, AttemptResult{At: f.clk.Now(), StatusCode: 500}, 8, f.clk.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if again, err := f.s.ClaimDeliveriesFair(ctx, 8, 2, time.Minute); err != nil || len(again) != 1 || again[0].ChannelID != f.malloryCh {
			t.Fatalf("after one attempt recorded: %+v (%v), want one more of mallory's", again, err)
		}
		// A deferred job is handed back without an attempt, due later.
		if err := f.s.DeferDelivery(ctx, first.ID, f.clk.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		st, attempts, err := f.s.DeliveryLog(ctx, first.MessageID)
		if err != nil || st.Attempts != 1 || len(attempts) != 1 || st.NextAttemptAt == nil || !st.NextAttemptAt.Equal(f.clk.Now().Add(time.Hour)) {
			t.Errorf("deferred delivery: %+v, %d attempts (%v); want 1 attempt, due in an hour", st, len(attempts), err)
		}
	})
}

// findJob is the id of message id's queued push job.
func findJob(t *testing.T, s *Store, id string) int64 {
	t.Helper()
	var job int64
	if err := s.read.QueryRow("SELECT id FROM push_jobs WHERE message_id = ?", id).Scan(&job); err != nil {
		t.Fatalf("push job of %s: %v", id, err)
	}
	return job
}
