package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestExpireSubscriptionsOfSeveralUsers: one sweep that ends the
// subscriptions of several users moves each of them back to the default
// plan, and the token lookup sees each new plan at once.
func TestExpireSubscriptionsOfSeveralUsers(t *testing.T) {
	ctx := context.Background()
	clk := &foundationClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := openFoundation(t, filepath.Join(t.TempDir(), "herald.db"), Options{Now: clk.Now})
	ends := clk.Now().Add(time.Hour)
	var users []*User
	var tokens []string
	for i := range 3 {
		u := &User{Email: fmt.Sprintf("sub%d@example.com", i), Plan: "free"}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		ch := &Channel{UserID: u.ID, Name: "c"}
		if err := s.CreateChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}
		sub := &Subscription{Store: "apple", OriginalID: fmt.Sprintf("a%d", i), UserID: u.ID, ProductID: "pro.m",
			Status: SubscriptionActive, ExpiresAt: &ends}
		if err := s.SaveSubscription(ctx, sub, "pro", "free"); err != nil {
			t.Fatal(err)
		}
		users, tokens = append(users, u), append(tokens, ch.WebhookToken)
	}
	for i, token := range tokens { // now cached
		if _, plan, err := s.ChannelByToken(ctx, token); err != nil || plan != "pro" {
			t.Fatalf("user %d: plan %q, %v; want pro while subscribed", i, plan, err)
		}
	}
	clk.Advance(2 * time.Hour)
	if n, err := s.ExpireSubscriptions(ctx, "pro", "free"); err != nil || n != len(users) {
		t.Fatalf("ExpireSubscriptions = %d, %v; want %d", n, err, len(users))
	}
	for i, u := range users {
		got, err := s.UserByID(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Plan != "free" {
			t.Errorf("user %d: plan %s after the subscription ended, want free", i, got.Plan)
		}
		if _, plan, err := s.ChannelByToken(ctx, tokens[i]); err != nil || plan != "free" {
			t.Errorf("user %d: token lookup plan %q, %v; want free at once", i, plan, err)
		}
	}
}

// TestDeleteUserWakesApprovers: deleting a user records message.deleted for
// the other approvers of their channels' messages and wakes the streams;
// deleting a user whose messages nobody else sees records and wakes
// nothing.
func TestDeleteUserWakesApprovers(t *testing.T) {
	ctx := context.Background()
	f := newMutFixture(t)
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
