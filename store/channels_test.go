package store

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

// TestDeleteChannelWakesStreams: deleting a channel records message.deleted
// for the owner and every approver of its messages, and wakes the live
// streams once the deletion has committed. Deleting someone else's channel
// is ErrNotFound and records nothing.
func TestDeleteChannelWakesStreams(t *testing.T) {
	ctx := context.Background()
	f := newPairFixture(t)
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

// TestUpdateChannelPatch: each field a patch sets is stored, a field it
// leaves out keeps its value, and a null clears the optional ones; the
// channel read back (by id and by token) is the one UpdateChannel returned.
func TestUpdateChannelPatch(t *testing.T) {
	ctx := context.Background()
	f := newPairFixture(t)
	folder := &Folder{UserID: f.owner.ID, Name: "prod"}
	if err := f.s.CreateFolder(ctx, folder); err != nil {
		t.Fatal(err)
	}
	foreign := &Folder{UserID: f.approver.ID, Name: "theirs"}
	if err := f.s.CreateFolder(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	muted := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	rule := ApprovalRule{RequiredCount: 1, Approvers: []string{f.approver.ID}, WindowSeconds: 600}
	tmpl := Template{Title: "{{.title}}", Body: "{{.body}}", Priority: "high", URL: "{{.url}}"}

	want := *f.channel
	steps := []struct {
		name  string
		patch ChannelPatch
		apply func(c *Channel)
	}{
		{"every field", ChannelPatch{
			Name: str("prod deploys"), Icon: str("rocket"), Color: str("#ff0000"),
			MutedUntil:   Optional[time.Time]{Set: true, Value: &muted},
			FolderID:     Optional[string]{Set: true, Value: &folder.ID},
			Approval:     Optional[ApprovalRule]{Set: true, Value: &rule},
			SourceSecret: str("s3cret"),
			Template:     Optional[Template]{Set: true, Value: &tmpl},
		}, func(c *Channel) {
			c.Name, c.Icon, c.Color, c.MutedUntil, c.FolderID = "prod deploys", "rocket", "#ff0000", &muted, &folder.ID
			c.Approval, c.SourceSecret, c.Template = &rule, "s3cret", &tmpl
		}},
		{"nothing", ChannelPatch{}, func(*Channel) {}},
		{"the name only", ChannelPatch{Name: str("deploys")}, func(c *Channel) { c.Name = "deploys" }},
		{"nulls", ChannelPatch{
			MutedUntil:   Optional[time.Time]{Set: true},
			FolderID:     Optional[string]{Set: true},
			Approval:     Optional[ApprovalRule]{Set: true},
			SourceSecret: str(""),
			Template:     Optional[Template]{Set: true},
		}, func(c *Channel) {
			c.MutedUntil, c.FolderID, c.Approval, c.SourceSecret, c.Template = nil, nil, nil, "", nil
		}},
	}
	for _, step := range steps {
		step.apply(&want)
		got, err := f.s.UpdateChannel(ctx, f.owner.ID, f.channel.ID, step.patch)
		if err != nil {
			t.Fatalf("%s: UpdateChannel: %v", step.name, err)
		}
		want.UpdatedAt = got.UpdatedAt
		checkChannel(t, step.name+": returned", got, &want)
		stored, err := f.s.Channel(ctx, f.owner.ID, f.channel.ID)
		if err != nil {
			t.Fatal(err)
		}
		checkChannel(t, step.name+": stored", stored, &want)
		byToken, _, err := f.s.ChannelByToken(ctx, f.channel.WebhookToken)
		if err != nil {
			t.Fatal(err)
		}
		checkChannel(t, step.name+": by token", byToken, &want)
	}

	for _, id := range []string{foreign.ID, "fld_missing"} {
		_, err := f.s.UpdateChannel(ctx, f.owner.ID, f.channel.ID, ChannelPatch{Name: str("moved"), FolderID: Optional[string]{Set: true, Value: &id}})
		if !errors.Is(err, ErrInvalidFolder) {
			t.Errorf("folder %s: %v, want ErrInvalidFolder", id, err)
		}
	}
	if _, err := f.s.UpdateChannel(ctx, f.approver.ID, f.channel.ID, ChannelPatch{Name: str("mine")}); !errors.Is(err, ErrNotFound) {
		t.Errorf("update by a non-owner: %v, want ErrNotFound", err)
	}
	stored, err := f.s.Channel(ctx, f.owner.ID, f.channel.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkChannel(t, "after refused updates", stored, &want)
}

// checkChannel compares every field of got with want.
func checkChannel(t *testing.T, what string, got, want *Channel) {
	t.Helper()
	g, w := *got, *want
	if !timesEqual(g.MutedUntil, w.MutedUntil) {
		t.Errorf("%s: muted until %v, want %v", what, g.MutedUntil, w.MutedUntil)
	}
	g.MutedUntil, w.MutedUntil = nil, nil
	if !g.CreatedAt.Equal(w.CreatedAt) || !g.UpdatedAt.Equal(w.UpdatedAt) {
		t.Errorf("%s: created %v, updated %v; want %v, %v", what, g.CreatedAt, g.UpdatedAt, w.CreatedAt, w.UpdatedAt)
	}
	g.CreatedAt, w.CreatedAt, g.UpdatedAt, w.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, g, w)
	}
}

func timesEqual(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
