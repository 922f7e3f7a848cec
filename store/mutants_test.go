package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// These tests pin behaviour that mutation testing (scripts/mutation.sh)
// found no test asserting: each one fails under a one-line change to the
// store that the other tests let through.

// mutFixture is a store with an owner, an approver and one channel of the
// owner's.
type mutFixture struct {
	s               *Store
	owner, approver *User
	channel         *Channel
	consented       bool // the channel's rule names both, and both accepted
}

func newMutFixture(t *testing.T) *mutFixture {
	t.Helper()
	ctx := context.Background()
	s := openFoundation(t, filepath.Join(t.TempDir(), "herald.db"), Options{})
	f := &mutFixture{s: s}
	for i, u := range []**User{&f.owner, &f.approver} {
		*u = &User{Email: fmt.Sprintf("mut%d@example.com", i), Name: fmt.Sprintf("mut%d", i), Plan: "free"}
		if err := s.CreateUser(ctx, *u); err != nil {
			t.Fatal(err)
		}
	}
	f.channel = &Channel{UserID: f.owner.ID, Name: "deploys"}
	if err := s.CreateChannel(ctx, f.channel); err != nil {
		t.Fatal(err)
	}
	return f
}

// approvalMessage stores a message both users must approve within an hour,
// on the channel whose rule both accepted.
func (f *mutFixture) approvalMessage(t *testing.T, required int) *Message {
	t.Helper()
	if !f.consented {
		acceptApprovers(t, f.s, f.channel, f.owner, f.approver)
		f.consented = true
	}
	m := &Message{ChannelID: f.channel.ID, Title: "Deploy?", Priority: "normal",
		Approval: &ApprovalRule{RequiredCount: required, Approvers: []string{f.owner.ID, f.approver.ID}, WindowSeconds: 3600}}
	if err := f.s.CreateMessage(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return m
}

// pollResolver answers a resolution with a polling response and no callback.
func pollResolver(res Resolution) (json.RawMessage, *NewDelivery, error) {
	return json.RawMessage(`{"approval_status":"` + res.Status + `"}`), nil, nil
}

// TestCastVoteKeepsResponseData: a vote's response data is stored and
// handed to the resolution as sent; a vote without any is stored as {}.
func TestCastVoteKeepsResponseData(t *testing.T) {
	ctx := context.Background()
	f := newMutFixture(t)
	m := f.approvalMessage(t, 2)
	now := time.Now()

	res, err := f.s.CastVote(ctx, m.ID, Vote{UserID: f.owner.ID, UserName: "mut0", Action: "approve", RespondedAt: now}, pollResolver)
	if err != nil || res != nil {
		t.Fatalf("first vote: resolution %v, error %v; want none, nil", res, err)
	}
	data := json.RawMessage(`{"reason":"looks good"}`)
	res, err = f.s.CastVote(ctx, m.ID, Vote{UserID: f.approver.ID, UserName: "mut1", Action: "approve",
		ResponseData: data, RespondedAt: now.Add(time.Millisecond)}, pollResolver)
	if err != nil {
		t.Fatalf("second vote: %v", err)
	}
	if res == nil {
		t.Fatal("second vote: no resolution, want approved")
	}
	if got, want := string(res.Responses), string(data); got != want {
		t.Errorf("resolution responses = %s, want the deciding vote's %s", got, want)
	}

	votes, err := f.s.Votes(ctx, []string{m.ID})
	if err != nil {
		t.Fatal(err)
	}
	got := votes[m.ID]
	if len(got) != 2 {
		t.Fatalf("stored votes = %+v, want 2", got)
	}
	for i, want := range []string{`{}`, string(data)} {
		if string(got[i].ResponseData) != want {
			t.Errorf("vote %d (%s) response_data = %s, want %s", i, got[i].UserName, got[i].ResponseData, want)
		}
	}
}

// TestDeleteChannelWakesStreams: deleting a channel records message.deleted
// for the owner and every approver of its messages, and wakes the live
// streams once the deletion has committed. Deleting someone else's channel
// is ErrNotFound and records nothing.
func TestDeleteChannelWakesStreams(t *testing.T) {
	ctx := context.Background()
	f := newMutFixture(t)
	m := f.approvalMessage(t, 1)
	after := map[string]int64{}
	for _, u := range []*User{f.owner, f.approver} {
		events, err := f.s.EventsAfter(ctx, u.ID, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) == 0 {
			t.Fatalf("%s: no message.created event", u.Name)
		}
		after[u.ID] = events[len(events)-1].ID
	}

	wake, cancel := f.s.Subscribe(TopicEvents)
	defer cancel()

	if err := f.s.DeleteChannel(ctx, f.approver.ID, f.channel.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("DeleteChannel by a non-owner: %v, want ErrNotFound", err)
	}
	if _, err := f.s.Message(ctx, m.ID); err != nil {
		t.Fatalf("message after a refused deletion: %v", err)
	}
	for _, u := range []*User{f.owner, f.approver} {
		events, err := f.s.EventsAfter(ctx, u.ID, after[u.ID], 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 0 {
			t.Fatalf("%s: events after a refused deletion: %+v", u.Name, events)
		}
	}
	// Drain a signal the refused deletion may have left: the one that
	// matters is the next.
	select {
	case <-wake:
	default:
	}

	if err := f.s.DeleteChannel(ctx, f.owner.ID, f.channel.ID); err != nil {
		t.Fatalf("DeleteChannel: %v", err)
	}
	select {
	case <-wake:
	case <-time.After(10 * time.Second):
		t.Fatal("DeleteChannel committed without waking the event streams")
	}
	for _, u := range []*User{f.owner, f.approver} {
		events, err := f.s.EventsAfter(ctx, u.ID, after[u.ID], 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 1 || events[0].Type != EventDeleted || events[0].MessageID != m.ID || events[0].ChannelID != f.channel.ID {
			t.Errorf("%s: events after the deletion = %+v, want one %s of %s", u.Name, events, EventDeleted, m.ID)
		}
	}
	if _, err := f.s.Message(ctx, m.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("message after its channel's deletion: %v, want ErrNotFound", err)
	}
	if _, err := f.s.Channel(ctx, f.owner.ID, f.channel.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("channel after its deletion: %v, want ErrNotFound", err)
	}
}

// TestRecordAttemptLogged: the delivery log shows each attempt as recorded:
// when, how long, what error, and the status code, which an attempt that
// got no answer has none of; the delivery shows the last attempt's code.
func TestRecordAttemptLogged(t *testing.T) {
	ctx := context.Background()
	f := newMutFixture(t)
	m := &Message{ChannelID: f.channel.ID, Title: "Deploy?", Priority: "normal"}
	if err := f.s.CreateMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	body := json.RawMessage(`{"action":"approve"}`)
	if err := f.s.Respond(ctx, m.ID, body, time.Now(), &NewDelivery{ChannelID: f.channel.ID, Event: "response.received",
		URL: "https://hooks.example.com/h", Body: body}); err != nil {
		t.Fatal(err)
	}
	for i, step := range []struct {
		res  AttemptResult
		code *int
	}{
		{AttemptResult{At: time.Now(), Error: "connection refused", Duration: 1500 * time.Millisecond}, nil},
		{AttemptResult{At: time.Now().Add(time.Second), StatusCode: 503, Error: "receiver answered 503", Duration: 20 * time.Millisecond}, new(503)},
	} {
		jobs, err := f.s.ClaimDeliveries(ctx, 1, time.Minute)
		if err != nil || len(jobs) != 1 {
			t.Fatalf("claim: %v, %v", jobs, err)
		}
		if state, err := f.s.RecordAttempt(ctx, &jobs[0], step.res, 5, time.Now().Add(-time.Second)); err != nil || state != DeliveryPending {
			t.Fatalf("record attempt: %q, %v; want %q", state, err, DeliveryPending)
		}
		st, attempts, err := f.s.DeliveryLog(ctx, m.ID)
		if err != nil || len(attempts) != i+1 {
			t.Fatalf("log: %+v, %d attempts, %v", st, len(attempts), err)
		}
		a := attempts[i]
		if a.Attempt != i+1 || !a.At.Equal(step.res.At.Truncate(time.Millisecond)) || a.Duration != step.res.Duration || a.Error != step.res.Error {
			t.Errorf("attempt %d logged as %+v, want %+v", i+1, a, step.res)
		}
		if got := a.StatusCode; !sameCode(got, step.code) {
			t.Errorf("attempt %d: status code %s, want %s", i+1, showCode(got), showCode(step.code))
		}
		if got := st.LastStatusCode; !sameCode(got, step.code) {
			t.Errorf("after attempt %d: last status code %s, want %s", i+1, showCode(got), showCode(step.code))
		}
	}
}

func sameCode(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func showCode(c *int) string {
	if c == nil {
		return "none"
	}
	return fmt.Sprint(*c)
}

// TestRecordAttemptMovesMessage: each attempt moves the delivery on and
// the message's stream: the first attempt, delivery and dead-lettering
// each record a message.updated event (a further retry does not), and
// only dead-lettering turns the message's polling state to failed.
func TestRecordAttemptMovesMessage(t *testing.T) {
	ctx := context.Background()
	f := newMutFixture(t)
	const maxAttempts = 3
	for _, c := range []struct {
		name    string
		results []bool // success of each attempt
		states  []string
		events  []int // events recorded by each attempt
		polling string
	}{
		{"delivered at once", []bool{true}, []string{DeliveryDelivered}, []int{1}, StateSubmitted},
		{"delivered on the second attempt", []bool{false, true}, []string{DeliveryPending, DeliveryDelivered}, []int{1, 1}, StateSubmitted},
		{"dead-lettered", []bool{false, false, false}, []string{DeliveryPending, DeliveryPending, DeliveryFailed}, []int{1, 0, 1}, StateFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &Message{ChannelID: f.channel.ID, Title: c.name, Priority: "normal"}
			if err := f.s.CreateMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
			body := json.RawMessage(`{"action":"approve"}`)
			if err := f.s.Respond(ctx, m.ID, body, time.Now(), &NewDelivery{ChannelID: f.channel.ID, Event: "response.received",
				URL: "https://hooks.example.com/h", Body: body}); err != nil {
				t.Fatal(err)
			}
			last := lastEventID(t, f.s, f.owner.ID)
			for i, ok := range c.results {
				jobs, err := f.s.ClaimDeliveries(ctx, 1, time.Minute)
				if err != nil || len(jobs) != 1 || jobs[0].MessageID != m.ID {
					t.Fatalf("attempt %d: claim: %v, %v", i+1, jobs, err)
				}
				res := AttemptResult{At: time.Now(), StatusCode: 500, Error: "receiver answered 500", Success: ok}
				if ok {
					res = AttemptResult{At: time.Now(), StatusCode: 200, Success: true}
				}
				state, err := f.s.RecordAttempt(ctx, &jobs[0], res, maxAttempts, time.Now().Add(-time.Second))
				if err != nil || state != c.states[i] {
					t.Fatalf("attempt %d: %q, %v; want %q", i+1, state, err, c.states[i])
				}
				events, err := f.s.EventsAfter(ctx, f.owner.ID, last, 100)
				if err != nil {
					t.Fatal(err)
				}
				if len(events) != c.events[i] {
					t.Fatalf("attempt %d: events %+v, want %d", i+1, events, c.events[i])
				}
				for _, e := range events {
					if e.Type != EventUpdated || e.MessageID != m.ID {
						t.Errorf("attempt %d: event %+v, want %s of %s", i+1, e, EventUpdated, m.ID)
					}
					last = e.ID
				}
				st, _, err := f.s.DeliveryLog(ctx, m.ID)
				if err != nil || st.State != c.states[i] || st.Attempts != i+1 {
					t.Fatalf("attempt %d: delivery %+v, %v; want %s after %d attempts", i+1, st, err, c.states[i], i+1)
				}
			}
			got, err := f.s.Message(ctx, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != c.polling {
				t.Errorf("polling state = %q, want %q", got.State, c.polling)
			}
			if hasResponse := got.Response != nil; hasResponse != (c.polling == StateSubmitted) {
				t.Errorf("polling state %s with response %s", got.State, got.Response)
			}
		})
	}
}

// lastEventID is the id of userID's newest event, 0 when none.
func lastEventID(t *testing.T, s *Store, userID string) int64 {
	t.Helper()
	events, err := s.EventsAfter(context.Background(), userID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 {
		return 0
	}
	return events[len(events)-1].ID
}

// TestCreateMessageStoresWhatWasSent: a message's actions are stored as
// sent, [] when it has none; only a message with an approval window wakes
// the approval expirer.
func TestCreateMessageStoresWhatWasSent(t *testing.T) {
	ctx := context.Background()
	f := newMutFixture(t)
	wake := f.s.Wakeup(TopicApprovals)
	actions := json.RawMessage(`[{"id":"approve","label":"Approve"}]`)
	for _, c := range []struct {
		name     string
		msg      *Message
		actions  string
		approval bool
	}{
		{"actions", &Message{ChannelID: f.channel.ID, Title: "a", Priority: "normal", Actions: actions}, string(actions), false},
		{"no actions", &Message{ChannelID: f.channel.ID, Title: "b", Priority: "normal"}, `[]`, false},
		{"approval", &Message{ChannelID: f.channel.ID, Title: "c", Priority: "normal",
			Approval: &ApprovalRule{RequiredCount: 1, Approvers: []string{f.approver.ID}, WindowSeconds: 60}}, `[]`, true},
	} {
		if err := f.s.CreateMessage(ctx, c.msg); err != nil {
			t.Fatal(err)
		}
		woken := false
		select { // signalled before the write returned, if at all
		case <-wake:
			woken = true
		default:
		}
		if woken != c.approval {
			t.Errorf("%s: approval expirer woken %v, want %v", c.name, woken, c.approval)
		}
		got, err := f.s.Message(ctx, c.msg.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Actions) != c.actions {
			t.Errorf("%s: stored actions %s, want %s", c.name, got.Actions, c.actions)
		}
	}
}

// TestRespondKeepsOutcome: an answer's outcome is kept on the message for
// its owner, after the response itself is polled away; an answer without
// one keeps none.
func TestRespondKeepsOutcome(t *testing.T) {
	ctx := context.Background()
	f := newMutFixture(t)
	outcome := json.RawMessage(`{"action":"approve","user":"mut1"}`)
	for _, c := range []struct {
		name    string
		outcome json.RawMessage
	}{{"with an outcome", outcome}, {"without", nil}} {
		m := &Message{ChannelID: f.channel.ID, Title: c.name, Priority: "normal"}
		if err := f.s.CreateMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		if err := f.s.RespondWithOutcome(ctx, m.ID, json.RawMessage(`{"action":"approve"}`), c.outcome, time.Now(), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.ReadResponse(ctx, f.channel.ID, m.ID, time.Now().Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, err := f.s.Message(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != StateAlreadyRead || string(got.Outcome) != string(c.outcome) || (got.Outcome == nil) != (c.outcome == nil) {
			t.Errorf("%s: state %s, outcome %s; want %s, %s", c.name, got.State, got.Outcome, StateAlreadyRead, c.outcome)
		}
	}
}
