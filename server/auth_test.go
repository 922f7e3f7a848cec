package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/store"
)

// authKeys returns the sorted keys of a JSON object.
func authKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// authWantKeys fails unless m has exactly the keys want.
func authWantKeys(t testing.TB, what string, m map[string]any, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := authKeys(m); !slices.Equal(got, want) {
		t.Fatalf("%s has keys %v, want %v", what, got, want)
	}
}

// authTime parses an RFC 3339 timestamp of a response.
func authTime(t *testing.T, what, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("%s = %q is not RFC 3339: %v", what, s, err)
	}
	if !strings.HasSuffix(s, "Z") {
		t.Fatalf("%s = %q is not UTC", what, s)
	}
	return v
}

// authSignIn signs in with a password and returns the session response.
func (e *testEnv) authSignIn(u *testUser) response {
	e.t.Helper()
	return e.do(200, "POST", "/v1/auth/local", map[string]string{"email": u.Email, "password": u.Password}, "")
}

// authMe is the status of GET /v1/auth/me with token.
func (e *testEnv) authMe(token string) int {
	e.t.Helper()
	return e.request("GET", "/v1/auth/me", nil, token).Status
}

func TestLocalSignInSuccess(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("alice@example.com")

	r := env.authSignIn(u)
	authWantKeys(t, "session", r.Body, "access_token", "refresh_token", "token_type", "expires_at", "user")
	if got, want := r.Str("token_type"), "Bearer"; got != want {
		t.Errorf("token_type = %q, want %q", got, want)
	}
	access, refresh := r.Str("access_token"), r.Str("refresh_token")
	if len(access) < 32 || len(refresh) < 32 {
		t.Errorf("tokens too short: access %q, refresh %q", access, refresh)
	}
	if access == refresh || access == u.Token || refresh == u.Refresh {
		t.Errorf("tokens are not fresh: access %q refresh %q (earlier %q %q)", access, refresh, u.Token, u.Refresh)
	}
	exp := authTime(t, "expires_at", r.Str("expires_at"))
	if want := env.clock.Now().Add(env.cfg.Auth.SessionTTL.Duration); !exp.Equal(want) {
		t.Errorf("expires_at = %s, want now + session_ttl = %s", exp, want)
	}

	user, _ := r.Body["user"].(map[string]any)
	authWantKeys(t, "user", user, "id", "email", "name", "plan", "is_admin", "created_at")
	for k, want := range map[string]any{"id": u.ID, "email": "alice@example.com", "name": "alice", "plan": "free", "is_admin": false} {
		if user[k] != want {
			t.Errorf("user.%s = %v, want %v", k, user[k], want)
		}
	}
	if got := authTime(t, "user.created_at", user["created_at"].(string)); !got.Equal(u.CreatedAt) {
		t.Errorf("user.created_at = %s, want %s", got, u.CreatedAt)
	}

	// The access token works at once.
	if got := env.authMe(access); got != 200 {
		t.Fatalf("GET /v1/auth/me with the new access token: %d", got)
	}
	// Email is matched case-insensitively, as the schema says.
	env.do(200, "POST", "/v1/auth/local", map[string]string{"email": "ALICE@Example.com", "password": u.Password}, "")
}

