package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/store"
)

var msgIDRe = regexp.MustCompile(`^msg_[0-9A-Za-z]{20,}$`)

// msgSub returns env bound to a subtest's t, so that a failing helper stops
// the subtest and not its parent.
func msgSub(env *testEnv, t *testing.T) *testEnv {
	c := *env
	c.t = t
	return &c
}

// msgChannel creates a channel for u and returns its id and webhook token.
func msgChannel(e *testEnv, u *testUser, name string) (id, token string) {
	e.t.Helper()
	c := e.newChannel(u, name)
	id, _ = c["id"].(string)
	token, _ = c["webhook_token"].(string)
	if id == "" || token == "" {
		e.t.Fatalf("channel %v has no id or webhook_token", c)
	}
	return id, token
}

// msgSend sends payload through token and returns the new message's id; it
// fails the test unless the answer is 200.
func msgSend(e *testEnv, token string, payload any) string {
	e.t.Helper()
	r := e.do(200, "POST", "/v1/send/"+token, payload, "")
	id := r.Str("id")
	if !msgIDRe.MatchString(id) {
		e.t.Fatalf("send: id = %q, want msg_ + 20+ base62; body %s", id, r.Raw)
	}
	return id
}

// msgStored reads a message straight from the store.
func msgStored(e *testEnv, id string) *store.Message {
	e.t.Helper()
	m, err := e.st.Message(context.Background(), id)
	if err != nil {
		e.t.Fatalf("store: message %s: %v", id, err)
	}
	return m
}

// msgGone fails unless the store has no message id.
func msgGone(e *testEnv, id string) {
	e.t.Helper()
	if m, err := e.st.Message(context.Background(), id); !errors.Is(err, store.ErrNotFound) {
		e.t.Fatalf("store: message %s = %+v, %v; want ErrNotFound", id, m, err)
	}
}

// msgCount is the number of stored messages in userID's channels.
func msgCount(e *testEnv, userID string) int {
	e.t.Helper()
	page, err := e.st.ListMessages(context.Background(), store.MessageQuery{UserID: userID, Limit: 1})
	if err != nil {
		e.t.Fatalf("store: list messages: %v", err)
	}
	return page.Total
}

// msgValue decodes JSON into generic values, for comparing JSON by meaning.
func msgValue(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("bad JSON %q: %v", raw, err)
	}
	return v
}

// msgSameJSON fails unless got and want are the same JSON value.
func msgSameJSON(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	if g, w := msgValue(t, got), msgValue(t, []byte(want)); !reflect.DeepEqual(g, w) {
		t.Fatalf("%s = %s, want %s", what, got, want)
	}
}

// msgRaw is a request that is safe to make from many goroutines: it reports
// failures as an error instead of failing the test.
func msgRaw(e *testEnv, method, path string, body any, token string) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		buf, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return res.StatusCode, nil, err
	}
	return res.StatusCode, out, nil
}

// Builders of send payloads.

func msgButton(key string) map[string]any {
	return map[string]any{"type": "button", "label": "Tap " + key, "key": key}
}

func msgURL(value string) map[string]any {
	return map[string]any{"type": "url", "label": "Open", "value": value}
}

func msgField(key, typ string) map[string]any {
	return map[string]any{"key": key, "label": "Field " + key, "type": typ}
}

func msgForm(key string, fields ...map[string]any) map[string]any {
	fs := make([]any, len(fields))
	for i, f := range fields {
		fs[i] = f
	}
	return map[string]any{"type": "form", "label": "Fill " + key, "key": key, "fields": fs}
}

// msgPayload is a valid payload with title "t" and the given fields added
// (a nil value deletes a field).
func msgPayload(kv ...any) map[string]any {
	p := map[string]any{"title": "t"}
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		if kv[i+1] == nil {
			delete(p, k)
			continue
		}
		p[k] = kv[i+1]
	}
	return p
}

func msgActions(as ...map[string]any) []any {
	out := make([]any, len(as))
	for i, a := range as {
		out[i] = a
	}
	return out
}

func msgButtons(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = msgButton("b" + strconv.Itoa(i))
	}
	return out
}

func msgFields(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = msgField("f"+strconv.Itoa(i), "text")
	}
	return out
}

