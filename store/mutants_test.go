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

// approvalMessage stores a message both users must approve within an hour.
func (f *mutFixture) approvalMessage(t *testing.T, required int) *Message {
	t.Helper()
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