func TestLocalSignInErrors(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("bob@example.com")

	cases := []struct {
		name   string
		body   any
		status int
		code   string
		inMsg  string
	}{
		{"wrong password", map[string]string{"email": u.Email, "password": "nope"}, 401, "invalid_token", ""},
		{"unknown email", map[string]string{"email": "nobody@example.com", "password": u.Password}, 401, "invalid_token", ""},
		{"missing password", map[string]string{"email": u.Email}, 400, "invalid_payload", ""},
		{"missing email", map[string]string{"password": u.Password}, 400, "invalid_payload", ""},
		{"blank email", map[string]string{"email": "  ", "password": u.Password}, 400, "invalid_payload", ""},
		{"empty object", "{}", 400, "invalid_payload", ""},
		{"truncated JSON", `{"email": "bob@example.com",`, 400, "invalid_json", ""},
		{"not JSON", "email=bob", 400, "invalid_json", ""},
		{"empty body", "", 400, "invalid_json", ""},
		{"trailing data", `{"email":"bob@example.com","password":"x"} {}`, 400, "invalid_json", ""},
		{"unknown field", `{"email":"bob@example.com","password":"x","otp":"123"}`, 400, "invalid_payload", "otp"},
		{"wrong type", `{"email":42,"password":"x"}`, 400, "invalid_payload", "email"},
		{"array body", `[]`, 400, "invalid_payload", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := env.request("POST", "/v1/auth/local", c.body, "")
			wantError(t, r, c.status, c.code)
			if c.inMsg != "" && !strings.Contains(r.Str("message"), c.inMsg) {
				t.Errorf("message %q does not name %q", r.Str("message"), c.inMsg)
			}
			if r.Str("access_token") != "" {
				t.Errorf("error response carries a token: %s", r.Raw)
			}
		})
	}

	// Wrong password and unknown email must not tell an attacker which it was.
	wrong := env.request("POST", "/v1/auth/local", map[string]string{"email": u.Email, "password": "nope"}, "")
	unknown := env.request("POST", "/v1/auth/local", map[string]string{"email": "nobody@example.com", "password": "nope"}, "")
	if wrong.Str("message") != unknown.Str("message") {
		t.Errorf("messages differ: wrong password %q, unknown email %q", wrong.Str("message"), unknown.Str("message"))
	}

	// A user without a local password (an OIDC user) cannot sign in with any password.
	oidc := &store.User{Email: "oidc@example.com", Plan: "free"}
	if err := env.st.CreateUser(context.Background(), oidc); err != nil {
		t.Fatal(err)
	}
	for _, pw := range []string{"", "x"} {
		r := env.request("POST", "/v1/auth/local", map[string]string{"email": oidc.Email, "password": pw}, "")
		if r.Status == 200 {
			t.Fatalf("user without password signed in with %q", pw)
		}
	}
}

func TestSignInProviders(t *testing.T) {
	t.Parallel()
	t.Run("local passwords off", func(t *testing.T) {
		t.Parallel()
		env := newTestEnv(t, func(c *config.Config) { c.Auth.LocalPasswords = false })
		hash, err := auth.HashPassword(context.Background(), "pw")
		if err != nil {
			t.Fatal(err)
		}
		if err := env.st.CreateUser(context.Background(), &store.User{Email: "c@example.com", Plan: "free", PasswordHash: hash}); err != nil {
			t.Fatal(err)
		}
		r := env.request("POST", "/v1/auth/local", map[string]string{"email": "c@example.com", "password": "pw"}, "")
		wantError(t, r, 404, "not_found")
	})
	t.Run("unknown idp", func(t *testing.T) {
		t.Parallel()
		env := newTestEnv(t)
		for _, idp := range []string{"google", "LOCAL", "github"} {
			r := env.request("POST", "/v1/auth/"+idp, map[string]string{"id_token": "x"}, "")
			wantError(t, r, 404, "not_found")
		}
	})
}

func TestMe(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("carol@example.com")
	r := env.do(200, "GET", "/v1/auth/me", nil, u.Token)
	authWantKeys(t, "me", r.Body, "id", "email", "name", "plan", "is_admin", "created_at")
	if r.Str("id") != u.ID || r.Str("email") != u.Email || r.Str("name") != "carol" || r.Str("plan") != "free" || r.Body["is_admin"] != false {
		t.Errorf("me = %s, want user %s", r.Raw, u.ID)
	}
	authTime(t, "created_at", r.Str("created_at"))

	// The user is read afresh on each request.
	if err := env.st.SetUserAdmin(context.Background(), u.ID, true); err != nil {
		t.Fatal(err)
	}
	if r := env.do(200, "GET", "/v1/auth/me", nil, u.Token); r.Body["is_admin"] != true {
		t.Errorf("is_admin after SetUserAdmin = %v, want true", r.Body["is_admin"])
	}
}

