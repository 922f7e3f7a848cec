package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
)

var (
	chIDRe     = regexp.MustCompile(`^ch_[0-9A-Za-z]{20,}$`)
	chTokenRe  = regexp.MustCompile(`^[0-9A-Za-z]{32,}$`)
	chSecretRe = regexp.MustCompile(`^whsec_[0-9A-Za-z]{32,}$`)
)

// chSub returns env bound to a subtest's t, so that a failing helper stops
// the subtest and not its parent from the wrong goroutine.
func chSub(env *testEnv, t *testing.T) *testEnv {
	c := *env
	c.t = t
	return &c
}

// chItems returns the objects of the array field key of a list response.
func chItems(t testing.TB, r response, key string) []map[string]any {
	t.Helper()
	arr, ok := r.Body[key].([]any)
	if !ok {
		t.Fatalf("response %s has no array %q", r.Raw, key)
	}
	out := make([]map[string]any, len(arr))
	for i, v := range arr {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s[%d] = %v, want an object", key, i, v)
		}
		out[i] = m
	}
	return out
}

// chIDs returns the field f of each item.
func chIDs(items []map[string]any, f string) []string {
	out := make([]string, len(items))
	for i, m := range items {
		out[i], _ = m[f].(string)
	}
	return out
}

// chCount is the number of channels token's user has, read over HTTP.
func chCount(e *testEnv, token string) int {
	e.t.Helper()
	return len(chItems(e.t, e.do(200, "GET", "/v1/channels", nil, token), "channels"))
}

// chTime parses the RFC 3339 UTC timestamp in m[key].
func chTime(t *testing.T, m map[string]any, key string) time.Time {
	t.Helper()
	s, ok := m[key].(string)
	if !ok {
		t.Fatalf("%s = %v, want an RFC 3339 string", key, m[key])
	}
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("%s = %q: %v", key, s, err)
	}
	if !strings.HasSuffix(s, "Z") {
		t.Fatalf("%s = %q, want UTC (Z)", key, s)
	}
	return tm
}

