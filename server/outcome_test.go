package server

import (
	"strings"
	"testing"
)

// TestOutcomeKeptAfterPoll: what answered a message stays on the message
// for its owner after the sender polled the response away.
func TestOutcomeKeptAfterPoll(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("ada@example.com")
	ch := e.newChannel(u, "ops")
	token := ch["webhook_token"].(string)
	id := e.do(200, "POST", "/v1/send/"+token, map[string]any{"title": "Disk full", "callback_url": "https://hooks.example.com/h", "actions": []map[string]any{
		{"type": "form", "label": "Reply", "key": "reply", "fields": []map[string]any{{"key": "note", "label": "Note", "type": "text"}}},
	}}, "").Str("id")
	if got := e.do(200, "GET", "/v1/messages/"+id, nil, u.Token).Body["outcome"]; got != nil {
		t.Fatalf("unanswered outcome = %v, want null", got)
	}
	e.do(200, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "reply", "responses": map[string]any{"note": "cleaned /var"}}, u.Token)
	e.do(200, "GET", "/v1/callback/"+token+"/"+id, nil, "") // the sender reads the response
	m := e.do(200, "GET", "/v1/messages/"+id, nil, u.Token)
	if m.Body["response"] != nil || m.Str("status") != "already_read" {
		t.Fatalf("after the poll: %s", m.Raw)
	}
	out, _ := m.Body["outcome"].(map[string]any)
	by, _ := out["by"].(map[string]any)
	responses, _ := out["responses"].(map[string]any)
	if out["action"] != "reply" || responses["note"] != "cleaned /var" || by["email"] != "ada@example.com" || by["id"] != u.ID ||
		!strings.HasPrefix(out["at"].(string), "20") {
		t.Errorf("outcome %s", m.Raw)
	}
}
