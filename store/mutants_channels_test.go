package store

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestUpdateChannelPatch: each field a patch sets is stored, a field it
// leaves out keeps its value, and a null clears the optional ones; the
// channel read back (by id and by token) is the one UpdateChannel returned.
func TestUpdateChannelPatch(t *testing.T) {
	ctx := context.Background()
	f := newMutFixture(t)
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

// TestTokenCacheServesWithinLifetime: within its lifetime, a token lookup
// is answered from the cache, for every token looked up, so a change
// another process made (a second Store on the same file, like the CLI) is
// not seen yet; a change made through this store is.
func TestTokenCacheServesWithinLifetime(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "herald.db")
	st := openFoundation(t, path, Options{})
	other := openFoundation(t, path, Options{})
	u := &User{Email: "ttl@example.com", Plan: "free"}
	if err := st.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	var tokens []string
	for _, name := range []string{"a", "b"} {
		ch := &Channel{UserID: u.ID, Name: name}
		if err := st.CreateChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, ch.WebhookToken)
	}
	lookup := func(token string) string {
		t.Helper()
		_, plan, err := st.ChannelByToken(ctx, token)
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	plans := []string{"pro", "free"}
	// A loaded machine may take longer than the lifetime between the
	// lookups; then the later ones rightly read again: try once more.
	for attempt := 0; ; attempt++ {
		if attempt == 20 {
			t.Fatalf("no lookups within %v in %d attempts", tokenTTL, attempt)
		}
		st.tokens.invalidate() // as after a write of this store's: the next lookups read
		start := time.Now()
		cached := lookup(tokens[0])
		if plan := lookup(tokens[1]); plan != cached {
			t.Fatalf("plans %q and %q of one user", cached, plan)
		}
		next := plans[attempt%2]
		if next == cached {
			next = plans[(attempt+1)%2]
		}
		if err := other.SetUserPlan(ctx, u.ID, next); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, token := range tokens {
			got = append(got, lookup(token))
		}
		if time.Since(start) >= tokenTTL {
			continue
		}
		for i, plan := range got {
			if plan != cached {
				t.Fatalf("channel %d: plan %q within the cache lifetime, want the cached %q", i, plan, cached)
			}
		}
		break
	}
	// This store's own write applies at once.
	if err := st.SetUserPlan(ctx, u.ID, "team"); err != nil {
		t.Fatal(err)
	}
	for _, token := range tokens {
		if plan := lookup(token); plan != "team" {
			t.Fatalf("plan after this store's write = %q, want team", plan)
		}
	}
}
