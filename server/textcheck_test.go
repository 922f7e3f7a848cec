package server

import (
	"context"
	"net/url"
	"strings"
	"testing"
)

// TestControlCharactersRefused: a NUL, another control character or
// invalid UTF-8 in a search, a filter, a path id or a JSON string is the
// client's mistake on both backends: 400 invalid_payload naming where, and
// nothing stored. (SQLite's full-text search and PostgreSQL's text columns
// refuse them, which was a 500.) Clean text still works.
func TestControlCharactersRefused(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	u := e.newUser("nul@example.com")
	ch := e.newChannel(u, "nul")
	token := ch["webhook_token"].(string)
	e.do(200, "POST", "/v1/send/"+token, map[string]any{"title": "Héllo world"}, "")
	if _, err := e.st.IndexForSearch(context.Background(), 100); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		method, path string
		body         any
		names        string
	}{
		{"GET", "/v1/messages?q=" + url.QueryEscape("hello\x00"), nil, "q "},
		{"GET", "/v1/messages?q=%00", nil, "q "},
		{"GET", "/v1/messages?q=" + url.QueryEscape("hel\x01lo"), nil, "q "},
		{"GET", "/v1/messages?q=" + url.QueryEscape("hello\u0085"), nil, "q "},
		{"GET", "/v1/messages?q=%ff%fe", nil, "q "},
		{"GET", "/v1/messages?channel_id=" + url.QueryEscape(ch["id"].(string)+"\x00"), nil, "channel_id "},
		{"GET", "/v1/messages?channel_id=%ff", nil, "channel_id "},
		{"GET", "/v1/messages?state=pending&q=a%00", nil, "q "},
		{"DELETE", "/v1/pins?channel_id=%00", nil, "channel_id "},
		{"GET", "/v1/messages/msg_%00", nil, "id in the path"},
		{"DELETE", "/v1/messages/msg_%ff", nil, "id in the path"},
		{"GET", "/v1/channels/%00", nil, "id in the path"},
		{"POST", "/v1/send/%00", map[string]any{"title": "x"}, "token in the path"},
		{"GET", "/v1/callback/" + token + "/msg_%00", nil, "message_id in the path"},
		{"POST", "/v1/send/" + token, map[string]any{"title": "a\x00b"}, "title must not contain a NUL"},
		{"POST", "/v1/send/" + token, map[string]any{"title": "ok", "actions": []map[string]any{
			{"type": "button", "label": "Go\x00", "key": "go"}}}, "actions[0].label must not contain a NUL"},
		{"POST", "/v1/channels", map[string]any{"name": "a\x00"}, "name must not contain a NUL"},
		{"POST", "/v1/pins", map[string]any{"channel_id": "\x00"}, "channel_id must not contain a NUL"},
	} {
		r := e.request(tc.method, tc.path, tc.body, u.Token)
		wantError(t, r, 400, "invalid_payload")
		if msg := r.Str("message"); !strings.Contains(msg, tc.names) {
			t.Errorf("%s %s: message %q, want it to name %q", tc.method, tc.path, msg, tc.names)
		}
	}

	// Nothing was stored: still the one channel and its one message.
	if n := len(e.do(200, "GET", "/v1/channels", nil, u.Token).Body["channels"].([]any)); n != 1 {
		t.Errorf("%d channels after the refusals, want 1", n)
	}
	r := e.do(200, "GET", "/v1/messages", nil, u.Token)
	if got := r.Body["messages"].([]any); len(got) != 1 || got[0].(map[string]any)["title"] != "Héllo world" {
		t.Errorf("messages after the refusals: %s", r.Raw)
	}
	// Clean text, non-ASCII included, still searches.
	r = e.do(200, "GET", "/v1/messages?q="+url.QueryEscape("héllo"), nil, u.Token)
	if got := r.Body["messages"].([]any); len(got) != 1 {
		t.Errorf("search for héllo: %s", r.Raw)
	}
	// A NUL that reaches no database still signs: the test-signature helper
	// takes any payload.
	e.do(200, "POST", "/v1/verify/generate", map[string]any{"payload": "a\x00b", "secret": "whsec_x"}, "")
}
