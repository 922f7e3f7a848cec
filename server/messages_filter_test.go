package server

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// listTitles pages path (which has a query) by next_before and returns the
// titles, checking that every page reports the same total.
func listTitles(t *testing.T, e *testEnv, path, token string, wantTotal int) []string {
	t.Helper()
	var titles []string
	next := ""
	for range 50 {
		p := path
		if next != "" {
			p += "&before=" + url.QueryEscape(next)
		}
		r := e.do(200, "GET", p, nil, token)
		for _, m := range r.Body["messages"].([]any) {
			titles = append(titles, m.(map[string]any)["title"].(string))
		}
		if r.Body["total"] != float64(wantTotal) || r.Body["total_exact"] != true {
			t.Fatalf("%s: total %v (exact %v), want %d", p, r.Body["total"], r.Body["total_exact"], wantTotal)
		}
		if next = r.Str("next_before"); next == "" {
			return titles
		}
	}
	t.Fatalf("%s: paging does not end", path)
	return nil
}

// TestListMessagesByState: state= keeps the messages whose status is the
// one asked, pages and counts within them, and agrees with the status each
// message shows (an unread answer past the TTL is expired before the sweep).
func TestListMessagesByState(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	u := e.newUser("states@example.com")
	ch := e.newChannel(u, "states")
	token := ch["webhook_token"].(string)
	ids := make([]string, 12)
	for i := range ids {
		ids[i] = e.do(200, "POST", "/v1/send/"+token, map[string]any{"title": fmt.Sprintf("Job %d", i),
			"actions": []map[string]any{{"type": "button", "label": "Retry", "key": "retry"}}}, "").Str("id")
	}
	// 0-3 answered before the clock moves (they expire unread), 4-5 read,
	// 6-7 answered after it, 8-11 left pending.
	for _, i := range []int{0, 1, 2, 3, 4, 5} {
		e.do(200, "POST", "/v1/messages/"+ids[i]+"/respond", map[string]any{"action": "retry"}, u.Token)
	}
	for _, i := range []int{4, 5} {
		if got := e.do(200, "GET", "/v1/callback/"+token+"/"+ids[i], nil, "").Str("status"); got != "submitted" {
			t.Fatalf("poll %d: %q", i, got)
		}
	}
	e.clock.Advance(e.cfg.Polling.ResponseTTL.Duration + time.Second)
	for _, i := range []int{6, 7} {
		e.do(200, "POST", "/v1/messages/"+ids[i]+"/respond", map[string]any{"action": "retry"}, u.Token)
	}
	titles := func(is ...int) []string {
		var out []string
		for _, i := range slices.Backward(is) {
			out = append(out, fmt.Sprintf("Job %d", i))
		}
		return out
	}
	for state, want := range map[string][]string{
		"pending":      titles(8, 9, 10, 11),
		"submitted":    titles(6, 7),
		"already_read": titles(4, 5),
		"expired":      titles(0, 1, 2, 3),
		"failed":       nil,
		"answered":     titles(0, 1, 2, 3, 4, 5, 6, 7),
	} {
		for _, scope := range []string{"", "&channel_id=" + ch["id"].(string)} {
			got := listTitles(t, e, "/v1/messages?limit=3&state="+state+scope, u.Token, len(want))
			if !slices.Equal(got, want) {
				t.Errorf("state=%s%s: %q, want %q", state, scope, got, want)
			}
		}
		// Every message listed shows the status asked for.
		for _, m := range e.do(200, "GET", "/v1/messages?state="+state, nil, u.Token).Body["messages"].([]any) {
			if got := m.(map[string]any)["status"]; state != "answered" && got != state || state == "answered" && got == "pending" {
				t.Errorf("state=%s lists a message whose status is %v", state, got)
			}
		}
	}
	// With offset, a search and a filter at once.
	if _, err := e.st.IndexForSearch(t.Context(), 100); err != nil {
		t.Fatal(err)
	}
	r := e.do(200, "GET", "/v1/messages?q=job&state=answered&limit=2&offset=3", nil, u.Token)
	if got := r.Body["messages"].([]any); len(got) != 2 || got[0].(map[string]any)["title"] != "Job 4" || r.Body["total"] != 8.0 {
		t.Errorf("search answered offset 3: %s", r.Raw)
	}

	for _, bad := range []string{"state=answerd", "state=", "state=PENDING", "state=open"} {
		r := e.request("GET", "/v1/messages?"+bad, nil, u.Token)
		wantError(t, r, 400, "invalid_payload")
		if msg := r.Str("message"); !strings.Contains(msg, "state must be one of pending, submitted") {
			t.Errorf("%s: message %q", bad, msg)
		}
	}
}

