package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	keysAPIKeyRe = regexp.MustCompile(`^pk_live_[0-9A-Za-z]{32}$`)
	keysIDRe     = regexp.MustCompile(`^key_[0-9A-Za-z]{20,}$`)
)

// keysList returns the entries of GET /v1/keys.
func (e *testEnv) keysList(token string) []map[string]any {
	e.t.Helper()
	r := e.do(200, "GET", "/v1/keys", nil, token)
	authWantKeys(e.t, "key list", r.Body, "keys")
	raw, ok := r.Body["keys"].([]any)
	if !ok {
		e.t.Fatalf("keys is not an array: %s", r.Raw)
	}
	out := make([]map[string]any, len(raw))
	for i, k := range raw {
		out[i] = k.(map[string]any)
	}
	return out
}

// keysPost creates a key without touching t, so goroutines may call it.
func (e *testEnv) keysPost(token, name string) (int, map[string]any, error) {
	body, _ := json.Marshal(map[string]string{"name": name})
	req, err := http.NewRequest("POST", e.srv.URL+"/v1/keys", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := e.srv.Client().Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return res.StatusCode, nil, fmt.Errorf("bad JSON %q: %w", raw, err)
	}
	return res.StatusCode, m, nil
}

func TestCreateAndListAPIKey(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")

	if got := env.keysList(u.Token); len(got) != 0 {
		t.Fatalf("a new user has keys: %v", got)
	}
	r := env.do(201, "POST", "/v1/keys", map[string]string{"name": "  deploy script  "}, u.Token)
	authWantKeys(t, "created key", r.Body, "id", "name", "key", "created_at")
	key, id := r.Str("key"), r.Str("id")
	if !keysAPIKeyRe.MatchString(key) || len(key) != 40 {
		t.Errorf("key = %q, want pk_live_ + 32 base62 characters (40)", key)
	}
	if !keysIDRe.MatchString(id) {
		t.Errorf("id = %q, want key_ + 20+ base62 characters", id)
	}
	if got, want := r.Str("name"), "deploy script"; got != want {
		t.Errorf("name = %q, want %q", got, want)
	}
	if got := authTime(t, "created_at", r.Str("created_at")); !got.Equal(env.clock.Now()) {
		t.Errorf("created_at = %s, want %s", got, env.clock.Now())
	}

	list := env.do(200, "GET", "/v1/keys", nil, u.Token)
	if bytes.Contains(list.Raw, []byte(key)) || bytes.Contains(list.Raw, []byte(key[12:])) {
		t.Fatalf("listing reveals the key: %s", list.Raw)
	}
	keys := env.keysList(u.Token)
	if len(keys) != 1 {
		t.Fatalf("listed %d keys, want 1", len(keys))
	}
	k := keys[0]
	authWantKeys(t, "listed key", k, "id", "name", "prefix", "created_at", "last_used_at")
	if k["id"] != id || k["name"] != "deploy script" || k["created_at"] != r.Str("created_at") {
		t.Errorf("listed key = %v, want id %s", k, id)
	}
	if got, want := k["prefix"], key[:12]; got != want {
		t.Errorf("prefix = %v, want %q", got, want)
	}
	if k["last_used_at"] != nil {
		t.Errorf("last_used_at before any use = %v, want null", k["last_used_at"])
	}

	// Using the key records the time of use; the listing flushes the buffer.
	env.clock.Advance(90 * time.Second)
	usedAt := env.clock.Now()
	env.do(200, "GET", "/v1/channels", nil, key)
	env.clock.Advance(time.Minute)
	keys = env.keysList(u.Token)
	if got, _ := keys[0]["last_used_at"].(string); got == "" || !authTime(t, "last_used_at", got).Equal(usedAt) {
		t.Errorf("last_used_at = %v, want %s", keys[0]["last_used_at"], usedAt.Format(time.RFC3339Nano))
	}
	// A later use moves it forward.
	env.do(200, "GET", "/v1/auth/me", nil, key)
	keys = env.keysList(u.Token)
	if got, _ := keys[0]["last_used_at"].(string); got == "" || !authTime(t, "last_used_at", got).Equal(env.clock.Now()) {
		t.Errorf("last_used_at after second use = %v, want %s", keys[0]["last_used_at"], env.clock.Now())
	}

	// Another user sees none of it.
	if got := env.keysList(env.newUser("bea@example.com").Token); len(got) != 0 {
		t.Errorf("another user lists %d keys", len(got))
	}
}