const msgHook = "https://hooks.example.com/herald"

func TestSendSuccess(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	chID, token := msgChannel(env, u, "deploys")

	payload := map[string]any{
		"title":        "Deploy finished",
		"body":         "**v1.2** is live",
		"priority":     "high",
		"callback_url": msgHook,
		"actions": msgActions(
			map[string]any{"type": "button", "label": "Roll back", "key": "rollback", "style": "destructive"},
			msgURL("https://ci.example.com/run/7"),
		),
	}
	r := env.do(200, "POST", "/v1/send/"+token, payload, "")
	msgSameJSON(t, "send answer without id", mustJSON(t, withoutKey(r.Body, "id")), `{"ok": true, "muted": false}`)
	id := r.Str("id")
	if !msgIDRe.MatchString(id) {
		t.Fatalf("id = %q, want msg_ + 20+ base62", id)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}

	m := msgStored(env, id)
	if m.ChannelID != chID || m.Title != "Deploy finished" || m.Body != "**v1.2** is live" || m.Priority != "high" {
		t.Errorf("stored message = %+v", m)
	}
	if m.CallbackURL == nil || *m.CallbackURL != msgHook {
		t.Errorf("stored callback_url = %v, want %q", m.CallbackURL, msgHook)
	}
	msgSameJSON(t, "stored actions", m.Actions, `[
		{"type": "button", "label": "Roll back", "key": "rollback", "style": "destructive"},
		{"type": "url", "label": "Open", "value": "https://ci.example.com/run/7"}]`)
	if m.Muted || m.State != store.StatePending || m.Response != nil || m.SubmittedAt != nil {
		t.Errorf("stored muted/state/response = %v/%q/%s/%v, want false/pending/nil/nil", m.Muted, m.State, m.Response, m.SubmittedAt)
	}
	if !m.CreatedAt.Equal(env.clock.Now()) {
		t.Errorf("created_at = %v, want the clock's %v", m.CreatedAt, env.clock.Now())
	}

	// Only title: priority defaults to normal, no actions, no callback.
	id2 := msgSend(env, token, map[string]any{"title": "hello"})
	if id2 == id {
		t.Fatalf("two sends got the same id %q", id)
	}
	m2 := msgStored(env, id2)
	if m2.Title != "hello" || m2.Body != "" || m2.Priority != "normal" || m2.CallbackURL != nil {
		t.Errorf("stored minimal message = %+v", m2)
	}
	msgSameJSON(t, "stored actions of a message without actions", m2.Actions, `[]`)
	if got := msgCount(env, u.ID); got != 2 {
		t.Errorf("stored messages = %d, want 2", got)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func withoutKey(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func TestSendUnknownToken(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	_, token := msgChannel(env, u, "x")

	for _, tok := range []string{"nope", token + "x", strings.ToLower(token) + "Z"} {
		wantError(t, env.request("POST", "/v1/send/"+tok, msgPayload(), ""), 401, "invalid_token")
	}
	if got := msgCount(env, u.ID); got != 0 {
		t.Fatalf("stored messages = %d, want 0", got)
	}
}

func TestSendInvalidJSON(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	_, token := msgChannel(env, u, "x")

	tests := []struct {
		name, body, code string
	}{
		{"open brace", `{`, "invalid_json"},
		{"not json", `not json`, "invalid_json"},
		{"unterminated", `{"title": "x"`, "invalid_json"},
		{"trailing comma", `{"title": "x",}`, "invalid_json"},
		{"single quotes", `{'title': 'x'}`, "invalid_json"},
		{"two values", `{"title": "x"} {"title": "y"}`, "invalid_json"},
		{"trailing garbage", `{"title": "x"}]`, "invalid_json"},
		{"empty body", ``, "invalid_json"},
		{"whitespace body", "  \n\t ", "invalid_json"},
		// Valid JSON of the wrong shape is a payload error, not a syntax one.
		{"array", `[]`, "invalid_payload"},
		{"string", `"hello"`, "invalid_payload"},
		{"number", `42`, "invalid_payload"},
		{"null", `null`, "invalid_payload"},
		{"title a number", `{"title": 5}`, "invalid_payload"},
		{"actions an object", `{"title": "x", "actions": {}}`, "invalid_payload"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := msgSub(env, t)
			before := msgCount(e, u.ID)
			wantError(t, e.request("POST", "/v1/send/"+token, tc.body, ""), 400, tc.code)
			if got := msgCount(e, u.ID); got != before {
				t.Fatalf("stored messages %d → %d, want nothing stored", before, got)
			}
		})
	}
}

func TestSendValidation(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	_, token := msgChannel(env, u, "x")
	hook := "callback_url"

	tests := []struct {
		name    string
		payload any
		mention string // the error message must contain this
	}{
		{"missing title", msgPayload("title", nil, "body", "b"), "title"},
		{"null title", msgPayload("title", json.RawMessage("null")), "title"},
		{"empty title", msgPayload("title", ""), "title"},
		{"blank title", msgPayload("title", " \t\n "), "title"},
		{"title 101 ASCII characters", msgPayload("title", strings.Repeat("a", 101)), "title"},
		{"title 101 two-byte characters", msgPayload("title", strings.Repeat("é", 101)), "title"},
		{"body 10,001 characters", msgPayload("body", strings.Repeat("b", 10001)), "body"},
		{"body 10,001 multi-byte characters", msgPayload("body", strings.Repeat("€", 10001)), "body"},
		{"priority urgent", msgPayload("priority", "urgent"), "priority"},
		{"priority in capitals", msgPayload("priority", "HIGH"), "priority"},
		{"6 actions", msgPayload("actions", msgButtons(6)), "5"},
		{"metadata", msgPayload("metadata", map[string]any{"k": "v"}), "metadata"},
		{"metadata null", msgPayload("metadata", json.RawMessage("null")), "metadata"},
		{"unknown field", msgPayload("colour", "red"), "colour"},
		{"unknown field in an action", msgPayload("actions", msgActions(map[string]any{"type": "button", "label": "L", "key": "k", "color": "red"})), "color"},
		{"action without type", msgPayload("actions", msgActions(map[string]any{"label": "L", "key": "k"})), "type"},
		{"action of unknown type", msgPayload("actions", msgActions(map[string]any{"type": "link", "label": "L", "key": "k"})), "type"},
		{"action without label", msgPayload("actions", msgActions(map[string]any{"type": "button", "key": "k"})), "label"},
		{"action with blank label", msgPayload("actions", msgActions(map[string]any{"type": "button", "key": "k", "label": "  "})), "label"},
		{"button without key", msgPayload("actions", msgActions(map[string]any{"type": "button", "label": "L"})), "key"},
		{"duplicate button keys", msgPayload("actions", msgActions(msgButton("ok"), msgButton("ok"))), `"ok"`},
		{"duplicate key across button and form", msgPayload(hook, msgHook, "actions", msgActions(msgButton("ok"), msgForm("ok", msgField("a", "text")))), `"ok"`},
		{"url action without value", msgPayload("actions", msgActions(map[string]any{"type": "url", "label": "Open"})), "value"},
		{"url action javascript:", msgPayload("actions", msgActions(msgURL("javascript:alert(1)"))), "value"},
		{"url action ftp:", msgPayload("actions", msgActions(msgURL("ftp://x"))), "value"},
		{"url action relative", msgPayload("actions", msgActions(msgURL("/relative"))), "value"},
		{"url action without host", msgPayload("actions", msgActions(msgURL("https://"))), "value"},
		{"form without callback_url", msgPayload("actions", msgActions(msgForm("f", msgField("a", "text")))), "callback_url"},
		{"form without fields", msgPayload(hook, msgHook, "actions", msgActions(msgForm("f"))), "field"},
		{"form with 11 fields", msgPayload(hook, msgHook, "actions", msgActions(msgForm("f", msgFields(11)...))), "10"},
		{"field of unknown type", msgPayload(hook, msgHook, "actions", msgActions(msgForm("f", msgField("a", "date")))), "type"},
		{"field without key", msgPayload(hook, msgHook, "actions", msgActions(msgForm("f", map[string]any{"label": "A", "type": "text"}))), "key"},
		{"select without options", msgPayload(hook, msgHook, "actions", msgActions(msgForm("f", msgField("a", "select")))), "option"},
		{"duplicate field keys", msgPayload(hook, msgHook, "actions", msgActions(msgForm("f", msgField("a", "text"), msgField("a", "number")))), `"a"`},
		{"callback_url without scheme", msgPayload(hook, "hooks.example.com/herald"), "callback_url"},
		{"callback_url relative", msgPayload(hook, "/herald"), "callback_url"},
		{"callback_url ftp", msgPayload(hook, "ftp://hooks.example.com/herald"), "callback_url"},
		{"callback_url without host", msgPayload(hook, "http:///herald"), "callback_url"},
		{"callback_url empty", msgPayload(hook, ""), "callback_url"},
		{"callback_url 2049 characters", msgPayload(hook, "https://example.com/"+strings.Repeat("a", 2049-20)), "callback_url"},
		{"style fancy", msgPayload("actions", msgActions(map[string]any{"type": "button", "label": "L", "key": "k", "style": "fancy"})), "style"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := msgSub(env, t)
			before := msgCount(e, u.ID)
			r := e.request("POST", "/v1/send/"+token, tc.payload, "")
			wantError(t, r, 400, "invalid_payload")
			if !strings.Contains(r.Str("message"), tc.mention) {
				t.Errorf("message %q does not mention %q", r.Str("message"), tc.mention)
			}
			if got := msgCount(e, u.ID); got != before {
				t.Fatalf("stored messages %d → %d, want nothing stored", before, got)
			}
		})
	}
}

// TestSendAccepted sends payloads at the limits and the shapes the
// callback_url rule allows: each is stored.
func TestSendAccepted(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	_, token := msgChannel(env, u, "x")
	hook := "callback_url"
	longHook := "https://example.com/" + strings.Repeat("a", 2048-20)

	tests := []struct {
		name    string
		payload map[string]any
		check   func(t *testing.T, m *store.Message)
	}{
		{"title 100 two-byte characters", msgPayload("title", strings.Repeat("é", 100)), func(t *testing.T, m *store.Message) {
			if m.Title != strings.Repeat("é", 100) {
				t.Errorf("title = %q", m.Title)
			}
		}},
		{"body 10,000 characters", msgPayload("body", strings.Repeat("b", 10000)), func(t *testing.T, m *store.Message) {
			if m.Body != strings.Repeat("b", 10000) {
				t.Errorf("body of %d characters stored as %d", 10000, len(m.Body))
			}
		}},
		{"body 10,000 three-byte characters", msgPayload("body", strings.Repeat("€", 10000)), nil},
		{"priority low", msgPayload("priority", "low"), func(t *testing.T, m *store.Message) {
			if m.Priority != "low" {
				t.Errorf("priority = %q, want low", m.Priority)
			}
		}},
		{"priority normal", msgPayload("priority", "normal"), nil},
		{"5 actions", msgPayload("actions", msgButtons(5)), func(t *testing.T, m *store.Message) {
			var as []any
			if err := json.Unmarshal(m.Actions, &as); err != nil || len(as) != 5 {
				t.Errorf("stored actions = %s, want 5", m.Actions)
			}
		}},
		{"buttons without callback_url (polling)", msgPayload("actions", msgActions(msgButton("yes"), msgButton("no"))), func(t *testing.T, m *store.Message) {
			if m.CallbackURL != nil {
				t.Errorf("callback_url = %q, want none", *m.CallbackURL)
			}
		}},
		{"url action without callback_url", msgPayload("actions", msgActions(msgURL("http://example.com/x?y=1"))), nil},
		{"form with callback_url", msgPayload(hook, msgHook, "actions", msgActions(msgForm("f", msgField("a", "text")))), func(t *testing.T, m *store.Message) {
			msgSameJSON(t, "stored actions", m.Actions, `[{"type": "form", "label": "Fill f", "key": "f",
				"fields": [{"key": "a", "label": "Field a", "type": "text", "required": false}]}]`)
		}},
		{"form with 10 fields", msgPayload(hook, msgHook, "actions", msgActions(msgForm("f", msgFields(10)...))), nil},
		{"form with every field type", msgPayload(hook, msgHook, "actions", msgActions(msgForm("f",
			msgField("t", "text"), msgField("ta", "textarea"), msgField("n", "number"), msgField("c", "checkbox"),
			map[string]any{"key": "s", "label": "S", "type": "select", "options": []string{"a", "b"}, "required": true, "placeholder": "pick"},
		))), nil},
		{"callback_url 2048 characters", msgPayload(hook, longHook), func(t *testing.T, m *store.Message) {
			if m.CallbackURL == nil || *m.CallbackURL != longHook {
				t.Errorf("callback_url not stored whole")
			}
		}},
		{"callback_url http", msgPayload(hook, "http://10.0.0.5:8080/hook"), nil},
		{"callback_url null", msgPayload(hook, json.RawMessage("null")), func(t *testing.T, m *store.Message) {
			if m.CallbackURL != nil {
				t.Errorf("callback_url = %q, want none", *m.CallbackURL)
			}
		}},
		{"styles", msgPayload("actions", msgActions(
			map[string]any{"type": "button", "label": "A", "key": "a", "style": "primary"},
			map[string]any{"type": "button", "label": "B", "key": "b", "style": "destructive"},
			map[string]any{"type": "button", "label": "C", "key": "c", "style": "default"},
		)), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := msgSub(env, t)
			before := msgCount(e, u.ID)
			id := msgSend(e, token, tc.payload)
			if got := msgCount(e, u.ID); got != before+1 {
				t.Fatalf("stored messages %d → %d, want one more", before, got)
			}
			m := msgStored(e, id)
			if tc.check != nil {
				tc.check(t, m)
			}
		})
	}
}

