package server

import (
	"context"
	"fmt"
	"net/url"
	"testing"
)

// TestListMessagesCursorAndSearch pages GET /v1/messages by next_before and
// searches it with q.
func TestListMessagesCursorAndSearch(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u, other := env.newUser("pager@example.com"), env.newUser("other@example.com")
	ch := env.newChannel(u, "pages")
	token := ch["webhook_token"].(string)
	for i := range 7 {
		env.do(200, "POST", "/v1/send/"+token, map[string]any{"title": fmt.Sprintf("Backup %d done", i),
			"body": "took **99 GB**"}, "")
	}
	otherTok := env.newChannel(other, "theirs")["webhook_token"].(string)
	env.do(200, "POST", "/v1/send/"+otherTok, map[string]any{"title": "Backup of someone else"}, "")

	var titles []string
	path := "/v1/messages?limit=3"
	for range 10 {
		r := env.do(200, "GET", path, nil, u.Token)
		for _, m := range r.Body["messages"].([]any) {
			titles = append(titles, m.(map[string]any)["title"].(string))
		}
		if r.Body["total"] != float64(7) || r.Body["total_exact"] != true {
			t.Fatalf("total %v exact %v, want 7 true", r.Body["total"], r.Body["total_exact"])
		}
		next, _ := r.Body["next_before"].(string)
		if next == "" {
			if v, ok := r.Body["next_before"]; !ok || v != nil {
				t.Fatalf("last page: next_before = %v, want null", v)
			}
			break
		}
		path = "/v1/messages?limit=3&before=" + url.QueryEscape(next)
	}
	if len(titles) != 7 || titles[0] != "Backup 6 done" || titles[6] != "Backup 0 done" {
		t.Fatalf("paged titles %q", titles)
	}

	if _, err := env.st.IndexForSearch(context.Background(), 100); err != nil {
		t.Fatal(err)
	}
	r := env.do(200, "GET", "/v1/messages?q="+url.QueryEscape("backup 4"), nil, u.Token)
	if got := r.Body["messages"].([]any); len(got) != 1 || got[0].(map[string]any)["title"] != "Backup 4 done" {
		t.Fatalf("search: %s", r.Raw)
	}
	if got := env.do(200, "GET", "/v1/messages?q=99", nil, u.Token).Body["messages"].([]any); len(got) != 7 {
		t.Fatalf("body search found %d, want 7", len(got))
	}
	if got := env.do(200, "GET", "/v1/messages?q=someone", nil, u.Token).Body["messages"].([]any); len(got) != 0 {
		t.Fatalf("search shows another user's message: %v", got)
	}

	for _, bad := range []string{"before=abc", "before=-1", "before=0", "q=%20%20", "q=" + url.QueryEscape(string(make([]byte, 201)))} {
		wantError(t, env.request("GET", "/v1/messages?"+bad, nil, u.Token), 400, "invalid_payload")
	}
	// Another user's channel stays unseen, searched or not.
	wantError(t, env.request("GET", "/v1/messages?q=backup&channel_id="+ch["id"].(string), nil, other.Token), 404, "not_found")
}
