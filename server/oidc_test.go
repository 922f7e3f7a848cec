package server

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
)

// oidcEnv starts Herald with one provider, "homelab", served by fake, and
// makes the fake mint tokens on the server's frozen clock.
func oidcEnv(t *testing.T, fake *fakeIdP, configure ...func(*config.Config)) *testEnv {
	t.Helper()
	base := func(c *config.Config) {
		c.Auth.Providers = []config.Provider{{Name: "homelab", Issuer: fake.URL, ClientID: idpClient,
			ClientSecret: idpSecret, Scopes: []string{"openid", "email", "profile"}, ExtraAudiences: []string{"ios-app"},
			AdminClaim: "groups", AdminValues: []string{"herald-admins"}}}
	}
	env := newTestEnv(t, append([]func(*config.Config){base}, configure...)...)
	fake.setClock(env.clock.Now)
	return env
}

// oidcSignIn posts body to POST /v1/auth/homelab.
func oidcSignIn(env *testEnv, body map[string]any) response {
	env.t.Helper()
	return env.request("POST", "/v1/auth/homelab", body, "")
}

// oidcDo is env.do for subtests: it fails t, not the test that made env.
func oidcDo(t *testing.T, env *testEnv, want int, method, path string, body any, token string) response {
	t.Helper()
	r := env.request(method, path, body, token)
	if r.Status != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.Status, want, r.Raw)
	}
	return r
}

// oidcUser returns the "user" object of a session response.
func oidcUser(t *testing.T, r response) map[string]any {
	t.Helper()
	u, ok := r.Body["user"].(map[string]any)
	if !ok {
		t.Fatalf("no user object in %s", r.Raw)
	}
	return u
}

// oidcCount runs a count query on a read-only connection to env's database.
func oidcCount(t *testing.T, env *testEnv, query string, args ...any) int {
	t.Helper()
	db := env.rawDB(t)
	defer db.Close()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestOIDCSignInWithIDToken(t *testing.T) {
	t.Parallel()
	fake := newFakeIdP(t)
	env := oidcEnv(t, fake, func(c *config.Config) { c.DefaultPlan = "pro" })
	ctx := context.Background()

	r := env.do(200, "POST", "/v1/auth/homelab", map[string]any{"id_token": fake.token(nil)}, "")
	for _, k := range []string{"access_token", "refresh_token", "expires_at"} {
		if r.Str(k) == "" {
			t.Fatalf("sign-in response has no %s: %s", k, r.Raw)
		}
	}
	if got, want := r.Str("token_type"), "Bearer"; got != want {
		t.Fatalf("token_type = %q, want %q", got, want)
	}
	exp, err := time.Parse(time.RFC3339Nano, r.Str("expires_at"))
	if err != nil {
		t.Fatalf("expires_at %q: %v", r.Str("expires_at"), err)
	}
	if got, want := exp, env.clock.Now().Add(env.cfg.Auth.SessionTTL.Duration); !got.Equal(want) {
		t.Fatalf("expires_at = %v, want %v", got, want)
	}
	u := oidcUser(t, r)
	id, _ := u["id"].(string)
	if !strings.HasPrefix(id, "usr_") {
		t.Fatalf("user id %q", id)
	}
	for k, want := range map[string]any{"email": "alice@example.com", "name": "Alice", "plan": "pro", "is_admin": false} {
		if got := u[k]; got != want {
			t.Fatalf("user.%s = %v, want %v", k, got, want)
		}
	}

	me := env.do(200, "GET", "/v1/auth/me", nil, r.Str("access_token"))
	if got := me.Str("id"); got != id {
		t.Fatalf("/v1/auth/me id = %q, want %q", got, id)
	}
	stored, err := env.st.UserByEmail(ctx, "alice@example.com")
	if err != nil {
		t.Fatalf("first sign-in did not create the user: %v", err)
	}
	if stored.ID != id {
		t.Fatalf("stored user %s, response user %s", stored.ID, id)
	}

	// The same (provider, subject) is the same user, whatever the email says now.
	r = env.do(200, "POST", "/v1/auth/homelab", map[string]any{"id_token": fake.token(map[string]any{"email": "alice@new.example"})}, "")
	if got := oidcUser(t, r)["id"]; got != id {
		t.Fatalf("second sign-in user %v, want %s", got, id)
	}
	if n := oidcCount(t, env, "SELECT count(*) FROM users"); n != 1 {
		t.Fatalf("%d users after two sign-ins of one subject, want 1", n)
	}
}

func TestOIDCSignInTokenChecks(t *testing.T) {
	t.Parallel()
	fake := newFakeIdP(t)
	env := oidcEnv(t, fake)
	now := env.clock.Now()
	defaults := map[string]any{"sub": "user-1", "email": "alice@example.com", "email_verified": true}

	tests := []struct {
		name   string
		token  string
		nonce  string
		status int
		want   string // in the message
	}{
		{"client_id audience", fake.token(nil), "", 200, ""},
		{"wrong audience", fake.token(map[string]any{"aud": "someone-else"}), "", 401, "audience"},
		{"extra audience", fake.token(map[string]any{"aud": "ios-app"}), "", 200, ""},
		{"audience list", fake.token(map[string]any{"aud": []string{"other-app", "herald"}}), "", 200, ""},
		{"audience list without us", fake.token(map[string]any{"aud": []string{"other-app", "web"}}), "", 401, "audience"},
		{"wrong issuer", fake.token(map[string]any{"iss": "https://evil.example"}), "", 401, "issuer"},
		{"expired", fake.token(map[string]any{"iat": now.Add(-2 * time.Hour).Unix(), "exp": now.Add(-time.Minute).Unix()}), "", 401, "expired"},
		{"bad signature", fake.sign(fake.other, idpKID, fake.claims(defaults)), "", 401, "signature"},
		{"unknown kid", fake.sign(fake.other, "rotated-away", fake.claims(defaults)), "", 401, "key"},
		{"malformed", "abc", "", 401, "malformed"},
		{"nonce matches", fake.token(map[string]any{"nonce": "n1"}), "n1", 200, ""},
		{"nonce differs", fake.token(map[string]any{"nonce": "n2"}), "n1", 401, "nonce"},
		{"nonce missing from token", fake.token(nil), "n1", 401, "nonce"},
		{"no email claim on a new identity", fake.token(map[string]any{"email": nil, "sub": "never-seen"}), "", 401, "email"},
		{"no email claim on a known identity", fake.token(map[string]any{"email": nil}), "", 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"id_token": tc.token}
			if tc.nonce != "" {
				body["nonce"] = tc.nonce
			}
			r := oidcSignIn(env, body)
			if tc.status == 200 {
				if r.Status != 200 {
					t.Fatalf("status %d, want 200: %s", r.Status, r.Raw)
				}
				return
			}
			wantError(t, r, tc.status, "invalid_token")
			msg := r.Str("message")
			if !strings.Contains(strings.ToLower(msg), tc.want) {
				t.Fatalf("message %q does not mention %q", msg, tc.want)
			}
			if strings.Contains(string(r.Raw), tc.token) || strings.Contains(string(r.Raw), idpSecret) {
				t.Fatalf("error response echoes the token or the client secret: %s", r.Raw)
			}
			if tc.token != "abc" && strings.Contains(string(r.Raw), strings.Split(tc.token, ".")[2]) {
				t.Fatalf("error response echoes the token's signature: %s", r.Raw)
			}
		})
	}

	t.Run("neither id_token nor code", func(t *testing.T) {
		wantError(t, oidcSignIn(env, map[string]any{}), 400, "invalid_payload")
	})
	t.Run("unknown field", func(t *testing.T) {
		wantError(t, oidcSignIn(env, map[string]any{"id_token": fake.token(nil), "access_token": "x"}), 400, "invalid_payload")
	})
}