func TestSendMutedChannel(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	chID, token := msgChannel(env, u, "x")
	path := "/v1/channels/" + chID
	key := env.apiKey(u) // outlives the session across the clock jumps below

	until := env.clock.Now().Add(time.Hour)
	env.do(200, "PATCH", path, map[string]any{"muted_until": until.Format(time.RFC3339Nano)}, key)
	r := env.do(200, "POST", "/v1/send/"+token, msgPayload(), "")
	if v, ok := r.Body["muted"].(bool); !ok || !v {
		t.Fatalf("send to a muted channel: %s, want muted: true", r.Raw)
	}
	if m := msgStored(env, r.Str("id")); !m.Muted {
		t.Fatalf("stored message of a muted channel has muted false")
	}

	// The mute ends by the server's clock.
	env.clock.Advance(time.Hour + time.Second)
	r = env.do(200, "POST", "/v1/send/"+token, msgPayload(), "")
	if v, ok := r.Body["muted"].(bool); !ok || v {
		t.Fatalf("send after muted_until passed: %s, want muted: false", r.Raw)
	}
	if m := msgStored(env, r.Str("id")); m.Muted {
		t.Fatalf("stored message after the mute ended has muted true")
	}

	// A muted_until in the past mutes nothing.
	env.do(200, "PATCH", path, map[string]any{"muted_until": env.clock.Now().Add(-time.Minute).Format(time.RFC3339)}, key)
	r = env.do(200, "POST", "/v1/send/"+token, msgPayload(), "")
	if v, ok := r.Body["muted"].(bool); !ok || v {
		t.Fatalf("send with muted_until in the past: %s, want muted: false", r.Raw)
	}
	if got := msgCount(env, u.ID); got != 3 {
		t.Fatalf("stored messages = %d, want 3 (muted messages are stored too)", got)
	}
}