func TestAPIKeyName(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("cal@example.com")
	cases := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"missing", "{}", 400, "invalid_payload"},
		{"empty", map[string]string{"name": ""}, 400, "invalid_payload"},
		{"blank", map[string]string{"name": "   "}, 400, "invalid_payload"},
		{"null", `{"name": null}`, 400, "invalid_payload"},
		{"number", `{"name": 5}`, 400, "invalid_payload"},
		{"101 characters", map[string]string{"name": strings.Repeat("k", 101)}, 400, "invalid_payload"},
		{"unknown field", map[string]string{"name": "ok", "scope": "all"}, 400, "invalid_payload"},
		{"invalid JSON", `{"name":`, 400, "invalid_json"},
		{"no body", nil, 400, "invalid_json"},
		{"100 characters", map[string]string{"name": strings.Repeat("k", 100)}, 201, ""},
		{"100 multi-byte characters", map[string]string{"name": strings.Repeat("é", 100)}, 201, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := env.request("POST", "/v1/keys", c.body, u.Token)
			if c.code == "" {
				if r.Status != c.status {
					t.Fatalf("status %d %s, want %d", r.Status, r.Raw, c.status)
				}
				return
			}
			wantError(t, r, c.status, c.code)
		})
	}
	if got := len(env.keysList(u.Token)); got != 2 {
		t.Errorf("%d keys stored, want 2 (only the valid names)", got)
	}
}

func TestAPIKeyLimitAndRevoke(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("dan@example.com")

	keys := map[string]string{} // id -> key
	for i := range 10 {
		r := env.do(201, "POST", "/v1/keys", map[string]string{"name": fmt.Sprintf("k%d", i)}, u.Token)
		keys[r.Str("id")] = r.Str("key")
	}
	r := env.request("POST", "/v1/keys", map[string]string{"name": "eleventh"}, u.Token)
	wantError(t, r, 400, "invalid_payload")
	if !strings.Contains(r.Str("message"), "10") {
		t.Errorf("limit message %q does not say 10", r.Str("message"))
	}
	if got := len(env.keysList(u.Token)); got != 10 {
		t.Fatalf("%d keys listed, want 10", got)
	}

	var id, key string
	for id, key = range keys {
		break
	}
	if got := env.authMe(key); got != 200 {
		t.Fatalf("key before revoke: %d", got)
	}
	r = env.do(200, "DELETE", "/v1/keys/"+id, nil, u.Token)
	authWantKeys(t, "revoke", r.Body, "ok", "message")
	if r.Body["ok"] != true || r.Str("message") != "API key revoked" {
		t.Errorf("revoke body = %s", r.Raw)
	}
	// Revoked means revoked at once, everywhere.
	wantError(t, env.request("GET", "/v1/auth/me", nil, key), 401, "invalid_token")
	wantError(t, env.request("GET", "/v1/channels", nil, key), 401, "invalid_token")
	wantError(t, env.request("DELETE", "/v1/keys/"+id, nil, u.Token), 404, "not_found")
	for _, k := range env.keysList(u.Token) {
		if k["id"] == id {
			t.Errorf("revoked key %s is still listed", id)
		}
	}

	// The freed slot can be used; the one after that cannot.
	env.do(201, "POST", "/v1/keys", map[string]string{"name": "replacement"}, u.Token)
	wantError(t, env.request("POST", "/v1/keys", map[string]string{"name": "twelfth"}, u.Token), 400, "invalid_payload")
	if got := len(env.keysList(u.Token)); got != 10 {
		t.Errorf("%d keys listed, want 10", got)
	}

	// The limit is per user.
	env.do(201, "POST", "/v1/keys", map[string]string{"name": "other"}, env.newUser("eve@example.com").Token)
}