// chParallel sends n requests at once (request i built by build) and returns
// their statuses. It uses net/http directly: env.request may not fail the test
// from another goroutine.
func chParallel(e *testEnv, token string, n int, build func(i int) (method, path, body string)) []int {
	e.t.Helper()
	statuses := make([]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			method, path, body := build(i)
			req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
			if err != nil {
				errs[i] = err
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			res, err := e.srv.Client().Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			res.Body.Close()
			statuses[i] = res.StatusCode
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		e.t.Fatal(err)
	}
	return statuses
}

// chStored reads a channel straight from the store.
func chStored(e *testEnv, userID, id string) *store.Channel {
	e.t.Helper()
	c, err := e.st.Channel(context.Background(), userID, id)
	if err != nil {
		e.t.Fatalf("store: channel %s: %v", id, err)
	}
	return c
}

func TestChannelCreateShape(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	r := env.do(201, "POST", "/v1/channels", map[string]string{"name": "Deploys", "icon": "rocket", "color": "#1E90FF"}, u.Token)
	c := r.Body

	id := r.Str("id")
	if !chIDRe.MatchString(id) {
		t.Fatalf("id = %q, want ch_ + 20+ base62", id)
	}
	for k, want := range map[string]string{"name": "Deploys", "icon": "rocket", "color": "#1E90FF"} {
		if got := r.Str(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	for _, k := range []string{"muted_until", "folder_id", "approval"} {
		if v, ok := c[k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	tok := r.Str("webhook_token")
	if !chTokenRe.MatchString(tok) {
		t.Fatalf("webhook_token = %q, want 32+ base62", tok)
	}
	if got, want := r.Str("webhook_url"), env.srv.URL+"/v1/send/"+tok; got != want {
		t.Errorf("webhook_url = %q, want %q", got, want)
	}
	now := env.clock.Now()
	if got := chTime(t, c, "created_at"); !got.Equal(now) {
		t.Errorf("created_at = %v, want %v", got, now)
	}
	if got := chTime(t, c, "updated_at"); !got.Equal(now) {
		t.Errorf("updated_at = %v, want %v", got, now)
	}
	if _, ok := c["webhook_secret"]; ok {
		t.Errorf("channel shows webhook_secret; only GET /secret may")
	}

	st := chStored(env, u.ID, id)
	if st.Name != "Deploys" || st.WebhookToken != tok || !chSecretRe.MatchString(st.WebhookSecret) {
		t.Errorf("stored channel = %+v", st)
	}
}

func TestChannelCreateValidation(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	env.newChannel(u, "existing")

	cases := []struct {
		name    string
		body    any
		code    string
		mention string // the message must name this
	}{
		{"missing name", map[string]any{"icon": "bell"}, "invalid_payload", "name"},
		{"blank name", map[string]any{"name": "   "}, "invalid_payload", "name"},
		{"name of 101 characters", map[string]any{"name": strings.Repeat("é", 101)}, "invalid_payload", "name"},
		{"icon of 101 characters", map[string]any{"name": "ok", "icon": strings.Repeat("x", 101)}, "invalid_payload", "icon"},
		{"color word", map[string]any{"name": "ok", "color": "red"}, "invalid_payload", "color"},
		{"color too short", map[string]any{"name": "ok", "color": "#12345"}, "invalid_payload", "color"},
		{"color not hex", map[string]any{"name": "ok", "color": "#GGGGGG"}, "invalid_payload", "color"},
		{"unknown field", map[string]any{"name": "ok", "bogus": 1}, "invalid_payload", "bogus"},
		{"metadata field", map[string]any{"name": "ok", "metadata": map[string]any{}}, "invalid_payload", "metadata"},
		{"invalid JSON", `{"name": "ok"`, "invalid_json", ""},
		{"not an object", `["ok"]`, "invalid_payload", ""},
		{"empty body", "", "invalid_json", ""},
		{"name is a number", map[string]any{"name": 5}, "invalid_payload", "name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := chSub(env, t)
			r := e.request("POST", "/v1/channels", tc.body, u.Token)
			wantError(t, r, 400, tc.code)
			if !strings.Contains(r.Str("message"), tc.mention) {
				t.Errorf("message %q does not name %q", r.Str("message"), tc.mention)
			}
			if got, want := chCount(e, u.Token), 1; got != want {
				t.Errorf("channels after rejected create = %d, want %d", got, want)
			}
		})
	}

	t.Run("100 two-byte characters are accepted", func(t *testing.T) {
		e := chSub(env, t)
		name := strings.Repeat("é", 100) // 200 bytes, 100 characters
		r := e.do(201, "POST", "/v1/channels", map[string]string{"name": name}, u.Token)
		if got := r.Str("name"); got != name {
			t.Errorf("name = %q, want 100 é", got)
		}
	})
}

func TestChannelGetAndList(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	other := env.newUser("bob@example.com")
	if got := chItems(t, env.do(200, "GET", "/v1/channels", nil, u.Token), "channels"); len(got) != 0 {
		t.Fatalf("new user has channels %v", got)
	}
	a := env.newChannel(u, "alpha")
	env.clock.Advance(time.Second)
	b := env.newChannel(u, "beta")
	env.newChannel(other, "theirs")

	list := chItems(t, env.do(200, "GET", "/v1/channels", nil, u.Token), "channels")
	if got, want := strings.Join(chIDs(list, "id"), ","), a["id"].(string)+","+b["id"].(string); got != want {
		t.Fatalf("list ids = %s, want %s (oldest first, only mine)", got, want)
	}
	if list[1]["webhook_token"] != b["webhook_token"] || list[1]["name"] != "beta" {
		t.Errorf("listed channel %v, want %v", list[1], b)
	}

	got := env.do(200, "GET", "/v1/channels/"+a["id"].(string), nil, u.Token).Body
	for _, k := range []string{"id", "name", "icon", "color", "webhook_token", "webhook_url", "created_at", "updated_at"} {
		if got[k] != a[k] {
			t.Errorf("GET %s = %v, want %v as created", k, got[k], a[k])
		}
	}
	wantError(t, env.request("GET", "/v1/channels/ch_doesnotexist000000000000", nil, u.Token), 404, "not_found")
	wantError(t, env.request("GET", "/v1/channels", nil, ""), 401, "invalid_token")
}

func TestChannelOfAnotherUserIsNotFound(t *testing.T) {
	env := newTestEnv(t)
	owner := env.newUser("ann@example.com")
	intruder := env.newUser("eve@example.com")
	id := env.newChannel(owner, "private")["id"].(string)
	before := chStored(env, owner.ID, id)
	env.clock.Advance(time.Minute)

	cases := []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/channels/" + id, nil},
		{"PATCH", "/v1/channels/" + id, map[string]any{"name": "mine now", "muted_until": "2030-01-01T00:00:00Z"}},
		{"DELETE", "/v1/channels/" + id, nil},
		{"POST", "/v1/channels/" + id + "/regenerate", nil},
		{"GET", "/v1/channels/" + id + "/secret", nil},
		{"POST", "/v1/channels/" + id + "/secret/rotate", nil},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+strings.Replace(tc.path, id, ":id", 1), func(t *testing.T) {
			e := chSub(env, t)
			r := e.request(tc.method, tc.path, tc.body, intruder.Token)
			wantError(t, r, 404, "not_found")
			if strings.Contains(string(r.Raw), before.WebhookSecret) || strings.Contains(string(r.Raw), before.WebhookToken) {
				t.Errorf("404 body leaks a credential: %s", r.Raw)
			}
		})
	}

	after := chStored(env, owner.ID, id)
	if after.Name != before.Name || after.WebhookToken != before.WebhookToken ||
		after.WebhookSecret != before.WebhookSecret || after.MutedUntil != nil || !after.UpdatedAt.Equal(before.UpdatedAt) {
		t.Errorf("owner's channel changed: before %+v, after %+v", before, after)
	}
	if n := chCount(env, intruder.Token); n != 0 {
		t.Errorf("intruder lists %d channels, want 0", n)
	}
}

func TestChannelPatchFields(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	c := env.do(201, "POST", "/v1/channels", map[string]string{"name": "Deploys", "icon": "rocket", "color": "#112233"}, u.Token).Body
	id := c["id"].(string)
	path := "/v1/channels/" + id

	steps := []struct {
		body                  map[string]any
		wantName, wantIcon    string
		wantColor             string // compared case-insensitively
		wantFolder, wantMuted any
	}{
		{map[string]any{"name": "  Builds  "}, "Builds", "rocket", "#112233", nil, nil},
		{map[string]any{"icon": "hammer"}, "Builds", "hammer", "#112233", nil, nil},
		{map[string]any{"color": "#aabbcc"}, "Builds", "hammer", "#AABBCC", nil, nil},
		{map[string]any{}, "Builds", "hammer", "#AABBCC", nil, nil},
	}
	prevUpdated := chTime(t, c, "updated_at")
	for i, s := range steps {
		env.clock.Advance(time.Second)
		r := env.do(200, "PATCH", path, s.body, u.Token)
		if r.Str("name") != s.wantName || r.Str("icon") != s.wantIcon || !strings.EqualFold(r.Str("color"), s.wantColor) {
			t.Fatalf("step %d: got name %q icon %q color %q, want %q %q %q", i, r.Str("name"), r.Str("icon"), r.Str("color"), s.wantName, s.wantIcon, s.wantColor)
		}
		if r.Body["muted_until"] != nil || r.Body["folder_id"] != nil || r.Body["approval"] != nil {
			t.Errorf("step %d: untouched nullable fields changed: %s", i, r.Raw)
		}
		for _, k := range []string{"id", "webhook_token", "webhook_url", "created_at"} {
			if r.Body[k] != c[k] {
				t.Errorf("step %d: %s = %v, want unchanged %v", i, k, r.Body[k], c[k])
			}
		}
		updated := chTime(t, r.Body, "updated_at")
		if !updated.After(prevUpdated) || !updated.Equal(env.clock.Now()) {
			t.Errorf("step %d: updated_at = %v, want the clock %v (after %v)", i, updated, env.clock.Now(), prevUpdated)
		}
		prevUpdated = updated
		st := chStored(env, u.ID, id)
		if st.Name != s.wantName || st.Icon != s.wantIcon || !strings.EqualFold(st.Color, s.wantColor) {
			t.Errorf("step %d: stored %q %q %q", i, st.Name, st.Icon, st.Color)
		}
	}
	if got := env.do(200, "GET", path, nil, u.Token); got.Str("name") != "Builds" || got.Str("icon") != "hammer" {
		t.Errorf("GET after PATCH = %s", got.Raw)
	}
}

func TestChannelPatchValidation(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	id := env.newChannel(u, "stable")["id"].(string)
	before := chStored(env, u.ID, id)
	env.clock.Advance(time.Second)

	cases := []struct {
		name string
		body any
		code string
	}{
		{"blank name", map[string]any{"name": " "}, "invalid_payload"},
		{"name of 101 characters", map[string]any{"name": strings.Repeat("é", 101)}, "invalid_payload"},
		{"bad color", map[string]any{"name": "changed", "color": "red"}, "invalid_payload"},
		{"muted_until not a timestamp", map[string]any{"muted_until": "tomorrow"}, "invalid_payload"},
		{"muted_until date only", map[string]any{"muted_until": "2030-01-02"}, "invalid_payload"},
		{"muted_until a number", map[string]any{"muted_until": 1893456000}, "invalid_payload"},
		{"folder_id empty", map[string]any{"folder_id": ""}, "invalid_payload"},
		{"folder_id a number", map[string]any{"folder_id": 7}, "invalid_payload"},
		{"unknown field", map[string]any{"name": "changed", "webhook_token": "mine"}, "invalid_payload"},
		{"invalid JSON", `{"name":`, "invalid_json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := chSub(env, t)
			wantError(t, e.request("PATCH", "/v1/channels/"+id, tc.body, u.Token), 400, tc.code)
			after := chStored(e, u.ID, id)
			if after.Name != before.Name || after.Color != before.Color || after.MutedUntil != nil ||
				after.FolderID != nil || after.WebhookToken != before.WebhookToken || !after.UpdatedAt.Equal(before.UpdatedAt) {
				t.Errorf("rejected PATCH changed the channel: %+v", after)
			}
		})
	}
}

func TestChannelPatchMutedUntil(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	id := env.newChannel(u, "noisy")["id"].(string)
	path := "/v1/channels/" + id

	r := env.do(200, "PATCH", path, map[string]any{"muted_until": "2030-01-02T15:04:05+02:00"}, u.Token)
	want := time.Date(2030, 1, 2, 13, 4, 5, 0, time.UTC)
	if got := chTime(t, r.Body, "muted_until"); !got.Equal(want) {
		t.Fatalf("muted_until = %v, want %v", got, want)
	}
	if st := chStored(env, u.ID, id); st.MutedUntil == nil || !st.MutedUntil.Equal(want) {
		t.Fatalf("stored muted_until = %v, want %v", st.MutedUntil, want)
	}

	// A PATCH that does not mention muted_until leaves it alone.
	r = env.do(200, "PATCH", path, map[string]any{"name": "quiet"}, u.Token)
	if got := chTime(t, r.Body, "muted_until"); !got.Equal(want) {
		t.Fatalf("muted_until after name PATCH = %v, want %v", got, want)
	}
	if got := chTime(t, env.do(200, "GET", path, nil, u.Token).Body, "muted_until"); !got.Equal(want) {
		t.Fatalf("GET muted_until = %v, want %v", got, want)
	}

	// Fractional seconds survive to the millisecond.
	r = env.do(200, "PATCH", path, map[string]any{"muted_until": "2030-06-01T00:00:00.250Z"}, u.Token)
	if got, want := r.Str("muted_until"), "2030-06-01T00:00:00.25"; !strings.HasPrefix(got, want) {
		t.Fatalf("muted_until = %q, want prefix %q", got, want)
	}

	r = env.do(200, "PATCH", path, map[string]any{"muted_until": nil}, u.Token)
	if v, ok := r.Body["muted_until"]; !ok || v != nil {
		t.Fatalf("muted_until after null = %v, want null", v)
	}
	if st := chStored(env, u.ID, id); st.MutedUntil != nil {
		t.Fatalf("stored muted_until = %v after null, want nil", st.MutedUntil)
	}
}

func TestChannelPatchFolder(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	other := env.newUser("bob@example.com")
	id := env.newChannel(u, "sorted")["id"].(string)
	path := "/v1/channels/" + id
	mine := env.do(201, "POST", "/v1/folders", map[string]string{"name": "Work"}, u.Token).Str("id")
	theirs := env.do(201, "POST", "/v1/folders", map[string]string{"name": "Bob's"}, other.Token).Str("id")

	r := env.do(200, "PATCH", path, map[string]any{"folder_id": mine}, u.Token)
	if got := r.Str("folder_id"); got != mine {
		t.Fatalf("folder_id = %q, want %q", got, mine)
	}
	if st := chStored(env, u.ID, id); st.FolderID == nil || *st.FolderID != mine {
		t.Fatalf("stored folder_id = %v, want %s", st.FolderID, mine)
	}

	for name, fid := range map[string]string{"another user's folder": theirs, "unknown folder": "fld_doesnotexist00000000000"} {
		t.Run(name, func(t *testing.T) {
			e := chSub(env, t)
			r := e.request("PATCH", path, map[string]any{"folder_id": fid, "name": "moved"}, u.Token)
			wantError(t, r, 400, "invalid_payload")
			st := chStored(e, u.ID, id)
			if st.FolderID == nil || *st.FolderID != mine || st.Name != "sorted" {
				t.Errorf("rejected PATCH changed the channel: folder %v, name %q", st.FolderID, st.Name)
			}
		})
	}

	r = env.do(200, "PATCH", path, map[string]any{"name": "renamed"}, u.Token)
	if got := r.Str("folder_id"); got != mine {
		t.Fatalf("folder_id after name PATCH = %q, want %q", got, mine)
	}
	r = env.do(200, "PATCH", path, map[string]any{"folder_id": nil}, u.Token)
	if v, ok := r.Body["folder_id"]; !ok || v != nil {
		t.Fatalf("folder_id after null = %v, want null", v)
	}
	if st := chStored(env, u.ID, id); st.FolderID != nil {
		t.Fatalf("stored folder_id = %v, want nil", *st.FolderID)
	}
}

// chApproval reads the approval object of a channel response.
func chApproval(t *testing.T, r response) (required int, approvers []string, window int) {
	t.Helper()
	a, ok := r.Body["approval"].(map[string]any)
	if !ok {
		t.Fatalf("approval = %v, want an object; body %s", r.Body["approval"], r.Raw)
	}
	for _, v := range a["approvers"].([]any) {
		approvers = append(approvers, v.(string))
	}
	return int(a["required_count"].(float64)), approvers, int(a["window_seconds"].(float64))
}

func TestChannelPatchApproval(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	b := env.newUser("bob@example.com")
	c := env.newUser("cat@example.com")
	id := env.newChannel(u, "prod deploys")["id"].(string)
	path := "/v1/channels/" + id

	rule := map[string]any{"required_count": 2, "approvers": []string{b.ID, c.ID}, "window_seconds": 600}
	for _, r := range []response{
		env.do(200, "PATCH", path, map[string]any{"approval": rule}, u.Token),
		env.do(200, "GET", path, nil, u.Token),
		env.do(200, "PATCH", path, map[string]any{"name": "prod"}, u.Token), // untouched approval stays
	} {
		n, approvers, window := chApproval(t, r)
		if n != 2 || strings.Join(approvers, ",") != b.ID+","+c.ID || window != 600 {
			t.Fatalf("approval = %d %v %d, want 2 [%s %s] 600", n, approvers, window, b.ID, c.ID)
		}
	}
	st := chStored(env, u.ID, id)
	if st.Approval == nil || st.Approval.RequiredCount != 2 || len(st.Approval.Approvers) != 2 || st.Approval.WindowSeconds != 600 {
		t.Fatalf("stored approval = %+v", st.Approval)
	}

	r := env.do(200, "PATCH", path, map[string]any{"approval": nil}, u.Token)
	if v, ok := r.Body["approval"]; !ok || v != nil {
		t.Fatalf("approval after null = %v, want null", v)
	}
	if st := chStored(env, u.ID, id); st.Approval != nil {
		t.Fatalf("stored approval = %+v after null, want nil", st.Approval)
	}
}

func TestChannelPatchApprovalValidation(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	b := env.newUser("bob@example.com")
	c := env.newUser("cat@example.com")
	id := env.newChannel(u, "guarded")["id"].(string)
	path := "/v1/channels/" + id
	env.do(200, "PATCH", path, map[string]any{"approval": map[string]any{"required_count": 1, "approvers": []string{b.ID}, "window_seconds": 60}}, u.Token)

	cases := []struct {
		name     string
		approval any
	}{
		{"approver neither an id nor an email", map[string]any{"required_count": 1, "approvers": []string{b.ID, "bob"}, "window_seconds": 60}},
		{"approver a short id", map[string]any{"required_count": 1, "approvers": []string{b.ID, "usr_nobody"}, "window_seconds": 60}},
		{"approver an address without a domain", map[string]any{"required_count": 1, "approvers": []string{b.ID, "bob@"}, "window_seconds": 60}},
		{"approver empty", map[string]any{"required_count": 1, "approvers": []string{b.ID, ""}, "window_seconds": 60}},
		{"duplicate approver by case", map[string]any{"required_count": 1, "approvers": []string{"Bob@Example.com", "bob@example.com"}, "window_seconds": 60}},
		{"required_count 0", map[string]any{"required_count": 0, "approvers": []string{b.ID, c.ID}, "window_seconds": 60}},
		{"required_count above approvers", map[string]any{"required_count": 3, "approvers": []string{b.ID, c.ID}, "window_seconds": 60}},
		{"required_count missing", map[string]any{"approvers": []string{b.ID}, "window_seconds": 60}},
		{"window_seconds 0", map[string]any{"required_count": 1, "approvers": []string{b.ID}, "window_seconds": 0}},
		{"window_seconds negative", map[string]any{"required_count": 1, "approvers": []string{b.ID}, "window_seconds": -30}},
		{"duplicate approver", map[string]any{"required_count": 1, "approvers": []string{b.ID, b.ID}, "window_seconds": 60}},
		{"empty approvers", map[string]any{"required_count": 1, "approvers": []string{}, "window_seconds": 60}},
		{"approvers missing", map[string]any{"required_count": 1, "window_seconds": 60}},
		{"unknown field inside approval", map[string]any{"required_count": 1, "approvers": []string{b.ID}, "window_seconds": 60, "quorum": "all"}},
		{"required_count a string", map[string]any{"required_count": "1", "approvers": []string{b.ID}, "window_seconds": 60}},
		{"approval a string", "yes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := chSub(env, t)
			wantError(t, e.request("PATCH", path, map[string]any{"approval": tc.approval}, u.Token), 400, "invalid_payload")
			st := chStored(e, u.ID, id)
			if st.Approval == nil || st.Approval.RequiredCount != 1 || len(st.Approval.Approvers) != 1 || st.Approval.Approvers[0] != b.ID || st.Approval.WindowSeconds != 60 {
				t.Errorf("rejected PATCH changed the approval rule: %+v", st.Approval)
			}
		})
	}
}