func TestSendBodyOver1MiB(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	_, token := msgChannel(env, u, "x")

	big := `{"title": "t", "body": "` + strings.Repeat("a", 1<<20) + `"}`
	r := env.request("POST", "/v1/send/"+token, big, "")
	wantError(t, r, 413, "payload_too_large")
	if got := msgCount(env, u.ID); got != 0 {
		t.Fatalf("stored messages = %d, want 0", got)
	}
	// The server is still fine afterwards.
	msgSend(env, token, msgPayload())
}

// msgWantLimitHeaders checks the X-RateLimit headers of a rate-limited answer.
func msgWantLimitHeaders(t *testing.T, r response, limit, remaining int) {
	t.Helper()
	if got := r.Header.Get("X-RateLimit-Limit"); got != strconv.Itoa(limit) {
		t.Errorf("X-RateLimit-Limit = %q, want %d", got, limit)
	}
	if got := r.Header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(remaining) {
		t.Errorf("X-RateLimit-Remaining = %q, want %d", got, remaining)
	}
	if _, err := strconv.ParseInt(r.Header.Get("X-RateLimit-Reset"), 10, 64); err != nil {
		t.Errorf("X-RateLimit-Reset = %q, want Unix seconds", r.Header.Get("X-RateLimit-Reset"))
	}
}