func TestBadCredentials(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("dave@example.com")

	cases := []struct {
		name, header string
	}{
		{"missing header", ""},
		{"basic scheme", "Basic ZGF2ZTpwdw=="},
		{"bearer without token", "Bearer "},
		{"bearer only", "Bearer"},
		{"token without scheme", u.Token},
		{"garbage token", "Bearer garbage"},
		{"garbage api key", "Bearer pk_live_00000000000000000000000000000000"},
		{"refresh token as access token", "Bearer " + u.Refresh},
		{"token with extra text", "Bearer " + u.Token + "x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var hdr []string
			if c.header != "" {
				hdr = []string{"Authorization", c.header}
			}
			for _, path := range []string{"/v1/auth/me", "/v1/channels"} {
				r := env.request("GET", path, nil, "", hdr...)
				wantError(t, r, 401, "invalid_token")
			}
		})
	}
	// The scheme is case-insensitive (RFC 7235).
	if r := env.request("GET", "/v1/auth/me", nil, "", "Authorization", "bearer "+u.Token); r.Status != 200 {
		t.Errorf("lower-case bearer scheme: %d %s", r.Status, r.Raw)
	}
}

func TestAccessTokenExpires(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("erin@example.com")
	ttl := env.cfg.Auth.SessionTTL.Duration

	env.clock.Advance(ttl - time.Second)
	if got := env.authMe(u.Token); got != 200 {
		t.Fatalf("access token 1s before expiry: %d", got)
	}
	env.clock.Advance(2 * time.Second)
	wantError(t, env.request("GET", "/v1/auth/me", nil, u.Token), 401, "invalid_token")

	// The refresh token outlives the access token and gives a working pair.
	r := env.do(200, "POST", "/v1/auth/refresh", map[string]string{"refresh_token": u.Refresh}, "")
	if got := env.authMe(r.Str("access_token")); got != 200 {
		t.Fatalf("refreshed access token: %d", got)
	}
	exp := authTime(t, "expires_at", r.Str("expires_at"))
	if want := env.clock.Now().Add(ttl); !exp.Equal(want) {
		t.Errorf("expires_at after refresh = %s, want %s", exp, want)
	}
}

func TestRefresh(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("frank@example.com")
	other := env.authSignIn(u) // a second session of the same user

	r := env.do(200, "POST", "/v1/auth/refresh", map[string]string{"refresh_token": u.Refresh}, "")
	authWantKeys(t, "refresh", r.Body, "access_token", "refresh_token", "token_type", "expires_at", "user")
	access, refresh := r.Str("access_token"), r.Str("refresh_token")
	if access == "" || refresh == "" || access == u.Token || refresh == u.Refresh {
		t.Fatalf("refresh did not give a new pair: %s", r.Raw)
	}
	if r.Str("token_type") != "Bearer" {
		t.Errorf("token_type = %q", r.Str("token_type"))
	}
	if user, _ := r.Body["user"].(map[string]any); user["id"] != u.ID {
		t.Errorf("user = %v, want id %s", r.Body["user"], u.ID)
	}

	// Rotation replaces the access token.
	if got := env.authMe(access); got != 200 {
		t.Fatalf("new access token: %d", got)
	}
	wantError(t, env.request("GET", "/v1/auth/me", nil, u.Token), 401, "invalid_token")

	// The new refresh token rotates again.
	r2 := env.do(200, "POST", "/v1/auth/refresh", map[string]string{"refresh_token": refresh}, "")
	access2, refresh2 := r2.Str("access_token"), r2.Str("refresh_token")
	if got := env.authMe(access); got != 401 {
		t.Fatalf("access token replaced by a second refresh still works: %d", got)
	}

	// Reusing a spent refresh token revokes the whole session.
	wantError(t, env.request("POST", "/v1/auth/refresh", map[string]string{"refresh_token": u.Refresh}, ""), 401, "invalid_token")
	wantError(t, env.request("GET", "/v1/auth/me", nil, access2), 401, "invalid_token")
	wantError(t, env.request("POST", "/v1/auth/refresh", map[string]string{"refresh_token": refresh2}, ""), 401, "invalid_token")
	wantError(t, env.request("POST", "/v1/auth/refresh", map[string]string{"refresh_token": refresh}, ""), 401, "invalid_token")

	// The user's other session is not touched.
	if got := env.authMe(other.Str("access_token")); got != 200 {
		t.Errorf("other session after reuse detection: %d, want 200", got)
	}
	env.do(200, "POST", "/v1/auth/refresh", map[string]string{"refresh_token": other.Str("refresh_token")}, "")
}

