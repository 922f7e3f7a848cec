package transform

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestGitHubEvents(t *testing.T) {
	cases := []struct {
		event, body       string
		title, body2, url string
		priority          string
	}{
		{"push", `{"ref":"refs/heads/main","compare":"https://github.com/o/r/compare/a...b","repository":{"full_name":"o/r"},"pusher":{"name":"ann"},"commits":[{"id":"0123456789","message":"Fix bug\n\nlong"}]}`,
			"[o/r] push to main", "**ann** pushed 1 commit(s) to `main`\n- `0123456` Fix bug", "https://github.com/o/r/compare/a...b", "normal"},
		{"pull_request", `{"action":"closed","repository":{"full_name":"o/r"},"sender":{"login":"bob"},"pull_request":{"number":7,"title":"Add X","html_url":"https://github.com/o/r/pull/7","merged":true}}`,
			"[o/r] PR #7 merged", "**Add X** by bob", "https://github.com/o/r/pull/7", "normal"},
		{"workflow_run", `{"action":"completed","repository":{"full_name":"o/r"},"workflow_run":{"name":"CI","head_branch":"main","conclusion":"failure","html_url":"https://github.com/o/r/actions/runs/1"}}`,
			"[o/r] CI failure", "Workflow **CI** on `main`: failure", "https://github.com/o/r/actions/runs/1", "high"},
		{"check_suite", `{"repository":{"full_name":"o/r","html_url":"https://github.com/o/r"},"check_suite":{"head_branch":"dev","conclusion":"success"}}`,
			"[o/r] checks success", "Check suite on `dev`: success", "https://github.com/o/r", "normal"},
		{"release", `{"action":"published","repository":{"full_name":"o/r"},"release":{"tag_name":"v1.2","name":"Big","html_url":"https://github.com/o/r/releases/v1.2"}}`,
			"[o/r] release v1.2 published", "**Big** (v1.2)", "https://github.com/o/r/releases/v1.2", "normal"},
		{"issues", `{"action":"opened","repository":{"full_name":"o/r"},"sender":{"login":"cy"},"issue":{"number":3,"title":"Crash","html_url":"https://github.com/o/r/issues/3"}}`,
			"[o/r] issue #3 opened", "**Crash** by cy", "https://github.com/o/r/issues/3", "normal"},
	}
	for _, c := range cases {
		t.Run(c.event, func(t *testing.T) {
			m, err := Transform("github", "s", headers("X-GitHub-Event", c.event), []byte(c.body))
			if err != nil || m == nil {
				t.Fatalf("Transform = %v, %v", m, err)
			}
			if m.Title != c.title || m.Body != c.body2 || m.URL != c.url || m.Priority != c.priority {
				t.Fatalf("got %+v", m)
			}
		})
	}
	m, err := Transform("github", "s", headers("X-GitHub-Event", "ping"), []byte(`{"zen":"x"}`))
	if err != nil || m != nil {
		t.Fatalf("ping: %v, %v; want ignored", m, err)
	}
	if _, err := Transform("github", "s", headers("X-GitHub-Event", "push"), []byte(`nope`)); err == nil {
		t.Fatal("invalid JSON accepted")
	}
	if _, err := Transform("bitbucket", "s", headers(), nil); !errors.Is(err, ErrUnknownSource) {
		t.Fatalf("unknown source: %v", err)
	}
}

func TestSignatures(t *testing.T) {
	body := []byte(`{"state":"ready","name":"site","branch":"main","deploy_ssl_url":"https://x.netlify.app"}`)
	secret := "whsec_test"
	ghSig, vcSig, nlSig := signGitHub(secret, body), signVercel(secret, body), signNetlify(secret, body)

	for _, c := range []struct{ source, header, good string }{
		{"github", "X-Hub-Signature-256", ghSig},
		{"vercel", "x-vercel-signature", vcSig},
		{"netlify", "X-Webhook-Signature", nlSig},
	} {
		t.Run(c.source, func(t *testing.T) {
			h := headers(c.header, c.good, "X-GitHub-Event", "ping")
			if _, err := Transform(c.source, secret, h, body); err != nil {
				t.Fatalf("good signature refused: %v", err)
			}
			if _, err := Transform(c.source, "other", h, body); !errors.Is(err, ErrBadSignature) {
				t.Fatalf("wrong secret: err = %v, want ErrBadSignature", err)
			}
			if _, err := Transform(c.source, secret, h, append([]byte(" "), body...)); !errors.Is(err, ErrBadSignature) {
				t.Fatalf("changed body: err = %v, want ErrBadSignature", err)
			}
		})
	}
}

func TestVercelNetlify(t *testing.T) {
	m, err := Transform("vercel", "s", headers(), []byte(`{"type":"deployment.error","payload":{"name":"web","target":"production","deployment":{"url":"web-abc.vercel.app"}}}`))
	if err != nil || m == nil || m.Priority != "high" || m.URL != "https://web-abc.vercel.app" || !strings.Contains(m.Title, "web error") {
		t.Fatalf("vercel error: %+v, %v", m, err)
	}
	m, err = Transform("vercel", "s", headers(), []byte(`{"type":"project.created","payload":{}}`))
	if err != nil || m != nil {
		t.Fatalf("non-deployment vercel event: %+v, %v; want ignored", m, err)
	}
	m, err = Transform("netlify", "s", headers(), []byte(`{"state":"error","name":"site","branch":"main","admin_url":"https://app.netlify.com/sites/site","error_message":"Build failed"}`))
	if err != nil || m == nil || m.Priority != "high" || !strings.Contains(m.Body, "Build failed") || m.URL != "https://app.netlify.com/sites/site" {
		t.Fatalf("netlify error: %+v, %v", m, err)
	}
}

func TestLinksAreWebPages(t *testing.T) {
	for _, c := range []struct{ source, event, body string }{
		{"github", "issues", `{"issue":{"number":1,"title":"x","html_url":"javascript:alert(1)"}}`},
		{"github", "workflow_run", `{"workflow_run":{"html_url":"0"}}`},
		{"vercel", "", `{"type":"deployment.ready","payload":{"links":{"deployment":"file:///etc/passwd"}}}`},
		{"netlify", "", `{"state":"ready","deploy_ssl_url":"ftp://site"}`},
	} {
		t.Run(c.source+" "+c.body, func(t *testing.T) {
			m, err := Transform(c.source, "s", headers("X-GitHub-Event", c.event), []byte(c.body))
			if err != nil || m == nil {
				t.Fatalf("Transform = %v, %v", m, err)
			}
			if m.URL != "" || m.URLLabel != "" {
				t.Fatalf("link %q (%q) kept; want none", m.URL, m.URLLabel)
			}
		})
	}
}