// msgWantRateLimited checks a 429 and its Retry-After.
func msgWantRateLimited(t *testing.T, r response, limit int) {
	t.Helper()
	wantError(t, r, 429, "rate_limited")
	msgWantLimitHeaders(t, r, limit, 0)
	ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || ra < 1 || ra > 60 {
		t.Errorf("Retry-After = %q, want 1-60 seconds", r.Header.Get("Retry-After"))
	}
}

func msgFreeSend5(cfg *config.Config) {
	cfg.Plans.Free.SendPerMinute = 5
	cfg.Plans.Pro.SendPerMinute = 200
}

func TestSendRateLimit(t *testing.T) {
	env := newTestEnv(t, msgFreeSend5)
	u := env.newUser("ann@example.com")
	_, token := msgChannel(env, u, "one")
	_, token2 := msgChannel(env, u, "two")

	for i := 0; i < 5; i++ {
		r := env.do(200, "POST", "/v1/send/"+token, msgPayload(), "")
		msgWantLimitHeaders(t, r, 5, 4-i)
	}
	r := env.request("POST", "/v1/send/"+token, msgPayload(), "")
	msgWantRateLimited(t, r, 5)
	if got := msgCount(env, u.ID); got != 5 {
		t.Fatalf("stored messages = %d, want 5 (a 429 stores nothing)", got)
	}

	// Each channel has its own bucket.
	r = env.do(200, "POST", "/v1/send/"+token2, msgPayload(), "")
	msgWantLimitHeaders(t, r, 5, 4)

	// Half a minute refills half the bucket, not all of it.
	env.clock.Advance(30 * time.Second)
	for i := 0; i < 2; i++ {
		env.do(200, "POST", "/v1/send/"+token, msgPayload(), "")
	}
	msgWantRateLimited(t, env.request("POST", "/v1/send/"+token, msgPayload(), ""), 5)

	// A minute later the bucket is full again.
	env.clock.Advance(time.Minute)
	for i := 0; i < 5; i++ {
		r := env.do(200, "POST", "/v1/send/"+token, msgPayload(), "")
		msgWantLimitHeaders(t, r, 5, 4-i)
	}
	msgWantRateLimited(t, env.request("POST", "/v1/send/"+token, msgPayload(), ""), 5)
}