func TestRefreshErrors(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(c *config.Config) { c.Auth.RefreshTTL = config.Duration{Duration: 2 * time.Hour} })
	u := env.newUser("gina@example.com")

	cases := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"missing refresh_token", "{}", 400, "invalid_payload"},
		{"empty refresh_token", map[string]string{"refresh_token": ""}, 400, "invalid_payload"},
		{"invalid JSON", `{"refresh_token":`, 400, "invalid_json"},
		{"unknown field", map[string]string{"refresh_token": u.Refresh, "scope": "x"}, 400, "invalid_payload"},
		{"unknown token", map[string]string{"refresh_token": "nope"}, 401, "invalid_token"},
		{"access token as refresh token", map[string]string{"refresh_token": u.Token}, 401, "invalid_token"},
	}
	for _, c := range cases {
		wantError(t, env.request("POST", "/v1/auth/refresh", c.body, ""), c.status, c.code)
	}

	// None of the above spent the real refresh token; expiry does.
	env.clock.Advance(2*time.Hour + time.Second)
	wantError(t, env.request("POST", "/v1/auth/refresh", map[string]string{"refresh_token": u.Refresh}, ""), 401, "invalid_token")
}

func TestLogout(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("hank@example.com")
	second := env.authSignIn(u)
	key := env.apiKey(u)

	// Logout needs a credential, and an API key is not a session.
	wantError(t, env.request("POST", "/v1/auth/logout", nil, ""), 401, "invalid_token")
	wantError(t, env.request("POST", "/v1/auth/logout", nil, key), 403, "forbidden")
	if got := env.authMe(key); got != 200 {
		t.Fatalf("API key after refused logout: %d", got)
	}

	r := env.do(200, "POST", "/v1/auth/logout", nil, u.Token)
	if r.Body["ok"] != true {
		t.Errorf("logout body = %s", r.Raw)
	}
	wantError(t, env.request("GET", "/v1/auth/me", nil, u.Token), 401, "invalid_token")
	wantError(t, env.request("POST", "/v1/auth/refresh", map[string]string{"refresh_token": u.Refresh}, ""), 401, "invalid_token")

	// Only the calling session ended.
	if got := env.authMe(second.Str("access_token")); got != 200 {
		t.Errorf("other session after logout: %d, want 200", got)
	}
	if got := env.authMe(key); got != 200 {
		t.Errorf("API key after logout: %d, want 200", got)
	}
}

func TestLogoutAll(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("ivy@example.com")
	second := env.authSignIn(u)
	key := env.apiKey(u)
	bystander := env.newUser("jack@example.com")

	r := env.do(200, "POST", "/v1/auth/logout-all", nil, second.Str("access_token"))
	if r.Body["ok"] != true {
		t.Errorf("logout-all body = %s", r.Raw)
	}
	for name, tok := range map[string]string{"first": u.Token, "second (caller)": second.Str("access_token")} {
		if got := env.authMe(tok); got != 401 {
			t.Errorf("%s session after logout-all: %d, want 401", name, got)
		}
	}
	for _, rt := range []string{u.Refresh, second.Str("refresh_token")} {
		wantError(t, env.request("POST", "/v1/auth/refresh", map[string]string{"refresh_token": rt}, ""), 401, "invalid_token")
	}
	// API keys stay, and other users are not affected.
	if got := env.authMe(key); got != 200 {
		t.Errorf("API key after logout-all: %d, want 200", got)
	}
	if got := env.authMe(bystander.Token); got != 200 {
		t.Errorf("other user's session after logout-all: %d, want 200", got)
	}
}

// TestAPIKeyCannotEndSessionsOrDeleteAccount: ending every session and
// deleting the account need a session; with an API key they are 403 and
// change nothing.
func TestAPIKeyCannotEndSessionsOrDeleteAccount(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("keyholder@example.com")
	second := env.authSignIn(u)
	key := env.apiKey(u)
	db := authOpenDB(t, env)
	before := authCountRows(t, db, u.ID)

	for _, c := range []struct{ method, path string }{{"POST", "/v1/auth/logout-all"}, {"DELETE", "/v1/auth/user"}} {
		r := env.request(c.method, c.path, nil, key)
		wantError(t, r, 403, "forbidden")
		if !strings.Contains(r.Str("message"), "session") {
			t.Errorf("%s %s: message %q does not say a session is needed", c.method, c.path, r.Str("message"))
		}
	}
	if got := authCountRows(t, db, u.ID); !authEqualCounts(got, before) || got["users"] != 1 || got["sessions"] != 2 {
		t.Errorf("rows after the refused calls = %v, want %v (the user and both sessions)", got, before)
	}
	for name, tok := range map[string]string{"session": u.Token, "second session": second.Str("access_token"), "api key": key} {
		if got := env.authMe(tok); got != 200 {
			t.Errorf("%s after the refused calls: %d, want 200", name, got)
		}
	}
	env.do(200, "POST", "/v1/auth/refresh", map[string]string{"refresh_token": u.Refresh}, "")
}

