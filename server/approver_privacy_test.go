package server

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald/service"
)

// TestApproverNeverSeesCallbackURL: the callback_url (which may carry
// credentials) is the owner's; approvers read the message without it in
// every view: the message, the channel's list and the live stream.
func TestApproverNeverSeesCallbackURL(t *testing.T) {
	f := aprSetup(t)
	f.rule(1, 3600, f.b)
	f.env.acceptInvitations(f.b)
	stream := streamOpen(f.env, f.b.Token)
	stream.waitComment("connected")
	const secretURL = "https://user:hunter2@hooks.example.com/approve?key=s3cret"
	id := f.env.do(200, "POST", "/v1/send/"+f.token, map[string]any{"title": "Deploy?", "callback_url": secretURL}, "").Str("id")

	views := map[string]map[string]any{
		"GET message": f.env.do(200, "GET", "/v1/messages/"+id, nil, f.b.Token).Body,
		"stream":      streamWantEvent(t, stream.next(streamWait), "message.created", id),
	}
	list := f.env.do(200, "GET", "/v1/messages?channel_id="+f.chID, nil, f.b.Token)
	msgs, _ := list.Body["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("approver's list: %s", list.Raw)
	}
	views["list"] = msgs[0].(map[string]any)
	for name, m := range views {
		if v, ok := m["callback_url"]; !ok || v != nil {
			t.Errorf("%s: approver sees callback_url %v, want null", name, v)
		}
	}
	if r := f.env.do(200, "GET", "/v1/messages?channel_id="+f.chID, nil, f.b.Token); strings.Contains(string(r.Raw), "hunter2") {
		t.Errorf("approver's list carries the callback credentials: %s", r.Raw)
	}
	// The owner still sees it.
	if got := f.env.do(200, "GET", "/v1/messages/"+id, nil, f.a.Token).Str("callback_url"); got != secretURL {
		t.Errorf("owner sees callback_url %q, want %q", got, secretURL)
	}
}

// TestVoteResponsesBounded: a vote carries at most what a form submission
// may: a few short values, not megabytes that every poll would then serve.
func TestVoteResponsesBounded(t *testing.T) {
	f := aprSetup(t)
	f.rule(2, 3600, f.b, f.c)
	id := f.send()

	many := map[string]any{}
	for i := range service.MaxFields + 1 {
		many["k"+strings.Repeat("x", i)] = "v"
	}
	for name, responses := range map[string]any{
		"900 KB value":   map[string]any{"comment": strings.Repeat("a", 900_000)},
		"value too long": map[string]any{"comment": strings.Repeat("é", service.MaxFieldValue+1)},
		"too many keys":  many,
		"long key":       map[string]any{strings.Repeat("k", service.MaxKey+1): "v"},
		"nested object":  map[string]any{"comment": map[string]any{"deep": strings.Repeat("a", 100)}},
		"array":          map[string]any{"comment": []string{"a", "b"}},
	} {
		wantError(t, f.vote(id, f.b, "approve", responses), 400, "invalid_payload")
		if _, a := f.message(id, f.a); len(a["votes"].([]any)) != 0 {
			t.Fatalf("%s: a refused vote was recorded: %v", name, a["votes"])
		}
	}
	// A reasonable comment is fine, at the limit too.
	ok := map[string]any{"comment": strings.Repeat("é", service.MaxFieldValue), "ticket": 42, "urgent": true}
	if r := f.vote(id, f.b, "approve", ok); r.Status != 200 {
		t.Fatalf("a vote with a comment: %d %s", r.Status, r.Raw)
	}
}