func TestSendRateLimitFollowsPlan(t *testing.T) {
	env := newTestEnv(t, msgFreeSend5)
	u := env.newUser("ann@example.com")
	_, token := msgChannel(env, u, "one")

	for i := 0; i < 5; i++ {
		env.do(200, "POST", "/v1/send/"+token, msgPayload(), "")
	}
	msgWantRateLimited(t, env.request("POST", "/v1/send/"+token, msgPayload(), ""), 5)

	// An upgrade lifts the limit on the very next request, without a
	// restart and without waiting for the bucket to refill.
	if err := env.st.SetUserPlan(context.Background(), u.ID, "pro"); err != nil {
		t.Fatal(err)
	}
	r := env.do(200, "POST", "/v1/send/"+token, msgPayload(), "")
	if got := r.Header.Get("X-RateLimit-Limit"); got != "200" {
		t.Fatalf("X-RateLimit-Limit after upgrade = %q, want 200", got)
	}
	for i := 0; i < 20; i++ {
		env.do(200, "POST", "/v1/send/"+token, msgPayload(), "")
	}

	// A downgrade applies at once too: what was used this minute counts
	// against the free limit.
	if err := env.st.SetUserPlan(context.Background(), u.ID, "free"); err != nil {
		t.Fatal(err)
	}
	msgWantRateLimited(t, env.request("POST", "/v1/send/"+token, msgPayload(), ""), 5)
	env.clock.Advance(time.Minute)
	msgWantLimitHeaders(t, env.do(200, "POST", "/v1/send/"+token, msgPayload(), ""), 5, 4)
}

