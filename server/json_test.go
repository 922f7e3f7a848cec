package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestSendNotJSONSaysWhatToSend: a body that is not JSON (curl -d "Backup
// done", a form, nothing at all, JSON with a slip) is refused with
// invalid_json and a message that says what to send instead, in words a
// person reads, never the decoder's own; nothing is stored.
func TestSendNotJSONSaysWhatToSend(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("plain@example.com")
	_, token := msgChannel(env, u, "x")
	form := []string{"Content-Type", "application/x-www-form-urlencoded"}
	for _, tc := range []struct {
		name, body string
		headers    []string
		want       []string // all in the message
	}{
		{"plain text (curl -d)", "Backup done", form,
			[]string{`the request body must be a JSON object such as {"title":"Backup done"}`, "got plain text",
				"to send plain text as the message, as ntfy does, POST it to " + env.srv.URL + "/" + token}},
		{"form data", "title=Backup+done&priority=high", form,
			[]string{`such as {"title":"Backup done"}`, "got form data (key=value pairs)"}},
		{"empty", "", nil, []string{"the request body is empty", `such as {"title":"Backup done"}`}},
		{"markup", "<p>Backup done</p>", nil, []string{"got markup"}},
		{"a slip in the JSON", "{\"title\": \"x\",\n \"body\": \"y\",}", nil,
			[]string{"not valid JSON", `unexpected "}" at line 2, column 14`, `such as {"title":"Backup done"}`}},
		{"single quotes", `{'title': 'x'}`, nil, []string{`unexpected "'title': 'x'" at line 1, column 2`, "double quotes"}},
		{"cut short", `{"title": "x"`, nil, []string{"ends before its value does"}},
		{"two objects", `{"title": "x"} {"title": "y"}`, nil, []string{"more after its JSON value"}},
		{"a Title header", "details", []string{"Title", "Backup done"},
			[]string{"got plain text", "a Title header is not read: put the title in the JSON body, or publish ntfy-style to " +
				env.srv.URL + "/" + token}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := msgSub(env, t)
			before := msgCount(e, u.ID)
			r := e.request("POST", "/v1/send/"+token, tc.body, "", tc.headers...)
			wantError(t, r, 400, "invalid_json")
			msg := r.Str("message")
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			for _, jargon := range []string{"invalid character", "looking for beginning", "json:", "EOF"} {
				if strings.Contains(msg, jargon) {
					t.Errorf("message %q speaks the decoder's %q", msg, jargon)
				}
			}
			if got := msgCount(e, u.ID); got != before {
				t.Errorf("stored messages %d → %d, want nothing stored", before, got)
			}
		})
	}

	// A Title header beside valid JSON without a title says the same.
	r := env.request("POST", "/v1/send/"+token, `{"body":"x"}`, "", "Title", "Backup done")
	wantError(t, r, 400, "invalid_payload")
	if msg := r.Str("message"); !strings.Contains(msg, "title is required") || !strings.Contains(msg, "Title header is not read") {
		t.Errorf("message %q", msg)
	}
}

// TestOtherEndpointsNotJSON: every JSON endpoint shares the messages,
// without the send's example.
func TestOtherEndpointsNotJSON(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("other@example.com")
	r := env.request("POST", "/v1/channels", "name=Backups", u.Token)
	wantError(t, r, 400, "invalid_json")
	if got, want := r.Str("message"), "the request body must be a JSON object; got form data (key=value pairs)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	r = env.request("POST", "/v1/auth/local", `{"email": "a@example.com" "password": "x"}`, "")
	wantError(t, r, 400, "invalid_json")
	if got := r.Str("message"); !strings.Contains(got, `unexpected "\"password\": " at line 1, column 27`) {
		t.Errorf("message %q", got)
	}
	if n := len(env.do(200, "GET", "/v1/channels", nil, u.Token).Body["channels"].([]any)); n != 0 {
		t.Errorf("%d channels after refused requests, want 0", n)
	}
}

