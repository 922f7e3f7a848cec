package server

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/heraldhq/herald/store"
)

// msgRespond posts a response to message id as token's user.
func msgRespond(e *testEnv, id, token string, body any) response {
	e.t.Helper()
	return e.request("POST", "/v1/messages/"+id+"/respond", body, token)
}

// msgStoredResult decodes the callback result stored with message id.
func msgStoredResult(e *testEnv, id string) map[string]any {
	e.t.Helper()
	m := msgStored(e, id)
	if m.Response == nil {
		e.t.Fatalf("message %s (state %q) has no stored response", id, m.State)
	}
	var out map[string]any
	if err := json.Unmarshal(m.Response, &out); err != nil {
		e.t.Fatalf("stored response %s: %v", m.Response, err)
	}
	return out
}

// msgFormMessage sends a message with a button, a link and a form with one
// field of each type, and returns its id.
func msgFormMessage(e *testEnv, token string) string {
	e.t.Helper()
	return msgSend(e, token, msgPayload("callback_url", msgHook, "actions", msgActions(
		msgButton("ack"),
		map[string]any{"type": "url", "label": "Docs", "value": "https://docs.example.com"},
		msgForm("details",
			map[string]any{"key": "reason", "label": "Reason", "type": "text", "required": true},
			map[string]any{"key": "notes", "label": "Notes", "type": "textarea"},
			map[string]any{"key": "count", "label": "Count", "type": "number"},
			map[string]any{"key": "agree", "label": "Agree", "type": "checkbox"},
			map[string]any{"key": "color", "label": "Colour", "type": "select", "options": []string{"red", "green"}},
		),
	)))
}

func TestRespondButton(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	chID, token := msgChannel(env, u, "x")
	id := msgSend(env, token, msgPayload("actions", msgActions(msgButton("approve"), msgButton("reject"))))

	r := env.do(200, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "approve"}, u.Token)
	msgSameJSON(t, "respond answer", r.Raw, `{"ok": true, "status": "submitted"}`)

	m := msgStored(env, id)
	now := env.clock.Now()
	if m.State != store.StateSubmitted || m.SubmittedAt == nil || !m.SubmittedAt.Equal(now) {
		t.Fatalf("stored state/submitted_at = %q/%v, want submitted/%v", m.State, m.SubmittedAt, now)
	}
	msgSameJSON(t, "stored response", m.Response, `{"message_id": "`+id+`", "channel_id": "`+chID+
		`", "timestamp": "`+ts(now)+`", "triggered_by": "approve", "responses": {}}`)

	// A second response is refused and the first one stands.
	wantError(t, msgRespond(env, id, u.Token, map[string]any{"action": "reject"}), 409, "already_responded")
	wantError(t, msgRespond(env, id, u.Token, map[string]any{"action": "approve"}), 409, "already_responded")
	if got := msgStoredResult(env, id)["triggered_by"]; got != "approve" {
		t.Fatalf("triggered_by after a second response = %v, want approve", got)
	}
	if m := msgStored(env, id); m.State != store.StateSubmitted {
		t.Fatalf("state after a second response = %q, want submitted", m.State)
	}

	// An API key responds like a session.
	id2 := msgSend(env, token, msgPayload("actions", msgActions(msgButton("approve"))))
	env.do(200, "POST", "/v1/messages/"+id2+"/respond", map[string]any{"action": "approve", "responses": nil}, env.apiKey(u))
	if got := msgStoredResult(env, id2)["triggered_by"]; got != "approve" {
		t.Fatalf("triggered_by = %v, want approve", got)
	}
}