// TestSendRefusesCallbackHostsNeverCalled: a callback_url whose host is an
// address the delivery policy refuses (loopback, unless allowed; the
// unspecified addresses always; private ones under block_private; the
// operator's list), or localhost while loopback is refused, is a 400 at
// send time that names callback_url and the setting, and stores nothing:
// it would only be retried until it failed. Names that resolve later are
// accepted and checked when dialled.
func TestSendRefusesCallbackHostsNeverCalled(t *testing.T) {
	strict := newTestEnv(t, func(c *config.Config) {
		c.Delivery.AllowLoopback, c.Delivery.BlockPrivate = false, true
		c.Delivery.BlockedNetworks = []string{"203.0.113.0/24"}
	})
	u := strict.newUser("cb-host@example.com")
	_, token := msgChannel(strict, u, "x")
	button := []map[string]any{{"type": "button", "key": "ok", "label": "OK"}}
	for _, c := range []struct{ url, want string }{
		{"http://127.0.0.1:8081/hook", "callback_url is refused: 127.0.0.1 is a loopback address; set delivery.allow_loopback = true to allow callbacks to this host"},
		{"http://localhost/hook", "callback_url is refused: localhost is a loopback address; set delivery.allow_loopback = true to allow callbacks to this host"},
		{"https://[::1]:9000/", "callback_url is refused: ::1 is a loopback address; set delivery.allow_loopback = true to allow callbacks to this host"},
		{"http://0.0.0.0/hook", "callback_url is refused: 0.0.0.0 is unspecified, link-local or a cloud metadata service, which callbacks never reach"},
		{"http://169.254.169.254/latest", "callback_url is refused: 169.254.169.254 is unspecified, link-local or a cloud metadata service, which callbacks never reach"},
		{"http://192.168.1.10/hook", "callback_url is refused: 192.168.1.10 is in a private network, which delivery.block_private = true refuses to callbacks"},
		{"http://203.0.113.5/hook", "callback_url is refused: 203.0.113.5 is in delivery.blocked_networks, which callbacks may not reach"},
	} {
		r := strict.request("POST", "/v1/send/"+token, map[string]any{"title": "Deploy?", "callback_url": c.url, "actions": button}, "")
		wantError(t, r, 400, "invalid_payload")
		if got := r.Str("message"); got != c.want {
			t.Errorf("%s: %q\n  want %q", c.url, got, c.want)
		}
	}
	if n := msgCount(strict, u.ID); n != 0 {
		t.Fatalf("%d messages stored, want none", n)
	}
	// A name is dialled later, and checked then.
	msgSend(strict, token, map[string]any{"title": "Deploy?", "callback_url": "https://hooks.example.com/x", "actions": button})

	// allow_loopback lets loopback through (the unspecified addresses never).
	open := newTestEnv(t, func(c *config.Config) { c.Delivery.AllowLoopback = true })
	v := open.newUser("cb-open@example.com")
	_, token = msgChannel(open, v, "x")
	for _, url := range []string{"http://127.0.0.1:8081/hook", "http://localhost/hook", "http://[::1]/"} {
		msgSend(open, token, map[string]any{"title": "Deploy?", "callback_url": url, "actions": button})
	}
	wantError(t, open.request("POST", "/v1/send/"+token, map[string]any{"title": "x", "callback_url": "http://0.0.0.0/"}, ""), 400, "invalid_payload")
}

// TestSendFormNeedsCallbackSaysWhy: the rule stays (a form needs a
// callback_url, polling or not), and its refusal says why and what to do.
func TestSendFormNeedsCallbackSaysWhy(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("form-why@example.com")
	_, token := msgChannel(env, u, "x")
	r := env.request("POST", "/v1/send/"+token, msgPayload("actions", msgActions(msgButton("ok"), map[string]any{
		"type": "form", "key": "f", "label": "F", "fields": []any{msgField("why", "text")}})), "")
	wantError(t, r, 400, "invalid_payload")
	msg := r.Str("message")
	for _, want := range []string{"actions[1]: a form action requires callback_url, even if you poll",
		"signed POST, retried until it arrives", "only once", "polling.response_ttl", "Add a callback_url", "buttons alone need none"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if n := msgCount(env, u.ID); n != 0 {
		t.Errorf("%d messages stored, want none", n)
	}
}