func TestOIDCLinkByEmail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		link     bool
		verified any
		status   int
	}{
		{"linking off", false, true, 403},
		{"linking on, verified", true, true, 200},
		{"linking on, verified as a string (Apple)", true, "true", 200},
		{"linking on, unverified", true, false, 403},
		{"linking on, verified claim missing", true, nil, 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := newFakeIdP(t)
			env := oidcEnv(t, fake, func(c *config.Config) { c.Auth.Providers[0].LinkByEmail = tc.link })
			pat := env.newUser("pat@example.com")
			// The IdP may spell the address differently; emails match case-insensitively.
			tok := fake.token(map[string]any{"sub": "pat-at-idp", "email": "Pat@Example.com", "email_verified": tc.verified})
			r := oidcSignIn(env, map[string]any{"id_token": tok})
			if tc.status == 200 {
				if r.Status != 200 {
					t.Fatalf("status %d, want 200: %s", r.Status, r.Raw)
				}
				if got := oidcUser(t, r)["id"]; got != pat.ID {
					t.Fatalf("linked sign-in is user %v, want the local user %s", got, pat.ID)
				}
				if n := oidcCount(t, env, "SELECT count(*) FROM identities WHERE user_id = $1", pat.ID); n != 1 {
					t.Fatalf("%d identities for the local user, want 1", n)
				}
				return
			}
			wantError(t, r, 403, "forbidden")
			if n := oidcCount(t, env, "SELECT count(*) FROM identities"); n != 0 {
				t.Fatalf("a refused link left %d identities", n)
			}
			if n := oidcCount(t, env, "SELECT count(*) FROM users"); n != 1 {
				t.Fatalf("a refused link left %d users, want 1", n)
			}
			// And the refusal is stable: nothing was half-linked by the first try.
			wantError(t, oidcSignIn(env, map[string]any{"id_token": tok}), 403, "forbidden")
		})
	}
}

func TestOIDCAllowSignupOff(t *testing.T) {
	t.Parallel()
	fake := newFakeIdP(t)
	off := false
	env := oidcEnv(t, fake, func(c *config.Config) { c.Auth.Providers[0].AllowSignup = &off })
	ctx := context.Background()

	r := oidcSignIn(env, map[string]any{"id_token": fake.token(map[string]any{"sub": "newcomer", "email": "new@example.com"})})
	wantError(t, r, 403, "forbidden")
	if _, err := env.st.UserByEmail(ctx, "new@example.com"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("refused sign-up created a user (err %v)", err)
	}
	if n := oidcCount(t, env, "SELECT count(*) FROM users"); n != 0 {
		t.Fatalf("%d users after a refused sign-up", n)
	}

	// An identity linked before sign-up was turned off still signs in.
	u, _, err := env.st.SignInOIDC(ctx, store.OIDCSignIn{Provider: "homelab", Subject: "old-timer", Email: "old@example.com",
		EmailVerified: true, AllowSignup: true, Plan: "free"})
	if err != nil {
		t.Fatal(err)
	}
	r = env.do(200, "POST", "/v1/auth/homelab", map[string]any{"id_token": fake.token(map[string]any{"sub": "old-timer", "email": "old@example.com"})}, "")
	if got := oidcUser(t, r)["id"]; got != u.ID {
		t.Fatalf("linked identity signed in as %v, want %s", got, u.ID)
	}
}