func TestChannelDelete(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	ch := env.newChannel(u, "doomed")
	keep := env.newChannel(u, "kept")
	id := ch["id"].(string)

	r := env.do(200, "DELETE", "/v1/channels/"+id, nil, u.Token)
	if ok, _ := r.Body["ok"].(bool); !ok {
		t.Fatalf("DELETE = %s, want {ok:true}", r.Raw)
	}
	wantError(t, env.request("GET", "/v1/channels/"+id, nil, u.Token), 404, "not_found")
	wantError(t, env.request("DELETE", "/v1/channels/"+id, nil, u.Token), 404, "not_found")
	if got := chIDs(chItems(t, env.do(200, "GET", "/v1/channels", nil, u.Token), "channels"), "id"); len(got) != 1 || got[0] != keep["id"] {
		t.Fatalf("channels after delete = %v, want only %v", got, keep["id"])
	}
	if _, _, err := env.st.ChannelByToken(context.Background(), ch["webhook_token"].(string)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("token of a deleted channel: err %v, want ErrNotFound", err)
	}
}

func TestChannelRegenerateToken(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	ch := env.newChannel(u, "leaky")
	id, old := ch["id"].(string), ch["webhook_token"].(string)
	secret := chStored(env, u.ID, id).WebhookSecret
	env.clock.Advance(time.Second)

	r := env.do(200, "POST", "/v1/channels/"+id+"/regenerate", nil, u.Token)
	tok := r.Str("webhook_token")
	if tok == old || !chTokenRe.MatchString(tok) {
		t.Fatalf("new webhook_token = %q (old %q), want a fresh 32+ base62 token", tok, old)
	}
	if r.Str("id") != id || r.Str("name") != "leaky" {
		t.Errorf("regenerate returned %s, want the same channel", r.Raw)
	}
	if got, want := r.Str("webhook_url"), env.srv.URL+"/v1/send/"+tok; got != want {
		t.Errorf("webhook_url = %q, want %q", got, want)
	}
	if !chTime(t, r.Body, "updated_at").Equal(env.clock.Now()) {
		t.Errorf("updated_at = %s, want %v", r.Str("updated_at"), env.clock.Now())
	}

	ctx := context.Background()
	if _, _, err := env.st.ChannelByToken(ctx, old); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("old token: err %v, want ErrNotFound", err)
	}
	c, _, err := env.st.ChannelByToken(ctx, tok)
	if err != nil || c.ID != id {
		t.Fatalf("new token: channel %v, err %v; want %s", c, err, id)
	}
	if c.WebhookSecret != secret {
		t.Errorf("regenerating the token changed the signing secret")
	}
	if got := env.do(200, "GET", "/v1/channels/"+id, nil, u.Token).Str("webhook_token"); got != tok {
		t.Errorf("GET webhook_token = %q, want %q", got, tok)
	}
}

