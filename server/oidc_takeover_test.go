package server

import (
	"context"
	"errors"
	"testing"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/store"
)

// twoProviderEnv starts Herald with two providers: "homelab" (fakeA, with
// link_by_email) and "other" (fakeB, open sign-up).
func twoProviderEnv(t *testing.T) (env *testEnv, fakeA, fakeB *fakeIdP) {
	t.Helper()
	fakeA, fakeB = newFakeIdP(t), newFakeIdP(t)
	env = newTestEnv(t, func(c *config.Config) {
		c.Auth.Providers = []config.Provider{
			{Name: "homelab", Issuer: fakeA.URL, ClientID: idpClient, ClientSecret: idpSecret, LinkByEmail: true},
			{Name: "other", Issuer: fakeB.URL, ClientID: idpClient, ClientSecret: idpSecret},
		}
	})
	fakeA.setClock(env.clock.Now)
	fakeB.setClock(env.clock.Now)
	return env, fakeA, fakeB
}

// TestOIDCUnverifiedEmailClaimsNothing is the account takeover: someone
// signs up through one provider with another person's address, which that
// provider has not verified; the owner later signs in through a
// link_by_email provider that verified it. The owner must never land in
// the first person's account.
func TestOIDCUnverifiedEmailClaimsNothing(t *testing.T) {
	t.Parallel()
	env, fakeA, fakeB := twoProviderEnv(t)
	ctx := context.Background()

	for _, verified := range []any{false, "false", nil} {
		r := env.request("POST", "/v1/auth/other", map[string]any{"id_token": fakeB.token(map[string]any{
			"sub": "mallory", "email": "victim@example.com", "email_verified": verified})}, "")
		wantError(t, r, 403, "forbidden")
	}
	if _, err := env.st.UserByEmail(ctx, "victim@example.com"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an unverified address created a user (err %v)", err)
	}
	if n := oidcCount(t, env, "SELECT count(*) FROM identities"); n != 0 {
		t.Fatalf("%d identities after refused sign-ups", n)
	}

	// The owner signs up with the verified address and gets a fresh account.
	r := env.do(200, "POST", "/v1/auth/homelab", map[string]any{"id_token": fakeA.token(map[string]any{
		"sub": "victim", "email": "victim@example.com", "email_verified": true})}, "")
	owner := oidcUser(t, r)["id"]
	if n := oidcCount(t, env, "SELECT count(*) FROM identities WHERE user_id = $1", owner); n != 1 {
		t.Fatalf("owner has %d identities, want only their own", n)
	}

	// An unverified identity cannot join the owner's account afterwards
	// either, even through the linking provider.
	r = env.request("POST", "/v1/auth/homelab", map[string]any{"id_token": fakeA.token(map[string]any{
		"sub": "mallory-a", "email": "victim@example.com", "email_verified": false})}, "")
	wantError(t, r, 403, "forbidden")
	if n := oidcCount(t, env, "SELECT count(*) FROM identities WHERE user_id = $1", owner); n != 1 {
		t.Fatalf("owner has %d identities after an unverified link attempt, want 1", n)
	}
}

// TestOIDCLinkNeedsVerifiedAccount: an account whose own address was never
// verified (made by an OIDC sign-up before addresses were checked) is not
// linked into by a verified sign-in elsewhere, until its own identity
// signs in with the address verified.
func TestOIDCLinkNeedsVerifiedAccount(t *testing.T) {
	t.Parallel()
	env, fakeA, fakeB := twoProviderEnv(t)
	ctx := context.Background()

	squatter, _, err := env.st.SignInOIDC(ctx, store.OIDCSignIn{Provider: "other", Subject: "early",
		Email: "pat@example.com", EmailVerified: true, AllowSignup: true, Plan: "free"})
	if err != nil {
		t.Fatal(err)
	}
	setEmailVerified(t, env, squatter.ID, false) // as migration 0011 marks such a user

	link := map[string]any{"id_token": fakeA.token(map[string]any{
		"sub": "pat", "email": "pat@example.com", "email_verified": true})}
	wantError(t, env.request("POST", "/v1/auth/homelab", link, ""), 403, "forbidden")
	if n := oidcCount(t, env, "SELECT count(*) FROM identities WHERE user_id = $1", squatter.ID); n != 1 {
		t.Fatalf("%d identities on the unverified account, want 1", n)
	}

	// Its own identity signs in with the address verified: now it links.
	env.do(200, "POST", "/v1/auth/other", map[string]any{"id_token": fakeB.token(map[string]any{
		"sub": "early", "email": "pat@example.com", "email_verified": true})}, "")
	r := env.do(200, "POST", "/v1/auth/homelab", link, "")
	if got := oidcUser(t, r)["id"]; got != squatter.ID {
		t.Fatalf("linked into %v, want %s", got, squatter.ID)
	}

	// A user the operator made (CLI) is verified from the start.
	local := env.newUser("local@example.com")
	r = env.do(200, "POST", "/v1/auth/homelab", map[string]any{"id_token": fakeA.token(map[string]any{
		"sub": "local", "email": "local@example.com", "email_verified": true})}, "")
	if got := oidcUser(t, r)["id"]; got != local.ID {
		t.Fatalf("linked into %v, want the operator-made user %s", got, local.ID)
	}
}

func setEmailVerified(t *testing.T, env *testEnv, userID string, verified bool) {
	t.Helper()
	db := env.rawDB(t)
	defer db.Close()
	v := 0
	if verified {
		v = 1
	}
	if _, err := db.Exec("UPDATE users SET email_verified = $1 WHERE id = $2", v, userID); err != nil {
		t.Fatal(err)
	}
}
