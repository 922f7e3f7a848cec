package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestCreateMessageStoresWhatWasSent: a message's actions are stored as
// sent, [] when it has none; only a message with an approval window wakes
// the approval expirer.
func TestCreateMessageStoresWhatWasSent(t *testing.T) {
	ctx := context.Background()
	f := newPairFixture(t)
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
	f := newPairFixture(t)
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

// TestAnswerWakesPusherForBrowsers: answering a message queues the push
// that replaces its notification, and wakes the pusher, only when a
// recipient has a browser to replace it on.
func TestAnswerWakesPusherForBrowsers(t *testing.T) {
	ctx := context.Background()
	f := newPairFixture(t)
	wake := f.s.Wakeup(TopicPush)
	for _, browser := range []bool{false, true} {
		if browser {
			d := &Device{UserID: f.owner.ID, Platform: "web", Name: "Firefox", PushToken: "https://push.example.com/sub/1"}
			if err := f.s.RegisterDevice(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		m := &Message{ChannelID: f.channel.ID, Title: "Deploy?", Priority: "normal"}
		if err := f.s.CreateMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		select { // the send's own wake-up
		case <-wake:
		default:
			t.Fatal("a send did not wake the pusher")
		}
		if err := f.s.Respond(ctx, m.ID, json.RawMessage(`{"action":"approve"}`), time.Now(), nil); err != nil {
			t.Fatal(err)
		}
		var jobs int
		if err := f.s.read.QueryRowContext(ctx, "SELECT count(*) FROM push_jobs WHERE message_id = ? AND kind = ?", m.ID, PushUpdate).Scan(&jobs); err != nil {
			t.Fatal(err)
		}
		woken := false
		select { // signalled before the write returned, if at all
		case <-wake:
			woken = true
		default:
		}
		want := 0
		if browser {
			want = 1
		}
		if jobs != want || woken != browser {
			t.Errorf("browser %v: %d update push jobs, pusher woken %v; want %d, %v", browser, jobs, woken, want, browser)
		}
	}
}
