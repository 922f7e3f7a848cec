package service

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
)

// Lifetimes of the sessions under test: short enough to name, different
// enough that a mix-up shows.
const (
	testSessionTTL = time.Hour
	testRefreshTTL = 48 * time.Hour
)

// onEachDatabaseAt is onEachDatabase with the store and the rules on clock
// clk and the session lifetimes above.
func onEachDatabaseAt(t *testing.T, body func(t *testing.T, s *Service, st *store.Store, clk *testkit.Clock)) {
	t.Helper()
	pgtest.ForEachBackend(t, func(t *testing.T, dsn string) {
		clk := testkit.NewClock()
		st, err := store.Open(context.Background(), dsn, store.Options{Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		s := New(st, Options{Now: clk.Now, DefaultPlan: config.PlanPro, SessionTTL: testSessionTTL, RefreshTTL: testRefreshTTL})
		body(t, s, st, clk)
	})
}

// signsIn reports whether access still signs userID in.
func signsIn(t *testing.T, s *Service, access, userID string) bool {
	t.Helper()
	c, err := s.SessionCaller(t.Context(), access)
	if errors.Is(err, ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	if c.User.ID != userID {
		t.Fatalf("access token signs in %s, want %s", c.User.ID, userID)
	}
	return true
}

// newUser creates a user; with password "", one without a local password.
func newUser(t *testing.T, s *Service, email, password string) *store.User {
	t.Helper()
	u, err := s.CreateUser(t.Context(), NewUser{Email: email, Password: password, NoPassword: password == ""})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestSessionLifetimes: an app's access token lives the session lifetime and
// its refresh token the refresh lifetime; a browser's access token lives the
// refresh lifetime and it is given no refresh token.
func TestSessionLifetimes(t *testing.T) {
	onEachDatabaseAt(t, func(t *testing.T, s *Service, st *store.Store, clk *testkit.Clock) {
		ctx := t.Context()
		u := newUser(t, s, "ann@example.com", "")
		start := clk.Now()
		app, err := s.StartSession(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		browser, err := s.StartBrowserSession(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !app.AccessExpiresAt.Equal(start.Add(testSessionTTL)) || !app.RefreshExpiresAt.Equal(start.Add(testRefreshTTL)) ||
			app.AccessToken == "" || app.RefreshToken == "" || app.SessionID == "" {
			t.Errorf("app session %+v, want access until +%v, refresh until +%v", app, testSessionTTL, testRefreshTTL)
		}
		if !browser.AccessExpiresAt.Equal(start.Add(testRefreshTTL)) || browser.RefreshToken != "" || browser.SessionID == "" {
			t.Errorf("browser session %+v, want access until +%v and no refresh token", browser, testRefreshTTL)
		}
		c, err := s.SessionCaller(ctx, app.AccessToken)
		if err != nil || c.SessionID != app.SessionID || c.KeyID != "" || !c.Expires.Equal(app.AccessExpiresAt) {
			t.Errorf("caller %+v, %v; want session %s until %v", c, err, app.SessionID, app.AccessExpiresAt)
		}

		clk.Advance(testSessionTTL + time.Second)
		if signsIn(t, s, app.AccessToken, u.ID) {
			t.Error("the app's access token works past the session lifetime")
		}
		if !signsIn(t, s, browser.AccessToken, u.ID) {
			t.Error("the browser's session ended with the session lifetime, want the refresh lifetime")
		}
		renewed, _, err := s.RefreshSession(ctx, app.RefreshToken)
		if err != nil {
			t.Fatalf("refresh after the access token expired: %v", err)
		}
		if !renewed.AccessExpiresAt.Equal(clk.Now().Add(testSessionTTL)) || renewed.SessionID != app.SessionID {
			t.Errorf("renewed %+v, want session %s with access until +%v", renewed, app.SessionID, testSessionTTL)
		}

		clk.Advance(testRefreshTTL)
		if signsIn(t, s, browser.AccessToken, u.ID) {
			t.Error("the browser's session works past the refresh lifetime")
		}
		_, _, err = s.RefreshSession(ctx, renewed.RefreshToken)
		wantKind(t, err, Unauthenticated, "invalid or expired refresh token")
	})
}

// TestRefreshRotation: a refresh token works once. The exchange hands out
// a new pair and retires the old access token; the spent refresh token,
// presented again, ends the session, whoever holds which token.
func TestRefreshRotation(t *testing.T) {
	onEachDatabaseAt(t, func(t *testing.T, s *Service, st *store.Store, clk *testkit.Clock) {
		ctx := t.Context()
		u := newUser(t, s, "ann@example.com", "")
		first, err := s.StartSession(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		second, who, err := s.RefreshSession(ctx, first.RefreshToken)
		if err != nil {
			t.Fatal(err)
		}
		if who.ID != u.ID || second.AccessToken == first.AccessToken || second.RefreshToken == first.RefreshToken {
			t.Errorf("refresh gave user %s and %+v, want %s with a new pair", who.ID, second, u.ID)
		}
		if signsIn(t, s, first.AccessToken, u.ID) || !signsIn(t, s, second.AccessToken, u.ID) {
			t.Error("after a refresh, want the old access token retired and the new one working")
		}

		for _, c := range []struct {
			name, token string
			kind        Kind
			msg         string
			reused      bool
		}{
			{"empty", "", Invalid, "refresh_token is required", false},
			{"unknown", "not-a-refresh-token", Unauthenticated, "invalid or expired refresh token", false},
			{"an access token", second.AccessToken, Unauthenticated, "invalid or expired refresh token", false},
			{"spent", first.RefreshToken, Unauthenticated,
				"refresh token was already used; the session has been revoked, sign in again", true},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, _, err := s.RefreshSession(ctx, c.token)
				wantKind(t, err, c.kind, c.msg)
				if errors.Is(err, ErrRefreshReused) != c.reused {
					t.Errorf("errors.Is(err, ErrRefreshReused) = %v, want %v", !c.reused, c.reused)
				}
			})
		}
		if signsIn(t, s, second.AccessToken, u.ID) {
			t.Error("the session still works after its spent refresh token came back")
		}
		if _, _, err := s.RefreshSession(ctx, second.RefreshToken); err == nil {
			t.Error("the ended session's current refresh token still works")
		}
	})
}

// TestSignOut: EndSession ends one session (twice is no error);
// EndUserSessions ends every session of one user and no other user's, and
// API keys keep working; a password change ends every session but the one
// that asked.
func TestSignOut(t *testing.T) {
	onEachDatabaseAt(t, func(t *testing.T, s *Service, st *store.Store, clk *testkit.Clock) {
		ctx := t.Context()
		ann := newUser(t, s, "ann@example.com", testkit.GoodPassword)
		bob := newUser(t, s, "bob@example.com", "")
		start := func(u *store.User) *Grant {
			t.Helper()
			g, err := s.StartSession(ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			return g
		}
		a1, a2, b1 := start(ann), start(ann), start(bob)
		_, key, err := s.CreateAPIKey(ctx, ann.ID, "ci")
		if err != nil {
			t.Fatal(err)
		}

		for range 2 {
			if err := s.EndSession(ctx, a1.SessionID); err != nil {
				t.Fatalf("EndSession: %v", err)
			}
		}
		if signsIn(t, s, a1.AccessToken, ann.ID) || !signsIn(t, s, a2.AccessToken, ann.ID) {
			t.Error("EndSession: want only that session ended")
		}

		a3 := start(ann)
		if err := s.ChangePassword(ctx, ann, a3.SessionID, testkit.GoodPassword, "another good password"); err != nil {
			t.Fatal(err)
		}
		if signsIn(t, s, a2.AccessToken, ann.ID) || !signsIn(t, s, a3.AccessToken, ann.ID) {
			t.Error("ChangePassword: want every other session ended and the asking one kept")
		}

		if err := s.EndUserSessions(ctx, ann.ID); err != nil {
			t.Fatal(err)
		}
		if signsIn(t, s, a3.AccessToken, ann.ID) || !signsIn(t, s, b1.AccessToken, bob.ID) {
			t.Error("EndUserSessions: want every session of ann ended and bob's kept")
		}
		if c, err := s.KeyCaller(ctx, key); err != nil || c.User.ID != ann.ID {
			t.Errorf("ann's API key after EndUserSessions: %+v, %v; want it working", c, err)
		}
	})
}

// TestCheckPassword: the right password signs its user in; a wrong one, an
// unknown email and an account without a password are all the same
// ErrWrongPassword.
func TestCheckPassword(t *testing.T) {
	onEachDatabaseAt(t, func(t *testing.T, s *Service, st *store.Store, clk *testkit.Clock) {
		ctx := t.Context()
		ann := newUser(t, s, "ann@example.com", testkit.GoodPassword)
		newUser(t, s, "oidc@example.com", "")
		u, err := s.CheckPassword(ctx, "ann@example.com", testkit.GoodPassword)
		if err != nil || u.ID != ann.ID {
			t.Errorf("right password: %v, %v; want ann", u, err)
		}
		for _, c := range []struct{ name, email, password string }{
			{"wrong password", "ann@example.com", "not the password"},
			{"unknown email", "nobody@example.com", testkit.GoodPassword},
			{"no password", "oidc@example.com", testkit.GoodPassword},
			{"empty password", "oidc@example.com", ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				if u, err := s.CheckPassword(ctx, c.email, c.password); !errors.Is(err, ErrWrongPassword) || u != nil {
					t.Errorf("got %v, %v; want ErrWrongPassword", u, err)
				}
			})
		}
	})
}

// TestKeyUse: signing in with an API key writes nothing until FlushKeyUse,
// which records the latest use; a revoked key signs nobody in.
func TestKeyUse(t *testing.T) {
	onEachDatabaseAt(t, func(t *testing.T, s *Service, st *store.Store, clk *testkit.Clock) {
		ctx := t.Context()
		ann := newUser(t, s, "ann@example.com", "")
		k, key, err := s.CreateAPIKey(ctx, ann.ID, "ci")
		if err != nil {
			t.Fatal(err)
		}
		lastUsed := func() *time.Time {
			t.Helper()
			keys, err := st.ListAPIKeys(ctx, ann.ID)
			if err != nil || len(keys) != 1 {
				t.Fatalf("keys %v, %v", keys, err)
			}
			return keys[0].LastUsedAt
		}
		if _, err := s.KeyCaller(ctx, key); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Minute)
		c, err := s.KeyCaller(ctx, key)
		if err != nil || c.KeyID != k.ID || c.User.ID != ann.ID || c.SessionID != "" {
			t.Fatalf("caller %+v, %v; want ann by key %s", c, err, k.ID)
		}
		if got := lastUsed(); got != nil {
			t.Errorf("last used %v before the flush, want none", got)
		}
		if err := s.FlushKeyUse(ctx); err != nil {
			t.Fatal(err)
		}
		if got := lastUsed(); got == nil || !got.Equal(clk.Now()) {
			t.Errorf("last used %v after the flush, want %v", got, clk.Now())
		}

		if err := s.RevokeAPIKey(ctx, ann.ID, k.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.KeyCaller(ctx, key); !errors.Is(err, ErrNotFound) {
			t.Errorf("revoked key: %v, want ErrNotFound", err)
		}
		if _, err := s.SessionCaller(ctx, key); !errors.Is(err, ErrNotFound) {
			t.Errorf("an API key as a session token: %v, want ErrNotFound", err)
		}
	})
}
