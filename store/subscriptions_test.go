package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// A user's plan is pro while any of their subscriptions is active; the
// sweep ends them one by one; deleting the user deletes them.
func TestSubscriptionsDecidePlan(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		clk := testkit.NewClockAt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		s := openFoundation(t, dsn, Options{Now: clk.Now})
		u := &User{Email: "sub@example.com", Plan: "free"}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		plan := func() string {
			t.Helper()
			got, err := s.UserByID(ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got.Plan
		}
		at := func(d time.Duration) *time.Time { e := clk.Now().Add(d); return &e }

		soon := &Subscription{Store: "apple", OriginalID: "a1", UserID: u.ID, ProductID: "pro.m", Status: SubscriptionActive, ExpiresAt: at(time.Hour)}
		later := &Subscription{Store: "google", OriginalID: "g1", UserID: u.ID, ProductID: "pro", Status: SubscriptionActive, ExpiresAt: at(3 * time.Hour)}
		for _, sub := range []*Subscription{soon, later} {
			if err := s.SaveSubscription(ctx, sub, "pro", "free"); err != nil {
				t.Fatal(err)
			}
		}
		if p := plan(); p != "pro" {
			t.Fatalf("plan = %s with two active subscriptions", p)
		}
		if got, err := s.UserSubscription(ctx, u.ID); err != nil || got.OriginalID != "g1" {
			t.Fatalf("UserSubscription = %+v, %v; want the one that ends last", got, err)
		}

		// Another user cannot take over a purchase.
		other := &User{Email: "other@example.com", Plan: "free"}
		if err := s.CreateUser(ctx, other); err != nil {
			t.Fatal(err)
		}
		steal := *soon
		steal.UserID = other.ID
		if err := s.SaveSubscription(ctx, &steal, "pro", "free"); !errors.Is(err, ErrPurchaseTaken) {
			t.Fatalf("saving another user's purchase: %v, want ErrPurchaseTaken", err)
		}

		clk.Advance(2 * time.Hour)
		if n, err := s.ExpireSubscriptions(ctx, "pro", "free"); err != nil || n != 1 {
			t.Fatalf("ExpireSubscriptions = %d, %v; want 1", n, err)
		}
		if p := plan(); p != "pro" {
			t.Fatalf("plan = %s while the second subscription runs", p)
		}
		clk.Advance(2 * time.Hour)
		if n, err := s.ExpireSubscriptions(ctx, "pro", "free"); err != nil || n != 1 {
			t.Fatalf("ExpireSubscriptions = %d, %v; want 1", n, err)
		}
		if p := plan(); p != "free" {
			t.Fatalf("plan = %s after both ended", p)
		}
		if n, err := s.ExpireSubscriptions(ctx, "pro", "free"); err != nil || n != 0 {
			t.Fatalf("ExpireSubscriptions again = %d, %v; want 0", n, err)
		}

		// An active status with an end date already past is stored as expired.
		stale := &Subscription{Store: "apple", OriginalID: "a2", UserID: u.ID, ProductID: "pro.m", Status: SubscriptionActive, ExpiresAt: at(-time.Minute)}
		if err := s.SaveSubscription(ctx, stale, "pro", "free"); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Subscription(ctx, "apple", "a2"); got == nil || got.Status != SubscriptionExpired || plan() != "free" {
			t.Fatalf("stale subscription stored as %+v, plan %s", got, plan())
		}

		if err := s.DeleteUser(ctx, u.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Subscription(ctx, "google", "g1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("a deleted user's subscription is still there: %v", err)
		}
	})
}

// TestExpireSubscriptionsOfSeveralUsers: one sweep that ends the
// subscriptions of several users moves each of them back to the default
// plan, and the token lookup sees each new plan at once.
func TestExpireSubscriptionsOfSeveralUsers(t *testing.T) {
	ctx := context.Background()
	clk := testkit.NewClockAt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
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