// TestBodyOverLimitIs413: a body over 1 MiB is 413 payload_too_large on
// every endpoint that takes one, whether its length is declared or it
// comes in chunks, and changes nothing.
func TestBodyOverLimitIs413(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("big@example.com")
	admin := env.newUser("admin@example.com")
	if err := env.st.SetUserAdmin(t.Context(), admin.ID, true); err != nil {
		t.Fatal(err)
	}
	chID, token := msgChannel(env, u, "x")
	msgID := msgSend(env, token, map[string]any{"title": "Deploy?",
		"actions": []map[string]string{{"type": "button", "key": "ok", "label": "OK"}}})
	big := `{"title":"` + strings.Repeat("a", maxBody) + `"}`
	for _, ep := range []struct{ method, path, token string }{
		{"POST", "/v1/send/" + token, ""},
		{"POST", "/v1/webhook/github/" + token, ""},
		{"POST", "/v1/webhook/template/" + token, ""},
		{"POST", "/v1/auth/local", ""},
		{"POST", "/auth/local", ""},
		{"POST", "/v1/auth/refresh", ""},
		{"POST", "/v1/channels", u.Token},
		{"PATCH", "/v1/channels/" + chID, u.Token},
		{"POST", "/v1/messages/" + msgID + "/respond", u.Token},
		{"POST", "/v1/keys", u.Token},
		{"POST", "/v1/account/password", u.Token},
		{"POST", "/v1/folders", u.Token},
		{"POST", "/v1/pins", u.Token},
		{"POST", "/v1/devices", u.Token},
		{"POST", "/v1/admin/users", admin.Token},
		{"POST", "/v1/verify/signature", ""},
	} {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s %s chunked=%v", ep.method, redactPath(ep.path), chunked), func(t *testing.T) {
				var body io.Reader = strings.NewReader(big)
				if chunked {
					body = io.MultiReader(body) // no length: sent in chunks
				}
				req, err := http.NewRequest(ep.method, env.srv.URL+ep.path, body)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				if ep.token != "" {
					req.Header.Set("Authorization", "Bearer "+ep.token)
				}
				res, err := env.srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusRequestEntityTooLarge || !bytes.Contains(raw, []byte(`"error":"payload_too_large"`)) ||
					!bytes.Contains(raw, []byte("larger than 1048576 bytes")) {
					t.Errorf("%d %s, want 413 payload_too_large", res.StatusCode, raw)
				}
			})
		}
	}
	if n := msgCount(env, u.ID); n != 1 {
		t.Errorf("%d messages after the refused requests, want 1", n)
	}
	if n := len(env.do(200, "GET", "/v1/channels", nil, u.Token).Body["channels"].([]any)); n != 1 {
		t.Errorf("%d channels after the refused requests, want 1", n)
	}
	if r := env.do(200, "GET", "/v1/messages/"+msgID, nil, u.Token); r.Body["response"] != nil {
		t.Errorf("the refused respond answered the message: %s", r.Raw)
	}
}

// TestRouteErrorsRedactTokens: a 404 or 405 that names the path hides a
// webhook token in it, as the access log does.
func TestRouteErrorsRedactTokens(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("redact@example.com")
	_, token := msgChannel(env, u, "x")
	for _, c := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/v1/send/" + token, 405, "method_not_allowed"},
		{"DELETE", "/v1/callback/" + token + "/msg_x", 405, "method_not_allowed"},
		{"POST", "/v1//send/" + token, 404, "not_found"},
		{"POST", "/v1/send/" + token + "/extra", 404, "not_found"},
	} {
		r := env.request(c.method, c.path, nil, "")
		wantError(t, r, c.status, c.code)
		if strings.Contains(string(r.Raw), token) || !strings.Contains(r.Str("message"), "REDACTED") {
			t.Errorf("%s %s: %s, want the token redacted", c.method, redactPath(c.path), r.Raw)
		}
	}
}