func TestOIDCAdminClaim(t *testing.T) {
	t.Parallel()
	fake := newFakeIdP(t)
	env := oidcEnv(t, fake)
	tests := []struct {
		sub    string
		groups any
		admin  bool
	}{
		{"admin", []string{"users", "herald-admins"}, true},
		{"admin-string-claim", "herald-admins", true},
		{"other", []string{"others"}, false},
		{"no-groups", nil, false},
		{"near-miss", []string{"herald-admins-not"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.sub, func(t *testing.T) {
			r := oidcDo(t, env, 200, "POST", "/v1/auth/homelab", map[string]any{"id_token": fake.token(map[string]any{
				"sub": tc.sub, "email": tc.sub + "@example.com", "groups": tc.groups})}, "")
			if got := oidcUser(t, r)["is_admin"]; got != tc.admin {
				t.Fatalf("is_admin = %v, want %v", got, tc.admin)
			}
			me := oidcDo(t, env, 200, "GET", "/v1/auth/me", nil, r.Str("access_token"))
			if got := me.Body["is_admin"]; got != tc.admin {
				t.Fatalf("/v1/auth/me is_admin = %v, want %v", got, tc.admin)
			}
		})
	}
}

// TestOIDCAdminClaimWithdrawn: admin given by the claim follows the claim
// (a user taken out of the group is no admin at their next sign-in), while
// an admin made otherwise (the CLI) stays one whatever the claim says.
func TestOIDCAdminClaimWithdrawn(t *testing.T) {
	t.Parallel()
	fake := newFakeIdP(t)
	env := oidcEnv(t, fake)
	signIn := func(sub string, groups any) (isAdmin bool, token, userID string) {
		t.Helper()
		r := oidcDo(t, env, 200, "POST", "/v1/auth/homelab", map[string]any{"id_token": fake.token(map[string]any{
			"sub": sub, "email": sub + "@example.com", "groups": groups})}, "")
		u := oidcUser(t, r)
		return u["is_admin"] == true, r.Str("access_token"), u["id"].(string)
	}
	admins := []string{"herald-admins"}

	if admin, _, _ := signIn("carol", admins); !admin {
		t.Fatal("the claim did not make carol an admin")
	}
	_, oldToken, _ := signIn("carol", admins)
	if admin, _, _ := signIn("carol", []string{"users"}); admin {
		t.Fatal("carol is still an admin after leaving the group")
	}
	// A session from before the change is no admin either.
	if me := oidcDo(t, env, 200, "GET", "/v1/auth/me", nil, oldToken); me.Body["is_admin"] != false {
		t.Errorf("carol's earlier session: is_admin = %v, want false", me.Body["is_admin"])
	}
	if admin, _, _ := signIn("carol", admins); !admin {
		t.Fatal("back in the group, carol is not an admin again")
	}

	// Dave is made an admin by the operator; the claim neither gives nor
	// takes that.
	_, _, dave := signIn("dave", nil)
	if err := env.st.SetUserAdmin(context.Background(), dave, true); err != nil {
		t.Fatal(err)
	}
	for _, groups := range []any{admins, nil, []string{"users"}} {
		if admin, _, _ := signIn("dave", groups); !admin {
			t.Fatalf("signing in with groups %v took away the operator's admin flag", groups)
		}
	}
}

func TestOIDCUnknownProviderAndLocalOff(t *testing.T) {
	t.Parallel()
	fake := newFakeIdP(t)
	env := oidcEnv(t, fake, func(c *config.Config) { c.Auth.LocalPasswords = false })
	wantError(t, env.request("POST", "/v1/auth/nope", map[string]any{"id_token": fake.token(nil)}, ""), 404, "not_found")
	wantError(t, env.request("GET", "/auth/nope/login", nil, ""), 404, "not_found")
	wantError(t, env.request("GET", "/auth/nope/callback?code=x&state=y", nil, ""), 404, "not_found")
	wantError(t, env.request("POST", "/v1/auth/local", map[string]any{"email": "a@example.com", "password": "pw"}, ""), 404, "not_found")
	env.do(200, "POST", "/v1/auth/homelab", map[string]any{"id_token": fake.token(nil)}, "")
}

// oidcNoRedirect is a client that shows redirects instead of following them.
func oidcNoRedirect() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

// oidcGet fetches rawURL with cookies and returns the response (body closed).
func oidcGet(t *testing.T, rawURL string, cookies ...*http.Cookie) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	res, err := oidcNoRedirect().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

// oidcCookie returns the cookie named name that res sets, or nil.
func oidcCookie(res *http.Response, name string) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// oidcAuthorize asks the fake's /authorize for a code as an app would,
// bound to redirectURI and the S256 challenge of verifier.
func oidcAuthorize(t *testing.T, fake *fakeIdP, redirectURI, verifier string) string {
	t.Helper()
	q := url.Values{"response_type": {"code"}, "client_id": {idpClient}, "redirect_uri": {redirectURI},
		"state": {"app-state"}, "scope": {"openid email"}}
	if verifier != "" {
		sum := sha256.Sum256([]byte(verifier))
		q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(sum[:]))
		q.Set("code_challenge_method", "S256")
	}
	res := oidcGet(t, fake.URL+"/authorize?"+q.Encode())
	if res.StatusCode != http.StatusFound {
		t.Fatalf("fake /authorize: %d", res.StatusCode)
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if got := loc.Query().Get("state"); got != "app-state" {
		t.Fatalf("fake /authorize returned state %q", got)
	}
	return loc.Query().Get("code")
}

func TestOIDCCodeExchange(t *testing.T) {
	t.Parallel()
	fake := newFakeIdP(t)
	env := oidcEnv(t, fake)
	const app = "https://app.example/oauth/callback"

	verifier := oauth2.GenerateVerifier()
	code := oidcAuthorize(t, fake, app, verifier)
	r := env.do(200, "POST", "/v1/auth/homelab", map[string]any{"code": code, "code_verifier": verifier, "redirect_uri": app}, "")
	if got := oidcUser(t, r)["email"]; got != "alice@example.com" {
		t.Fatalf("user email %v", got)
	}
	reqs := fake.tokenRequests()
	if len(reqs) != 1 || reqs[0].Status != 200 || reqs[0].Verifier != verifier || reqs[0].RedirectURI != app || reqs[0].ClientID != idpClient {
		t.Fatalf("token endpoint saw %+v", reqs)
	}

	t.Run("code used twice", func(t *testing.T) {
		r := oidcSignIn(env, map[string]any{"code": code, "code_verifier": verifier, "redirect_uri": app})
		wantError(t, r, 401, "invalid_token")
	})
	t.Run("wrong code_verifier", func(t *testing.T) {
		code := oidcAuthorize(t, fake, app, verifier)
		r := oidcSignIn(env, map[string]any{"code": code, "code_verifier": oauth2.GenerateVerifier(), "redirect_uri": app})
		wantError(t, r, 401, "invalid_token")
		if reqs := fake.tokenRequests(); reqs[len(reqs)-1].Status != 400 {
			t.Fatalf("the fake accepted a wrong verifier: %+v", reqs[len(reqs)-1])
		}
		if strings.Contains(string(r.Raw), idpSecret) || strings.Contains(string(r.Raw), code) {
			t.Fatalf("error echoes the code or the client secret: %s", r.Raw)
		}
	})
	t.Run("other redirect_uri", func(t *testing.T) {
		code := oidcAuthorize(t, fake, app, verifier)
		r := oidcSignIn(env, map[string]any{"code": code, "code_verifier": verifier, "redirect_uri": "https://evil.example/cb"})
		wantError(t, r, 401, "invalid_token")
	})
	t.Run("missing redirect_uri", func(t *testing.T) {
		code := oidcAuthorize(t, fake, app, verifier)
		r := oidcSignIn(env, map[string]any{"code": code, "code_verifier": verifier})
		wantError(t, r, 400, "invalid_payload")
	})
	t.Run("nonce", func(t *testing.T) {
		q := url.Values{"response_type": {"code"}, "client_id": {idpClient}, "redirect_uri": {app}, "nonce": {"app-nonce"}}
		res := oidcGet(t, fake.URL+"/authorize?"+q.Encode())
		loc, _ := url.Parse(res.Header.Get("Location"))
		r := oidcSignIn(env, map[string]any{"code": loc.Query().Get("code"), "redirect_uri": app, "nonce": "other-nonce"})
		wantError(t, r, 401, "invalid_token")
	})
}

func TestOIDCProviderDownAtStart(t *testing.T) {
	t.Parallel()
	for _, mode := range []idpMode{idpDown503, idpDownClosed} {
		name := map[idpMode]string{idpDown503: "503", idpDownClosed: "connection closed"}[mode]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake := newFakeIdP(t)
			fake.setMode(mode)
			env := oidcEnv(t, fake)
			tok := fake.token(nil)

			r := oidcSignIn(env, map[string]any{"id_token": tok})
			wantError(t, r, 503, "provider_unavailable")
			if msg := r.Str("message"); !strings.Contains(msg, "identity provider") {
				t.Fatalf("503 message %q does not say what is down", msg)
			}
			wantError(t, env.request("GET", "/auth/homelab/login", nil, ""), 503, "provider_unavailable")
			env.do(200, "GET", "/healthz", nil, "")
			u := env.newUser("local@example.com") // local sign-in still works
			env.do(200, "GET", "/v1/auth/me", nil, u.Token)

			fake.setMode(idpUp)
			// The failure is remembered for RetryAfter, so a flapping provider is not hammered.
			wantError(t, oidcSignIn(env, map[string]any{"id_token": tok}), 503, "provider_unavailable")
			env.clock.Advance(env.s.providers["homelab"].RetryAfter + time.Second)
			r = env.do(200, "POST", "/v1/auth/homelab", map[string]any{"id_token": tok}, "")
			if got := oidcUser(t, r)["email"]; got != "alice@example.com" {
				t.Fatalf("user email %v", got)
			}
		})
	}
}