func TestChannelSecret(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	ch := env.newChannel(u, "signed")
	id := ch["id"].(string)
	path := "/v1/channels/" + id + "/secret"

	checkShape := func(r response) string {
		t.Helper()
		if !chSecretRe.MatchString(r.Str("webhook_secret")) {
			t.Fatalf("webhook_secret = %q, want whsec_ + 32+ base62", r.Str("webhook_secret"))
		}
		if r.Str("algorithm") != "HMAC-SHA256" || r.Str("header_name") != "X-Service-Signature" {
			t.Fatalf("secret result = %s", r.Raw)
		}
		return r.Str("webhook_secret")
	}
	first := checkShape(env.do(200, "GET", path, nil, u.Token))
	if again := checkShape(env.do(200, "GET", path, nil, u.Token)); again != first {
		t.Fatalf("reading the secret changed it: %q then %q", first, again)
	}
	if got := chStored(env, u.ID, id).WebhookSecret; got != first {
		t.Fatalf("GET secret = %q, stored %q", first, got)
	}

	rotated := checkShape(env.do(200, "POST", path+"/rotate", nil, u.Token))
	if rotated == first {
		t.Fatalf("rotate returned the old secret")
	}
	if got := checkShape(env.do(200, "GET", path, nil, u.Token)); got != rotated {
		t.Fatalf("GET after rotate = %q, want %q", got, rotated)
	}
	st := chStored(env, u.ID, id)
	if st.WebhookSecret != rotated {
		t.Fatalf("stored secret = %q, want %q", st.WebhookSecret, rotated)
	}
	if st.WebhookToken != ch["webhook_token"] {
		t.Errorf("rotating the secret changed the webhook token")
	}
}

