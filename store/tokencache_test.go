package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

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