// authCountRows counts a user's rows in every table that has user_id.
func authCountRows(t *testing.T, db *sql.DB, userID string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"users", "identities", "sessions", "api_keys", "folders", "channels", "pins", "devices"} {
		col := "user_id"
		if table == "users" {
			col = "id"
		}
		var n int
		if err := db.QueryRow(fmt.Sprintf("SELECT count(*) FROM %s WHERE %s = $1", table, col), userID).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		out[table] = n
	}
	return out
}

// authOpenDB opens the server's database beside the server.
func authOpenDB(t *testing.T, env *testEnv) *sql.DB {
	t.Helper()
	db := env.rawDB(t)
	t.Cleanup(func() { db.Close() })
	return db
}

func TestDeleteUser(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	ctx := context.Background()

	// seed gives a user one of everything.
	seed := func(u *testUser) (ch map[string]any, key string) {
		ch = env.newChannel(u, "alerts")
		folder := env.do(201, "POST", "/v1/folders", map[string]string{"name": "work"}, u.Token)
		env.do(200, "PATCH", "/v1/channels/"+ch["id"].(string), map[string]any{"folder_id": folder.Str("id")}, u.Token)
		env.do(201, "POST", "/v1/pins", map[string]string{"channel_id": ch["id"].(string)}, u.Token)
		env.do(201, "POST", "/v1/devices", map[string]string{"platform": "ios", "push_token": "apns-" + u.ID, "name": "phone"}, u.Token)
		return ch, env.apiKey(u)
	}
	victim := env.newUser("kim@example.com")
	other := env.newUser("lee@example.com")
	vch, vkey := seed(victim)
	och, okey := seed(other)
	second := env.authSignIn(victim)

	db := authOpenDB(t, env)
	before := authCountRows(t, db, victim.ID)
	for table, n := range before {
		if table != "identities" && n == 0 {
			t.Fatalf("seeding left no %s row; the test would prove nothing", table)
		}
	}
	otherBefore := authCountRows(t, db, other.ID)

	// A session deletes the account (an API key may not: TestAPIKeyCannotEndSessionsOrDeleteAccount).
	r := env.do(200, "DELETE", "/v1/auth/user", nil, victim.Token)
	if r.Body["ok"] != true {
		t.Errorf("delete body = %s", r.Raw)
	}

	// Every credential stops at once.
	for name, tok := range map[string]string{"session": victim.Token, "second session": second.Str("access_token"), "api key": vkey} {
		wantError(t, env.request("GET", "/v1/auth/me", nil, tok), 401, "invalid_token")
		if got := env.request("GET", "/v1/channels", nil, tok).Status; got != 401 {
			t.Errorf("%s after delete: GET /v1/channels %d, want 401", name, got)
		}
	}
	wantError(t, env.request("POST", "/v1/auth/refresh", map[string]string{"refresh_token": victim.Refresh}, ""), 401, "invalid_token")
	wantError(t, env.request("POST", "/v1/auth/local", map[string]string{"email": victim.Email, "password": victim.Password}, ""), 401, "invalid_token")

	// Nothing of the user is left.
	if _, _, err := env.st.ChannelByToken(ctx, vch["webhook_token"].(string)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ChannelByToken after delete: %v, want ErrNotFound", err)
	}
	if _, err := env.st.UserByID(ctx, victim.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UserByID after delete: %v, want ErrNotFound", err)
	}
	if _, _, err := env.st.APIKeyByHash(ctx, store.HashToken(vkey)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("APIKeyByHash after delete: %v, want ErrNotFound", err)
	}
	if _, _, err := env.st.SessionByAccessHash(ctx, store.HashToken(second.Str("access_token"))); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SessionByAccessHash after delete: %v, want ErrNotFound", err)
	}
	if chs, err := env.st.ListChannels(ctx, victim.ID); err != nil || len(chs) != 0 {
		t.Errorf("ListChannels after delete: %v, %v", chs, err)
	}
	if fs, err := env.st.ListFolders(ctx, victim.ID); err != nil || len(fs) != 0 {
		t.Errorf("ListFolders after delete: %v, %v", fs, err)
	}
	if ps, err := env.st.ListPins(ctx, victim.ID); err != nil || len(ps) != 0 {
		t.Errorf("ListPins after delete: %v, %v", ps, err)
	}
	if ds, err := env.st.ListDevices(ctx, victim.ID); err != nil || len(ds) != 0 {
		t.Errorf("ListDevices after delete: %v, %v", ds, err)
	}
	if ks, err := env.st.ListAPIKeys(ctx, victim.ID); err != nil || len(ks) != 0 {
		t.Errorf("ListAPIKeys after delete: %v, %v", ks, err)
	}
	for table, n := range authCountRows(t, db, victim.ID) {
		if n != 0 {
			t.Errorf("%d %s rows of the deleted user remain", n, table)
		}
	}
	var spent int
	if err := db.QueryRow("SELECT count(*) FROM spent_refresh_tokens WHERE session_id NOT IN (SELECT id FROM sessions)").Scan(&spent); err != nil || spent != 0 {
		t.Errorf("orphaned spent refresh tokens: %d, %v", spent, err)
	}

	// The other user is untouched.
	if got, want := authCountRows(t, db, other.ID), otherBefore; !authEqualCounts(got, want) {
		t.Errorf("other user's rows = %v, want %v", got, want)
	}
	if c, _, err := env.st.ChannelByToken(ctx, och["webhook_token"].(string)); err != nil || c.UserID != other.ID {
		t.Errorf("other user's channel: %v, %v", c, err)
	}
	for _, tok := range []string{other.Token, okey} {
		if got := env.authMe(tok); got != 200 {
			t.Errorf("other user's credential after delete: %d", got)
		}
	}
	if r := env.do(200, "GET", "/v1/channels", nil, okey); len(r.Body["channels"].([]any)) != 1 {
		t.Errorf("other user's channels = %s", r.Raw)
	}

	// Deleting twice: the credential is gone, so 401.
	wantError(t, env.request("DELETE", "/v1/auth/user", nil, victim.Token), 401, "invalid_token")
}

func authEqualCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func TestTokensStoredHashed(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("mia@example.com")
	key := env.apiKey(u)
	rotated := env.do(200, "POST", "/v1/auth/refresh", map[string]string{"refresh_token": u.Refresh}, "")
	secrets := map[string]string{
		"spent refresh token": u.Refresh,
		"spent access token":  u.Token,
		"access token":        rotated.Str("access_token"),
		"refresh token":       rotated.Str("refresh_token"),
		"api key":             key,
		"api key secret part": key[12:],
	}

	db := authOpenDB(t, env)
	var cells []string // every stored value, as text
	for _, table := range []string{"sessions", "spent_refresh_tokens", "api_keys"} {
		rows, err := db.Query("SELECT * FROM " + table)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		n := 0
		for rows.Next() {
			n++
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				switch v := v.(type) {
				case []byte:
					cells = append(cells, string(v))
				default:
					cells = append(cells, fmt.Sprint(v))
				}
			}
		}
		rows.Close()
		if n == 0 {
			t.Fatalf("table %s is empty; the test would prove nothing", table)
		}
	}
	all := strings.Join(cells, "\x00")
	for what, secret := range secrets {
		if strings.Contains(all, secret) {
			t.Errorf("the %s is stored in clear", what)
		}
	}
	// What is stored is the SHA-256 (a positive control for the scan above).
	for _, secret := range []string{rotated.Str("access_token"), rotated.Str("refresh_token"), key, u.Refresh} {
		if !strings.Contains(all, string(store.HashToken(secret))) {
			t.Errorf("SHA-256 of %q..., not found in the database", secret[:4])
		}
	}
}