func TestOIDCProviderDownAfterDiscovery(t *testing.T) {
	t.Parallel()
	fake := newFakeIdP(t)
	env := oidcEnv(t, fake)
	// Discovery succeeds (a malformed token fails before any key is fetched).
	wantError(t, oidcSignIn(env, map[string]any{"id_token": "abc"}), 401, "invalid_token")

	fake.setMode(idpDown503)
	// The keys were never fetched: a provider that cannot serve them is
	// down, and the token is not to blame.
	r := oidcSignIn(env, map[string]any{"id_token": fake.token(nil)})
	wantError(t, r, 503, "provider_unavailable")
	// Nor is a code when the token endpoint is down.
	r = oidcSignIn(env, map[string]any{"code": "c", "code_verifier": oauth2.GenerateVerifier(), "redirect_uri": "https://app.example/cb"})
	wantError(t, r, 503, "provider_unavailable")

	fake.setMode(idpUp)
	// go-oidc hands its failed key fetch to callers that arrive before the
	// fetching goroutine has cleared it, so recovery can lag a moment.
	testkit.Eventually(t, 5*time.Second, func() error {
		r = oidcSignIn(env, map[string]any{"id_token": fake.token(nil)})
		if r.Status != 200 && r.Status != 503 {
			t.Fatalf("provider back up: %d %s", r.Status, r.Raw)
		}
		if r.Status != 200 {
			return fmt.Errorf("provider back up: %d %s", r.Status, r.Raw)
		}
		return nil
	})
	// Once the keys are cached, a provider outage does not stop sign-in by ID token.
	fake.setMode(idpDown503)
	env.do(200, "POST", "/v1/auth/homelab", map[string]any{"id_token": fake.token(map[string]any{"sub": "user-2", "email": "b@example.com"})}, "")
}