func TestChannelEndpointsWithAPIKey(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	key := env.apiKey(u)

	ch := env.do(201, "POST", "/v1/channels", map[string]string{"name": "scripted", "color": "#00FF00"}, key).Body
	id := ch["id"].(string)
	if n := chCount(env, key); n != 1 {
		t.Fatalf("list with key: %d channels, want 1", n)
	}
	if n := chCount(env, u.Token); n != 1 {
		t.Fatalf("list with session: %d channels, want 1 (the key's channel is the user's)", n)
	}
	if got := env.do(200, "GET", "/v1/channels/"+id, nil, key).Str("name"); got != "scripted" {
		t.Fatalf("GET with key: name %q", got)
	}
	if got := env.do(200, "PATCH", "/v1/channels/"+id, map[string]any{"name": "renamed", "muted_until": "2030-01-01T00:00:00Z"}, key).Str("name"); got != "renamed" {
		t.Fatalf("PATCH with key: name %q", got)
	}
	if chStored(env, u.ID, id).Name != "renamed" {
		t.Fatalf("PATCH with key was not stored")
	}
	if got := env.do(200, "POST", "/v1/channels/"+id+"/regenerate", nil, key).Str("webhook_token"); got == ch["webhook_token"] {
		t.Fatalf("regenerate with key kept the token")
	}
	secret := env.do(200, "GET", "/v1/channels/"+id+"/secret", nil, key).Str("webhook_secret")
	if !chSecretRe.MatchString(secret) {
		t.Fatalf("secret with key = %q", secret)
	}
	if got := env.do(200, "POST", "/v1/channels/"+id+"/secret/rotate", nil, key).Str("webhook_secret"); got == secret || !chSecretRe.MatchString(got) {
		t.Fatalf("rotate with key = %q (old %q)", got, secret)
	}
	env.do(200, "DELETE", "/v1/channels/"+id, nil, key)
	wantError(t, env.request("GET", "/v1/channels/"+id, nil, u.Token), 404, "not_found")
	wantError(t, env.request("GET", "/v1/channels", nil, "pk_live_"+strings.Repeat("x", 32)), 401, "invalid_token")
}