func TestRespondValidation(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	_, token := msgChannel(env, u, "x")
	id := msgFormMessage(env, token)
	bare := msgSend(env, token, msgPayload())

	valid := map[string]any{"reason": "because"}
	with := func(kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range valid {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(out, kv[i].(string))
			} else {
				out[kv[i].(string)] = kv[i+1]
			}
		}
		return out
	}
	tests := []struct {
		name string
		msg  string
		body any
		code string
	}{
		{"missing action", id, map[string]any{"responses": valid}, "invalid_payload"},
		{"empty action", id, map[string]any{"action": ""}, "invalid_payload"},
		{"unknown action key", id, map[string]any{"action": "nope"}, "invalid_payload"},
		{"url action by label", id, map[string]any{"action": "Docs"}, "invalid_payload"},
		{"url action by value", id, map[string]any{"action": "https://docs.example.com"}, "invalid_payload"},
		{"message without actions", bare, map[string]any{"action": "ack"}, "invalid_payload"},
		{"button with responses", id, map[string]any{"action": "ack", "responses": map[string]any{"reason": "x"}}, "invalid_payload"},
		{"form without responses", id, map[string]any{"action": "details"}, "invalid_payload"},
		{"missing required field", id, map[string]any{"action": "details", "responses": with("reason", nil, "notes", "n")}, "invalid_payload"},
		{"required field null", id, map[string]any{"action": "details", "responses": with("reason", json.RawMessage("null"))}, "invalid_payload"},
		{"required field blank", id, map[string]any{"action": "details", "responses": with("reason", "   ")}, "invalid_payload"},
		{"number given a string", id, map[string]any{"action": "details", "responses": with("count", "12")}, "invalid_payload"},
		{"number given a boolean", id, map[string]any{"action": "details", "responses": with("count", true)}, "invalid_payload"},
		{"checkbox given yes", id, map[string]any{"action": "details", "responses": with("agree", "yes")}, "invalid_payload"},
		{"checkbox given 1", id, map[string]any{"action": "details", "responses": with("agree", 1)}, "invalid_payload"},
		{"text given a number", id, map[string]any{"action": "details", "responses": with("reason", 5)}, "invalid_payload"},
		{"textarea given an object", id, map[string]any{"action": "details", "responses": with("notes", map[string]any{})}, "invalid_payload"},
		{"select value not an option", id, map[string]any{"action": "details", "responses": with("color", "blue")}, "invalid_payload"},
		{"select value in other case", id, map[string]any{"action": "details", "responses": with("color", "Red")}, "invalid_payload"},
		{"unknown response key", id, map[string]any{"action": "details", "responses": with("extra", "x")}, "invalid_payload"},
		{"unknown request field", id, map[string]any{"action": "ack", "metadata": nil}, "invalid_payload"},
		{"responses not an object", id, map[string]any{"action": "details", "responses": []string{"x"}}, "invalid_payload"},
		{"invalid JSON", id, `{"action": `, "invalid_json"},
		{"not JSON", id, `action=ack`, "invalid_json"},
		{"empty body", id, ``, "invalid_json"},
	}
	// What an error says: the request's own field names, never a Go
	// type's; and never the whole of a large value sent back.
	if r := msgRespond(env, id, u.Token, map[string]any{"action": []string{"ack"}}); r.Str("message") != `field "action" must be of type string` {
		t.Errorf("action given a list: %s", r.Raw)
	}
	if r := msgRespond(env, id, u.Token, map[string]any{"action": strings.Repeat("x", 500_000)}); r.Status != 400 || len(r.Raw) > 3000 {
		t.Errorf("a 500,000-byte action: %d, %d bytes of answer", r.Status, len(r.Raw))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := msgSub(env, t)
			wantError(t, msgRespond(e, tc.msg, u.Token, tc.body), 400, tc.code)
			if m := msgStored(e, tc.msg); m.State != store.StatePending || m.Response != nil {
				t.Fatalf("after a refused response: state %q response %s, want pending and none", m.State, m.Response)
			}
		})
	}
}

