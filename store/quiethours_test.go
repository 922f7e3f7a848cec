package store

import (
	"context"
	"errors"
	"testing"
)

// TestQuietHoursKeptAndCarried: quiet hours read back as set (the zero
// value before), an unknown user is ErrNotFound, and the push targets
// carry their own user's hours only while enabled.
func TestQuietHoursKeptAndCarried(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openFoundation(t, dsn, Options{})
		ann, bob := &User{Email: "ann@example.com", Plan: "free"}, &User{Email: "bob@example.com", Plan: "free"}
		for _, u := range []*User{ann, bob} {
			if err := s.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			if err := s.RegisterDevice(ctx, &Device{UserID: u.ID, Platform: "ios", Name: u.Email, PushToken: "tok-" + u.ID}); err != nil {
				t.Fatal(err)
			}
		}
		if q, err := s.QuietHours(ctx, ann.ID); err != nil || q != (QuietHours{}) {
			t.Fatalf("QuietHours before any = %+v, %v; want the zero value", q, err)
		}
		if _, err := s.QuietHours(ctx, "usr_nobody"); !errors.Is(err, ErrNotFound) {
			t.Errorf("QuietHours of an unknown user: %v, want ErrNotFound", err)
		}
		if err := s.SetQuietHours(ctx, "usr_nobody", QuietHours{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("SetQuietHours of an unknown user: %v, want ErrNotFound", err)
		}
		want := QuietHours{Enabled: true, Start: "22:30", End: "06:45", TimeZone: "Europe/Berlin", Mode: QuietSilent}
		if err := s.SetQuietHours(ctx, ann.ID, want); err != nil {
			t.Fatal(err)
		}
		if got, err := s.QuietHours(ctx, ann.ID); err != nil || got != want {
			t.Fatalf("QuietHours = %+v, %v; want %+v", got, err, want)
		}

		// An approval message: both users' devices are targets, each
		// with its own user's hours; disabled hours are none.
		ch := &Channel{UserID: ann.ID, Name: "ops"}
		if err := s.CreateChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}
		acceptApprovers(t, s, ch, ann, bob)
		m := &Message{ChannelID: ch.ID, Title: "Deploy?", Priority: "normal",
			Approval: &ApprovalRule{RequiredCount: 1, Approvers: []string{ann.ID, bob.ID}, WindowSeconds: 3600}}
		if err := s.CreateMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		if got := quietOfTargets(t, s, m.ID); len(got) != 2 || got[ann.ID] == nil || *got[ann.ID] != want || got[bob.ID] != nil {
			t.Errorf("targets' quiet hours = %v, want ann's %+v and none for bob", got, want)
		}
		off := want
		off.Enabled = false
		if err := s.SetQuietHours(ctx, ann.ID, off); err != nil {
			t.Fatal(err)
		}
		if got := quietOfTargets(t, s, m.ID); len(got) != 2 || got[ann.ID] != nil {
			t.Errorf("targets' quiet hours once disabled = %v, want none", got)
		}
		if got, err := s.QuietHours(ctx, ann.ID); err != nil || got != off {
			t.Errorf("QuietHours once disabled = %+v, %v; want %+v (kept for next time)", got, err, off)
		}
	})
}

func quietOfTargets(t *testing.T, s *Store, messageID string) map[string]*QuietHours {
	t.Helper()
	devs, err := s.PushTargets(context.Background(), messageID, "", PushMessage)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*QuietHours{}
	for _, d := range devs {
		out[d.UserID] = d.Quiet
	}
	return out
}