func TestChannelApprovalBounds(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	id := env.newChannel(u, "committee")["id"].(string)
	path := "/v1/channels/" + id
	// Approvers need no password, so create them in the store directly.
	approvers := make([]string, 101)
	for i := range approvers {
		a := &store.User{Email: fmt.Sprintf("approver%d@example.com", i), Plan: "free"}
		if err := env.st.CreateUser(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		approvers[i] = a.ID
	}

	const year = 365 * 24 * 60 * 60
	r := env.do(200, "PATCH", path, map[string]any{"approval": map[string]any{"required_count": 100, "approvers": approvers[:100], "window_seconds": year}}, u.Token)
	if n, got, window := chApproval(t, r); n != 100 || len(got) != 100 || window != year {
		t.Fatalf("approval = %d, %d approvers, %d s; want 100, 100, %d", n, len(got), window, year)
	}

	// 33,000 ids exceed SQLite's limit on query parameters; that was a 500.
	many := make([]string, 33000)
	for i := range many {
		many[i] = fmt.Sprintf("u%d", i)
	}
	cases := []struct {
		name     string
		approval map[string]any
	}{
		{"101 approvers", map[string]any{"required_count": 1, "approvers": approvers, "window_seconds": 60}},
		{"33000 approvers", map[string]any{"required_count": 1, "approvers": many, "window_seconds": 60}},
		{"window over a year", map[string]any{"required_count": 1, "approvers": approvers[:1], "window_seconds": year + 1}},
		{"window beyond time.Duration", map[string]any{"required_count": 1, "approvers": approvers[:1], "window_seconds": int64(1e10)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := chSub(env, t)
			wantError(t, e.request("PATCH", path, map[string]any{"approval": tc.approval}, u.Token), 400, "invalid_payload")
			if st := chStored(e, u.ID, id); st.Approval == nil || len(st.Approval.Approvers) != 100 || st.Approval.WindowSeconds != year {
				t.Errorf("rejected PATCH changed the approval rule: %+v", st.Approval)
			}
		})
	}
}
