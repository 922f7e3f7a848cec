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