// oidcLogin starts a browser sign-in: it returns the callback URL the fake
// sends the browser to and the state cookie Herald set.
func oidcLogin(t *testing.T, env *testEnv, fake *fakeIdP, idp string) (callback string, state *http.Cookie) {
	t.Helper()
	res := oidcGet(t, env.srv.URL+"/auth/"+idp+"/login")
	if res.StatusCode != http.StatusFound {
		t.Fatalf("login: status %d", res.StatusCode)
	}
	state = oidcCookie(res, cookieState)
	if state == nil {
		t.Fatalf("login set no %s cookie: %v", cookieState, res.Header["Set-Cookie"])
	}
	res = oidcGet(t, res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound {
		t.Fatalf("fake /authorize: status %d", res.StatusCode)
	}
	return res.Header.Get("Location"), state
}

// oidcCallback calls the callback URL against env's server (whatever host
// base_url gave it) with cookies.
func oidcCallback(t *testing.T, env *testEnv, callback string, cookies ...*http.Cookie) *http.Response {
	t.Helper()
	u, err := url.Parse(callback)
	if err != nil {
		t.Fatal(err)
	}
	return oidcGet(t, env.srv.URL+u.RequestURI(), cookies...)
}

// oidcBrowserSession signs a browser in and returns its session and CSRF cookies.
func oidcBrowserSession(t *testing.T, env *testEnv, fake *fakeIdP) (session, csrf *http.Cookie) {
	t.Helper()
	cb, state := oidcLogin(t, env, fake, "homelab")
	res := oidcCallback(t, env, cb, state)
	if res.StatusCode != http.StatusFound {
		t.Fatalf("callback: status %d", res.StatusCode)
	}
	session, csrf = oidcCookie(res, cookieSession), oidcCookie(res, cookieCSRF)
	if session == nil || csrf == nil || session.Value == "" || csrf.Value == "" {
		t.Fatalf("callback set cookies %v", res.Header["Set-Cookie"])
	}
	return session, csrf
}

func TestOIDCBrowserLogin(t *testing.T) {
	t.Parallel()
	fake := newFakeIdP(t)
	env := oidcEnv(t, fake)

	// Login sends the browser to the provider with PKCE, state and nonce.
	res := oidcGet(t, env.srv.URL+"/auth/homelab/login")
	if got, want := res.StatusCode, http.StatusFound; got != want {
		t.Fatalf("login status %d, want %d", got, want)
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := loc.Scheme+"://"+loc.Host+loc.Path, fake.URL+"/authorize"; got != want {
		t.Fatalf("login redirects to %s, want %s", got, want)
	}
	q := loc.Query()
	for k, want := range map[string]string{"response_type": "code", "client_id": idpClient,
		"redirect_uri": env.srv.URL + "/auth/homelab/callback", "code_challenge_method": "S256", "scope": "openid email profile"} {
		if got := q.Get(k); got != want {
			t.Fatalf("authorize %s = %q, want %q", k, got, want)
		}
	}
	for _, k := range []string{"state", "nonce", "code_challenge"} {
		if len(q.Get(k)) < 32 {
			t.Fatalf("authorize %s = %q, want a long random value", k, q.Get(k))
		}
	}
	state := oidcCookie(res, cookieState)
	if state == nil || !state.HttpOnly || state.SameSite != http.SameSiteLaxMode || state.Path != "/auth/" || state.Secure || state.MaxAge <= 0 {
		t.Fatalf("state cookie %+v", state)
	}

	// The provider signs the user in and sends the browser to the callback.
	res = oidcGet(t, loc.String())
	cb := res.Header.Get("Location")
	if !strings.HasPrefix(cb, env.srv.URL+"/auth/homelab/callback?") {
		t.Fatalf("fake sent the browser to %q", cb)
	}
	res = oidcCallback(t, env, cb, state)
	if got, want := res.StatusCode, http.StatusFound; got != want {
		t.Fatalf("callback status %d, want %d", got, want)
	}
	if got := res.Header.Get("Location"); got != "/" {
		t.Fatalf("callback redirects to %q, want /", got)
	}
	session, csrf := oidcCookie(res, cookieSession), oidcCookie(res, cookieCSRF)
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Secure || session.Path != "/" {
		t.Fatalf("session cookie %+v", session)
	}
	if csrf == nil || csrf.Value == "" || csrf.HttpOnly || csrf.SameSite != http.SameSiteLaxMode || csrf.Path != "/" {
		t.Fatalf("csrf cookie %+v (the UI must be able to read it)", csrf)
	}
	if c := oidcCookie(res, cookieState); c == nil || c.MaxAge >= 0 {
		t.Fatalf("callback did not clear the state cookie: %+v", c)
	}

	// The exchange used the PKCE verifier of this login, and the nonce came back.
	reqs := fake.tokenRequests()
	if len(reqs) != 1 {
		t.Fatalf("token endpoint called %d times", len(reqs))
	}
	sum := sha256.Sum256([]byte(reqs[0].Verifier))
	if reqs[0].Status != 200 || base64.RawURLEncoding.EncodeToString(sum[:]) != q.Get("code_challenge") {
		t.Fatalf("token request %+v does not match the challenge %s", reqs[0], q.Get("code_challenge"))
	}
	if reqs[0].RedirectURI != q.Get("redirect_uri") || reqs[0].Nonce != q.Get("nonce") {
		t.Fatalf("token request %+v, authorize %v", reqs[0], q)
	}

	cookie := "herald_session=" + session.Value
	me := env.request("GET", "/v1/auth/me", nil, "", "Cookie", cookie)
	if me.Status != 200 || me.Str("email") != "alice@example.com" {
		t.Fatalf("/v1/auth/me with the cookie: %d %s", me.Status, me.Raw)
	}

	t.Run("CSRF", func(t *testing.T) {
		ch := map[string]string{"name": "from the browser"}
		wantError(t, env.request("POST", "/v1/channels", ch, "", "Cookie", cookie), 403, "forbidden")
		wantError(t, env.request("POST", "/v1/channels", ch, "", "Cookie", cookie, headerCSRF, "wrong"), 403, "forbidden")
		wantError(t, env.request("POST", "/v1/channels", ch, "", "Cookie", cookie, headerCSRF, ""), 403, "forbidden")
		if r := env.request("POST", "/v1/channels", ch, "", "Cookie", cookie, headerCSRF, csrf.Value); r.Status != 201 {
			t.Fatalf("with the CSRF header: %d %s", r.Status, r.Raw)
		}
		// The token is bound to its session: another session's token does not pass.
		_, other := oidcBrowserSession(t, env, fake)
		wantError(t, env.request("POST", "/v1/channels", ch, "", "Cookie", cookie, headerCSRF, other.Value), 403, "forbidden")
		// A bearer token needs no CSRF header.
		tok := oidcDo(t, env, 200, "POST", "/v1/auth/homelab", map[string]any{"id_token": fake.token(nil)}, "").Str("access_token")
		oidcDo(t, env, 201, "POST", "/v1/channels", ch, tok)
	})

	t.Run("nonce checked", func(t *testing.T) {
		fake.setBadNonce(true)
		defer fake.setBadNonce(false)
		cb, state := oidcLogin(t, env, fake, "homelab")
		res := oidcCallback(t, env, cb, state)
		if res.StatusCode != http.StatusUnauthorized || oidcCookie(res, cookieSession) != nil {
			t.Fatalf("callback with a wrong nonce: %d %v", res.StatusCode, res.Header["Set-Cookie"])
		}
	})

	t.Run("logout", func(t *testing.T) {
		// Logging out is a mutation too: without the header it is refused and the session lives on.
		wantError(t, env.request("POST", "/auth/logout", nil, "", "Cookie", cookie), 403, "forbidden")
		if r := env.request("GET", "/v1/auth/me", nil, "", "Cookie", cookie); r.Status != 200 {
			t.Fatalf("a refused logout ended the session: %d %s", r.Status, r.Raw)
		}
		req, err := http.NewRequest("POST", env.srv.URL+"/auth/logout", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.AddCookie(session)
		req.AddCookie(csrf)
		req.Header.Set(headerCSRF, csrf.Value)
		res, err := oidcNoRedirect().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("logout: status %d", res.StatusCode)
		}
		for _, name := range []string{cookieSession, cookieCSRF} {
			if c := oidcCookie(res, name); c == nil || c.Value != "" || c.MaxAge >= 0 || c.Path != "/" {
				t.Fatalf("logout did not clear %s: %+v", name, c)
			}
		}
		wantError(t, env.request("GET", "/v1/auth/me", nil, "", "Cookie", cookie), 401, "invalid_token")
		wantError(t, env.request("POST", "/v1/channels", map[string]string{"name": "x"}, "", "Cookie", cookie, headerCSRF, csrf.Value), 401, "invalid_token")
	})
}

func TestOIDCCallbackRejects(t *testing.T) {
	t.Parallel()
	fake := newFakeIdP(t)
	env := oidcEnv(t, fake, func(c *config.Config) {
		second := c.Auth.Providers[0]
		second.Name = "other"
		c.Auth.Providers = append(c.Auth.Providers, second)
	})
	// refused checks a failed callback: the status wanted and no session cookie.
	refused := func(t *testing.T, res *http.Response, want int) {
		t.Helper()
		if res.StatusCode != want {
			t.Fatalf("callback status %d, want %d", res.StatusCode, want)
		}
		if c := oidcCookie(res, cookieSession); c != nil {
			t.Fatalf("a refused callback set a session cookie: %+v", c)
		}
	}
	before := func() int { return len(fake.tokenRequests()) }

	t.Run("tampered state parameter", func(t *testing.T) {
		cb, state := oidcLogin(t, env, fake, "homelab")
		u, _ := url.Parse(cb)
		q := u.Query()
		q.Set("state", q.Get("state")+"x")
		u.RawQuery = q.Encode()
		n := before()
		refused(t, oidcCallback(t, env, u.String(), state), 401)
		if before() != n {
			t.Fatal("the code was exchanged although the state did not match")
		}
	})
	t.Run("flipped byte in the state cookie", func(t *testing.T) {
		cb, state := oidcLogin(t, env, fake, "homelab")
		for _, i := range []int{0, len(state.Value) / 3, len(state.Value) - 1} {
			// Flip the high bit of the base64 digit: the low bits of a last
			// digit may be padding that decodes to the same bytes.
			const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
			b := []byte(state.Value)
			if d := strings.IndexByte(digits, b[i]); d >= 0 {
				b[i] = digits[d^32]
			} else {
				b[i] = 'A'
			}
			refused(t, oidcCallback(t, env, cb, &http.Cookie{Name: cookieState, Value: string(b)}), 401)
		}
	})
	t.Run("state cookie rewritten without the key", func(t *testing.T) {
		cb, state := oidcLogin(t, env, fake, "homelab")
		payload, sig, _ := strings.Cut(state.Value, ".")
		raw, err := base64.RawURLEncoding.DecodeString(payload)
		if err != nil {
			t.Fatalf("state cookie %q: %v", state.Value, err)
		}
		var st map[string]any
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatal(err)
		}
		st["e"] = env.clock.Now().Add(24 * time.Hour).Unix()
		raw, _ = json.Marshal(st)
		forged := base64.RawURLEncoding.EncodeToString(raw) + "." + sig
		refused(t, oidcCallback(t, env, cb, &http.Cookie{Name: cookieState, Value: forged}), 401)
	})
	t.Run("missing state cookie", func(t *testing.T) {
		cb, _ := oidcLogin(t, env, fake, "homelab")
		refused(t, oidcCallback(t, env, cb), 401)
	})
	t.Run("state of another provider", func(t *testing.T) {
		cb, state := oidcLogin(t, env, fake, "homelab")
		u, _ := url.Parse(cb)
		u.Path = "/auth/other/callback"
		refused(t, oidcCallback(t, env, u.String(), state), 401)
	})
	t.Run("provider error", func(t *testing.T) {
		_, state := oidcLogin(t, env, fake, "homelab")
		refused(t, oidcGet(t, env.srv.URL+"/auth/homelab/callback?error=access_denied&state=x", state), 401)
	})
	t.Run("code missing", func(t *testing.T) {
		cb, state := oidcLogin(t, env, fake, "homelab")
		u, _ := url.Parse(cb)
		q := u.Query()
		q.Del("code")
		u.RawQuery = q.Encode()
		refused(t, oidcCallback(t, env, u.String(), state), 400)
	})
	t.Run("state cookie replayed", func(t *testing.T) {
		cb, state := oidcLogin(t, env, fake, "homelab")
		if res := oidcCallback(t, env, cb, state); res.StatusCode != http.StatusFound {
			t.Fatalf("first callback: %d", res.StatusCode)
		}
		// The browser dropped the cookie; an attacker who kept it holds a spent code.
		refused(t, oidcCallback(t, env, cb, state), 401)
	})
	// Last: it moves the shared clock.
	t.Run("expired state", func(t *testing.T) {
		cb, state := oidcLogin(t, env, fake, "homelab")
		env.clock.Advance(11 * time.Minute)
		n := before()
		refused(t, oidcCallback(t, env, cb, state), 401)
		if before() != n {
			t.Fatal("the code was exchanged although the state had expired")
		}
	})
}

func TestOIDCSecureCookies(t *testing.T) {
	t.Parallel()
	fake := newFakeIdP(t)
	env := oidcEnv(t, fake)
	env.s.baseURL = "https://herald.example"

	res := oidcGet(t, env.srv.URL+"/auth/homelab/login")
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := loc.Query().Get("redirect_uri"), "https://herald.example/auth/homelab/callback"; got != want {
		t.Fatalf("redirect_uri = %q, want %q", got, want)
	}
	state := oidcCookie(res, cookieState)
	if state == nil || !state.Secure || !state.HttpOnly {
		t.Fatalf("state cookie on an https base_url: %+v", state)
	}
	// The fake sends the browser to https://herald.example; deliver it to the test server.
	res = oidcGet(t, loc.String())
	res = oidcCallback(t, env, res.Header.Get("Location"), state)
	if res.StatusCode != http.StatusFound {
		t.Fatalf("callback status %d", res.StatusCode)
	}
	for _, name := range []string{cookieSession, cookieCSRF} {
		if c := oidcCookie(res, name); c == nil || !c.Secure {
			t.Fatalf("%s cookie on an https base_url: %+v", name, c)
		}
	}
}

// TestBrowserLocalSignIn: the admin UI's password sign-in sets the same
// cookies as the OIDC browser sign-in, with the same checks as
// POST /v1/auth/local, and no tokens in the body.
func TestBrowserLocalSignIn(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("kim@example.com")
	post := func(body any) *http.Response {
		t.Helper()
		b, _ := json.Marshal(body)
		res, err := http.Post(env.srv.URL+"/auth/local", "application/json", strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	res := post(map[string]string{"email": u.Email, "password": "wrong"})
	res.Body.Close()
	if res.StatusCode != 401 || oidcCookie(res, cookieSession) != nil {
		t.Fatalf("wrong password: %d, cookies %v", res.StatusCode, res.Header["Set-Cookie"])
	}
	res = post(map[string]string{"email": u.Email})
	res.Body.Close()
	if res.StatusCode != 400 {
		t.Fatalf("no password: %d, want 400", res.StatusCode)
	}

	res = post(map[string]string{"email": u.Email, "password": u.Password})
	var body map[string]any
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	user, _ := body["user"].(map[string]any)
	if res.StatusCode != 200 || user["email"] != u.Email || body["access_token"] != nil || body["refresh_token"] != nil {
		t.Fatalf("sign-in answered %d %v", res.StatusCode, body)
	}
	session, csrf := oidcCookie(res, cookieSession), oidcCookie(res, cookieCSRF)
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Path != "/" {
		t.Fatalf("session cookie %+v", session)
	}
	if csrf == nil || csrf.Value == "" || csrf.HttpOnly {
		t.Fatalf("csrf cookie %+v (the UI must be able to read it)", csrf)
	}
	cookie := "herald_session=" + session.Value
	if me := env.request("GET", "/v1/auth/me", nil, "", "Cookie", cookie); me.Status != 200 || me.Str("email") != u.Email {
		t.Fatalf("/v1/auth/me with the cookie: %d %s", me.Status, me.Raw)
	}
	wantError(t, env.request("POST", "/v1/channels", map[string]string{"name": "x"}, "", "Cookie", cookie), 403, "forbidden")
	if r := env.request("POST", "/v1/channels", map[string]string{"name": "x"}, "", "Cookie", cookie, headerCSRF, csrf.Value); r.Status != 201 {
		t.Fatalf("with the CSRF header: %d %s", r.Status, r.Raw)
	}
	// A cookie session is a session: it may manage API keys.
	if r := env.request("POST", "/v1/keys", map[string]string{"name": "ui"}, "", "Cookie", cookie, headerCSRF, csrf.Value); r.Status != 201 {
		t.Fatalf("key from the browser: %d %s", r.Status, r.Raw)
	}

	off := newTestEnv(t, func(c *config.Config) { c.Auth.LocalPasswords = false })
	wantError(t, off.request("POST", "/auth/local", map[string]string{"email": "a@b.c", "password": "x"}, ""), 404, "not_found")
}

func TestAuthProviders(t *testing.T) {
	t.Parallel()
	fake := newFakeIdP(t)
	env := oidcEnv(t, fake)
	r := oidcDo(t, env, 200, "GET", "/v1/auth/providers", nil, "")
	want := map[string]any{"local": true, "providers": []any{map[string]any{"name": "homelab", "login_url": "/auth/homelab/login"}},
		"setup_needed": true} // no user yet
	if !reflect.DeepEqual(r.Body, want) {
		t.Fatalf("providers = %s, want %v", r.Raw, want)
	}
	plain := newTestEnv(t, func(c *config.Config) { c.Auth.LocalPasswords = false })
	if r := plain.do(200, "GET", "/v1/auth/providers", nil, ""); r.Body["local"] != false || len(r.Body["providers"].([]any)) != 0 {
		t.Fatalf("no providers, no passwords: %s", r.Raw)
	}
}

// TestOIDCFirstSignUpIsAdmin: on a server with no users, the first sign-up
// through a provider makes the administrator, as herald user add's first
// user does; later sign-ups are not. A provider with an admin claim decides
// by the claim alone (TestOIDCAdminClaim), first sign-up or not.
func TestOIDCFirstSignUpIsAdmin(t *testing.T) {
	t.Parallel()
	fake := newFakeIdP(t)
	env := oidcEnv(t, fake, func(c *config.Config) { c.Auth.Providers[0].AdminClaim, c.Auth.Providers[0].AdminValues = "", nil })
	for _, c := range []struct {
		sub   string
		admin bool
	}{{"first", true}, {"second", false}, {"first", true}} {
		r := env.do(200, "POST", "/v1/auth/homelab", map[string]any{"id_token": fake.token(map[string]any{
			"sub": c.sub, "email": c.sub + "@example.com"})}, "")
		if got := oidcUser(t, r)["is_admin"]; got != c.admin {
			t.Errorf("%s: is_admin = %v, want %v", c.sub, got, c.admin)
		}
	}
	if !strings.Contains(env.logs.String(), "admin=true") {
		t.Errorf("the sign-up log does not say the first user is an administrator:\n%s", env.logs)
	}

	claimFake := newFakeIdP(t)
	claimed := oidcEnv(t, claimFake) // admin_claim "groups"
	r := claimed.do(200, "POST", "/v1/auth/homelab", map[string]any{"id_token": claimFake.token(map[string]any{
		"sub": "x", "email": "x@example.com", "groups": []string{"users"}})}, "")
	if got := oidcUser(t, r)["is_admin"]; got != false {
		t.Errorf("first sign-up outside the admin group: is_admin = %v, want false (the claim decides)", got)
	}
}