// TestListApproverMessages: approver=me lists, newest first, the messages
// whose rule names the caller, across channels, without the owner's
// fields; someone who approves nothing sees nothing, and another's channel
// stays 404.
func TestListApproverMessages(t *testing.T) {
	f := aprSetup(t)
	before := f.env.do(200, "POST", "/v1/send/"+f.token, map[string]any{"title": "Before the rule"}, "").Str("id")
	f.rule(1, 3600, f.b)
	const secretURL = "https://user:hunter2@hooks.example.com/approve?key=s3cret"
	var ids []string
	for i := range 5 {
		ids = append(ids, f.env.do(200, "POST", "/v1/send/"+f.token, map[string]any{"title": fmt.Sprintf("Deploy %d?", i),
			"callback_url": secretURL}, "").Str("id"))
	}
	// Cat's own channel, where Bob approves too; and Bob's own messages.
	cats := f.env.newChannel(f.c, "cat's")
	f.env.do(200, "PATCH", "/v1/channels/"+cats["id"].(string), map[string]any{"approval": map[string]any{
		"required_count": 1, "approvers": []string{f.b.ID}, "window_seconds": 3600}}, f.c.Token)
	catMsg := f.env.do(200, "POST", "/v1/send/"+cats["webhook_token"].(string), map[string]any{"title": "Cat's release?"}, "").Str("id")
	bobs := f.env.newChannel(f.b, "bob's")
	f.env.do(200, "POST", "/v1/send/"+bobs["webhook_token"].(string), map[string]any{"title": "Bob's own"}, "")
	f.env.acceptInvitations(f.b)

	want := []string{"Cat's release?", "Deploy 4?", "Deploy 3?", "Deploy 2?", "Deploy 1?", "Deploy 0?"}
	if got := listTitles(t, f.env, "/v1/messages?approver=me&limit=4", f.b.Token, 6); !slices.Equal(got, want) {
		t.Errorf("bob's approvals: %q, want %q", got, want)
	}
	r := f.env.do(200, "GET", "/v1/messages?approver=me", nil, f.b.Token)
	if strings.Contains(string(r.Raw), "hunter2") || strings.Contains(string(r.Raw), before) {
		t.Errorf("bob's approvals carry the callback_url or a message before the rule: %s", r.Raw)
	}
	for _, m := range r.Body["messages"].([]any) {
		m := m.(map[string]any)
		if v, ok := m["callback_url"]; !ok || v != nil {
			t.Errorf("%s: callback_url %v, want null", m["id"], v)
		}
		if a, _ := m["approval"].(map[string]any); a == nil || a["status"] != "pending" {
			t.Errorf("%s: approval %v, want a pending approval", m["id"], m["approval"])
		}
	}

	// Bob votes; the list filtered by state follows.
	if r := f.vote(ids[4], f.b, "approve", nil); r.Status != 200 {
		t.Fatalf("vote: %d %s", r.Status, r.Raw)
	}
	if r := f.vote(catMsg, f.b, "reject", nil); r.Status != 200 {
		t.Fatalf("vote: %d %s", r.Status, r.Raw)
	}
	if got := listTitles(t, f.env, "/v1/messages?approver=me&state=pending", f.b.Token, 4); !slices.Equal(got, want[2:]) {
		t.Errorf("bob's open approvals: %q, want %q", got, want[2:])
	}
	if got := listTitles(t, f.env, "/v1/messages?approver=me&state=answered", f.b.Token, 2); !slices.Equal(got, want[:2]) {
		t.Errorf("bob's decided approvals: %q, want %q", got, want[:2])
	}
	// One channel of them; the owner's own list by approver=me.
	if got := listTitles(t, f.env, "/v1/messages?approver=me&channel_id="+f.chID, f.b.Token, 5); !slices.Equal(got, want[1:]) {
		t.Errorf("bob's approvals in ann's channel: %q", got)
	}
	if got := listTitles(t, f.env, "/v1/messages?approver=me", f.a.Token, 0); len(got) != 0 {
		t.Errorf("ann approves nothing, lists %q", got)
	}

	// Cat approves nothing of Ann's: an empty list, and Ann's channel is
	// not found; Bob cannot delete what he approves.
	if got := listTitles(t, f.env, "/v1/messages?approver=me", f.c.Token, 0); len(got) != 0 {
		t.Errorf("cat lists %q", got)
	}
	wantError(t, f.env.request("GET", "/v1/messages?approver=me&channel_id="+f.chID, nil, f.c.Token), 404, "not_found")
	wantError(t, f.env.request("GET", "/v1/messages/"+ids[0], nil, f.c.Token), 404, "not_found")
	wantError(t, f.env.request("DELETE", "/v1/messages/"+ids[0], nil, f.b.Token), 403, "forbidden")
	for _, bad := range []string{"approver=you", "approver=" + f.b.ID, "approver="} {
		wantError(t, f.env.request("GET", "/v1/messages?"+bad, nil, f.b.Token), 400, "invalid_payload")
	}
}