func TestRespondForm(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	_, token := msgChannel(env, u, "x")

	t.Run("every field", func(t *testing.T) {
		e := msgSub(env, t)
		id := msgFormMessage(e, token)
		sent := `{"reason": "disk full", "notes": "line 1\nline 2 ✓", "count": 3.5, "agree": true, "color": "green"}`
		r := e.do(200, "POST", "/v1/messages/"+id+"/respond",
			map[string]any{"action": "details", "responses": json.RawMessage(sent)}, u.Token)
		msgSameJSON(t, "respond answer", r.Raw, `{"ok": true, "status": "submitted"}`)
		res := msgStoredResult(e, id)
		if res["triggered_by"] != "details" {
			t.Errorf("triggered_by = %v, want details", res["triggered_by"])
		}
		msgSameJSON(t, "stored responses", mustJSON(t, res["responses"]), sent)
	})
	t.Run("only the required field", func(t *testing.T) {
		e := msgSub(env, t)
		id := msgFormMessage(e, token)
		e.do(200, "POST", "/v1/messages/"+id+"/respond",
			map[string]any{"action": "details", "responses": map[string]any{"reason": "x"}}, u.Token)
		msgSameJSON(t, "stored responses", mustJSON(t, msgStoredResult(e, id)["responses"]), `{"reason": "x"}`)
	})
	t.Run("unchecked optional checkbox", func(t *testing.T) {
		e := msgSub(env, t)
		id := msgFormMessage(e, token)
		e.do(200, "POST", "/v1/messages/"+id+"/respond",
			map[string]any{"action": "details", "responses": map[string]any{"reason": "x", "agree": false, "count": -2}}, u.Token)
		msgSameJSON(t, "stored responses", mustJSON(t, msgStoredResult(e, id)["responses"]), `{"reason": "x", "agree": false, "count": -2}`)
	})
	t.Run("the button of a form message", func(t *testing.T) {
		e := msgSub(env, t)
		id := msgFormMessage(e, token)
		e.do(200, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "ack", "responses": map[string]any{}}, u.Token)
		res := msgStoredResult(e, id)
		if res["triggered_by"] != "ack" {
			t.Errorf("triggered_by = %v, want ack", res["triggered_by"])
		}
		// The form cannot be submitted after the button was tapped.
		r := msgRespond(e, id, u.Token, map[string]any{"action": "details", "responses": map[string]any{"reason": "x"}})
		wantError(t, r, 409, "already_responded")
		if got := msgStoredResult(e, id)["triggered_by"]; got != "ack" {
			t.Fatalf("triggered_by = %v after a refused form, want ack", got)
		}
	})
}

func TestRespondAccess(t *testing.T) {
	env := newTestEnv(t)
	ann := env.newUser("ann@example.com")
	bob := env.newUser("bob@example.com")
	_, token := msgChannel(env, ann, "x")
	id := msgSend(env, token, msgPayload("actions", msgActions(msgButton("ok"))))

	// Bob cannot tell Ann's message from a missing one.
	wantError(t, msgRespond(env, id, bob.Token, map[string]any{"action": "ok"}), 404, "not_found")
	wantError(t, msgRespond(env, id, env.apiKey(bob), map[string]any{"action": "ok"}), 404, "not_found")
	wantError(t, msgRespond(env, "msg_doesnotexist00000000", ann.Token, map[string]any{"action": "ok"}), 404, "not_found")
	wantError(t, msgRespond(env, id, "", map[string]any{"action": "ok"}), 401, "invalid_token")
	wantError(t, msgRespond(env, id, "not-a-token", map[string]any{"action": "ok"}), 401, "invalid_token")
	if m := msgStored(env, id); m.State != store.StatePending {
		t.Fatalf("state = %q after refused responses, want pending", m.State)
	}
	env.do(200, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "ok"}, ann.Token)
}

func TestRespondConcurrent(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	_, token := msgChannel(env, u, "x")
	id := msgSend(env, token, msgPayload("actions", msgActions(msgButton("a"), msgButton("b"))))

	const n = 20
	type result struct {
		status int
		body   map[string]any
		err    error
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			key := []string{"a", "b"}[i%2]
			st, body, err := msgRaw(env, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": key}, u.Token)
			results[i] = result{st, body, err}
		}(i)
	}
	close(start)
	wg.Wait()

	ok, conflict, winner := 0, 0, ""
	for i, r := range results {
		switch {
		case r.err != nil:
			t.Fatalf("request %d: %v", i, r.err)
		case r.status == 200:
			ok++
			winner = []string{"a", "b"}[i%2]
		case r.status == 409 && r.body["error"] == "already_responded":
			conflict++
		default:
			t.Fatalf("request %d: %d %v", i, r.status, r.body)
		}
	}
	if ok != 1 || conflict != n-1 {
		t.Fatalf("%d × 200 and %d × 409, want 1 and %d", ok, conflict, n-1)
	}
	if got := msgStoredResult(env, id)["triggered_by"]; got != winner {
		t.Fatalf("stored triggered_by = %v, want the winner's %q", got, winner)
	}
	if strings.Contains(env.logs.String(), "internal error") {
		t.Fatalf("server logged an internal error:\n%s", env.logs.String())
	}
}
