package service

import (
	"context"
	"errors"
	"testing"

	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
)

// TestMessageOwnerRules: of a message on an approval channel, the owner
// may delete it and redeliver its callback; an approver named by its rule
// sees it but is refused both, in words that say why; anyone else finds
// nothing, not even the channel.
func TestMessageOwnerRules(t *testing.T) {
	t.Parallel()
	pgtest.ForEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		clk := testkit.NewClock()
		svc, owner := newTestService(t, dsn, clk)
		approver := &store.User{Email: "bob@example.com", Name: "Bob", Plan: "pro"}
		stranger := &store.User{Email: "eve@example.com", Name: "Eve", Plan: "pro"}
		for _, u := range []*store.User{approver, stranger} {
			if err := svc.st.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		ch := &store.Channel{Name: "Deploys"}
		if err := svc.CreateChannel(ctx, owner, ch); err != nil {
			t.Fatal(err)
		}
		rule := &store.ApprovalRule{Approvers: []string{"Bob@Example.com"}, RequiredCount: 1, WindowSeconds: 3600}
		ch, err := svc.UpdateChannel(ctx, owner.ID, ch.ID, store.ChannelPatch{Approval: store.Optional[store.ApprovalRule]{Set: true, Value: rule}})
		if err != nil {
			t.Fatal(err)
		}
		title := "Deploy?"
		m, err := svc.Send(ctx, ch, &SendPayload{Title: &title})
		if err != nil {
			t.Fatal(err)
		}

		wantKind(t, svc.DeleteMessage(ctx, approver, m.ID), Forbidden, "only the channel's owner can delete its messages")
		_, err = svc.Redeliver(ctx, approver, m.ID)
		wantKind(t, err, Forbidden, "only the channel's owner can redeliver its callbacks")
		_, _, err = svc.DeliveryLog(ctx, approver, m.ID)
		wantKind(t, err, Forbidden, "only the channel's owner can read its delivery log")
		_, err = svc.Redeliver(ctx, owner, m.ID)
		wantKind(t, err, NotFound, "message "+m.ID+" has no callback delivery")

		if err := svc.DeleteMessage(ctx, stranger, m.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("a stranger deletes: %v; want ErrNotFound", err)
		}
		if _, err := svc.Redeliver(ctx, stranger, m.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("a stranger redelivers: %v; want ErrNotFound", err)
		}
		if _, err := svc.ListMessages(ctx, stranger, store.MessageQuery{ChannelID: ch.ID, Limit: 10}); !errors.Is(err, ErrNotFound) {
			t.Errorf("a stranger lists the channel: %v; want ErrNotFound", err)
		}
		// The approver may list the channel; until they accept its
		// invitation, nothing of it is listed for them.
		page, err := svc.ListMessages(ctx, approver, store.MessageQuery{ChannelID: ch.ID, Limit: 10})
		if err != nil || len(page.Messages) != 0 {
			t.Errorf("the approver lists the channel: %+v, %v; want an empty page", page, err)
		}

		if err := svc.DeleteMessage(ctx, owner, m.ID); err != nil {
			t.Fatalf("the owner deletes: %v", err)
		}
		if _, _, err := svc.MessageFor(ctx, owner, m.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("after deletion: %v; want ErrNotFound", err)
		}
	})
}

// TestRefusedChangesNothing: a channel or device change that breaks a
// rule leaves what is stored as it was.
func TestRefusedChangesNothing(t *testing.T) {
	t.Parallel()
	pgtest.ForEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		clk := testkit.NewClock()
		svc, u := newTestService(t, dsn, clk)
		if err := svc.CreateChannel(ctx, u, &store.Channel{Name: " ", Color: "#123456"}); err == nil {
			t.Fatal("a channel without a name was created")
		}
		ch := &store.Channel{Name: "  Backups ", Color: "#1e90ff"}
		if err := svc.CreateChannel(ctx, u, ch); err != nil {
			t.Fatal(err)
		}
		if ch.Name != "Backups" || ch.Color != "#1E90FF" {
			t.Errorf("created as %q %q; want Backups #1E90FF", ch.Name, ch.Color)
		}
		name, bad := "Renamed", "blue"
		if _, err := svc.UpdateChannel(ctx, u.ID, ch.ID, store.ChannelPatch{Name: &name, Color: &bad}); err == nil {
			t.Fatal("a bad colour was taken")
		}
		got, err := svc.st.Channel(ctx, u.ID, ch.ID)
		if err != nil || got.Name != "Backups" || got.Color != "#1E90FF" {
			t.Errorf("after a refused change: %+v, %v; want it unchanged", got, err)
		}

		d := &store.Device{Platform: "ios", PushToken: "apns-token", Name: "phone"}
		token, err := svc.RegisterDevice(ctx, u, "ses_1", d)
		if err != nil || token != "" || d.SessionID != "" {
			t.Fatalf("register an ios device: token %q, session %q, %v; want none bound to the session", token, d.SessionID, err)
		}
		empty := ""
		if _, err := svc.UpdateDevice(ctx, u.ID, d.ID, store.DevicePatch{Name: &name, PushToken: &empty}); err == nil {
			t.Fatal("an empty push token was taken")
		}
		if _, err := svc.UpdateDevice(ctx, u.ID, d.ID, store.DevicePatch{}); err == nil {
			t.Fatal("an update that changes nothing was taken")
		}
		dev, err := svc.st.Device(ctx, u.ID, d.ID)
		if err != nil || dev.Name != "phone" || dev.PushToken != "apns-token" {
			t.Errorf("after refused updates: %+v, %v; want it unchanged", dev, err)
		}
	})
}