func TestRevokeOtherUsersKey(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	owner := env.newUser("fay@example.com")
	intruder := env.newUser("gus@example.com")
	r := env.do(201, "POST", "/v1/keys", map[string]string{"name": "mine"}, owner.Token)

	for _, id := range []string{r.Str("id"), "key_doesnotexist0000000000"} {
		wantError(t, env.request("DELETE", "/v1/keys/"+id, nil, intruder.Token), 404, "not_found")
	}
	if got := env.authMe(r.Str("key")); got != 200 {
		t.Errorf("owner's key after another user's revoke attempt: %d, want 200", got)
	}
	if got := len(env.keysList(owner.Token)); got != 1 {
		t.Errorf("owner lists %d keys, want 1", got)
	}
}

func TestAPIKeyPermissions(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("hal@example.com")
	key := env.apiKey(u)
	created := env.do(201, "POST", "/v1/keys", map[string]string{"name": "second"}, u.Token)

	// Keys cannot manage keys.
	wantError(t, env.request("POST", "/v1/keys", map[string]string{"name": "x"}, key), 403, "forbidden")
	wantError(t, env.request("GET", "/v1/keys", nil, key), 403, "forbidden")
	wantError(t, env.request("DELETE", "/v1/keys/"+created.Str("id"), nil, key), 403, "forbidden")
	if got := env.authMe(created.Str("key")); got != 200 {
		t.Fatalf("key revoked through a forbidden call: %d", got)
	}
	if got := len(env.keysList(u.Token)); got != 2 {
		t.Fatalf("%d keys after forbidden calls, want 2", got)
	}
	// Without any credential it is 401, not 403.
	wantError(t, env.request("GET", "/v1/keys", nil, ""), 401, "invalid_token")

	// Everything else works with a key, as the user.
	me := env.do(200, "GET", "/v1/auth/me", nil, key)
	if me.Str("id") != u.ID || me.Str("email") != u.Email {
		t.Errorf("me with API key = %s, want user %s", me.Raw, u.ID)
	}
	ch := env.newChannel(u, "from-session")
	list := env.do(200, "GET", "/v1/channels", nil, key)
	chs, _ := list.Body["channels"].([]any)
	if len(chs) != 1 || chs[0].(map[string]any)["id"] != ch["id"] {
		t.Errorf("channels with API key = %s, want the channel %v", list.Raw, ch["id"])
	}
	env.do(201, "POST", "/v1/channels", map[string]string{"name": "from-key"}, key)
	env.do(200, "GET", "/v1/channels/"+ch["id"].(string)+"/secret", nil, key)
	env.do(200, "PATCH", "/v1/channels/"+ch["id"].(string), map[string]string{"name": "renamed"}, key)
}

func TestAPIKeyLimitConcurrent(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("ida@example.com")
	env.apiKey(u) // one exists already

	const n = 20
	var wg sync.WaitGroup
	statuses := make([]int, n)
	codes := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, body, err := env.keysPost(u.Token, fmt.Sprintf("c%d", i))
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			statuses[i] = status
			codes[i], _ = body["error"].(string)
		}()
	}
	wg.Wait()
	created := 0
	for i, s := range statuses {
		switch {
		case s == 201:
			created++
		case s == 400 && codes[i] == "invalid_payload":
		default:
			t.Errorf("request %d: %d %s", i, s, codes[i])
		}
	}
	if created != 9 {
		t.Errorf("%d keys created concurrently, want 9 (10 minus the existing one)", created)
	}
	if got := len(env.keysList(u.Token)); got != 10 {
		t.Errorf("%d active keys, want 10", got)
	}
}
