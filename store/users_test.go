package store

import (
	"context"
	"testing"
)

// TestDeleteUserWakesApprovers: deleting a user records message.deleted for
// the other approvers of their channels' messages and wakes the streams;
// deleting a user whose messages nobody else sees records and wakes
// nothing.
func TestDeleteUserWakesApprovers(t *testing.T) {
	ctx := context.Background()
	f := newPairFixture(t)
	m := f.approvalMessage(t, 1)
	loner := &User{Email: "loner@example.com", Plan: "free"}
	if err := f.s.CreateUser(ctx, loner); err != nil {
		t.Fatal(err)
	}
	own := &Channel{UserID: loner.ID, Name: "mine"}
	if err := f.s.CreateChannel(ctx, own); err != nil {
		t.Fatal(err)
	}
	if err := f.s.CreateMessage(ctx, &Message{ChannelID: own.ID, Title: "just me", Priority: "normal"}); err != nil {
		t.Fatal(err)
	}
	wake, cancel := f.s.Subscribe(TopicEvents)
	defer cancel()
	drain := func() bool {
		select {
		case <-wake:
			return true
		default:
			return false
		}
	}
	drain()
	after := lastEventID(t, f.s, f.approver.ID)

	if err := f.s.DeleteUser(ctx, loner.ID); err != nil {
		t.Fatal(err)
	}
	if drain() { // signalled before the write returned, if at all
		t.Error("deleting a user no one else shares messages with woke the streams")
	}

	if err := f.s.DeleteUser(ctx, f.owner.ID); err != nil {
		t.Fatal(err)
	}
	if !drain() {
		t.Error("deleting a user did not wake the streams of their messages' approvers")
	}
	events, err := f.s.EventsAfter(ctx, f.approver.ID, after, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].Type != EventDeleted || events[0].MessageID != m.ID {
		t.Errorf("approver's events after the owner's deletion: %+v, want one %s of %s", events, EventDeleted, m.ID)
	}
}
