package transform

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
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
			m, err := Transform("github", Secrets{}, headers("X-GitHub-Event", c.event), []byte(c.body))
			if err != nil || m == nil {
				t.Fatalf("Transform = %v, %v", m, err)
			}
			if m.Title != c.title || m.Body != c.body2 || m.URL != c.url || m.Priority != c.priority {
				t.Fatalf("got %+v", m)
			}
		})
	}
	m, err := Transform("github", Secrets{}, headers("X-GitHub-Event", "ping"), []byte(`{"zen":"x"}`))
	if err != nil || m != nil {
		t.Fatalf("ping: %v, %v; want ignored", m, err)
	}
	if _, err := Transform("github", Secrets{}, headers("X-GitHub-Event", "push"), []byte(`nope`)); err == nil {
		t.Fatal("invalid JSON accepted")
	}
	if _, err := Transform("bitbucket", Secrets{}, headers(), nil); !errors.Is(err, ErrUnknownSource) {
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
			if _, err := Transform(c.source, Secrets{Source: secret}, h, body); err != nil {
				t.Fatalf("good signature refused: %v", err)
			}
			if _, err := Transform(c.source, Secrets{Source: "other"}, h, body); !errors.Is(err, ErrBadSignature) {
				t.Fatalf("wrong secret: err = %v, want ErrBadSignature", err)
			}
			if _, err := Transform(c.source, Secrets{Source: secret}, h, append([]byte(" "), body...)); !errors.Is(err, ErrBadSignature) {
				t.Fatalf("changed body: err = %v, want ErrBadSignature", err)
			}
		})
	}
}

func TestVercelNetlify(t *testing.T) {
	m, err := Transform("vercel", Secrets{}, headers(), []byte(`{"type":"deployment.error","payload":{"name":"web","target":"production","deployment":{"url":"web-abc.vercel.app"}}}`))
	if err != nil || m == nil || m.Priority != "high" || m.URL != "https://web-abc.vercel.app" || !strings.Contains(m.Title, "web error") {
		t.Fatalf("vercel error: %+v, %v", m, err)
	}
	m, err = Transform("vercel", Secrets{}, headers(), []byte(`{"type":"project.created","payload":{}}`))
	if err != nil || m != nil {
		t.Fatalf("non-deployment vercel event: %+v, %v; want ignored", m, err)
	}
	m, err = Transform("netlify", Secrets{}, headers(), []byte(`{"state":"error","name":"site","branch":"main","admin_url":"https://app.netlify.com/sites/site","error_message":"Build failed"}`))
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
			m, err := Transform(c.source, Secrets{}, headers("X-GitHub-Event", c.event), []byte(c.body))
			if err != nil || m == nil {
				t.Fatalf("Transform = %v, %v", m, err)
			}
			if m.URL != "" || m.URLLabel != "" {
				t.Fatalf("link %q (%q) kept; want none", m.URL, m.URLLabel)
			}
		})
	}
}

// signJWS is a JWS (HS256) over header and claims, as Netlify signs its
// X-Webhook-Signature with the site's JWS secret token.
func signJWS(secret, header, claims string) string {
	enc := base64.RawURLEncoding
	jws := enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(claims))
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(jws))
	return jws + "." + enc.EncodeToString(m.Sum(nil))
}

// TestPlatformSourceSecret: with a source secret, GitHub, Vercel and
// Netlify must sign every request with it, as each documents its
// signature; a missing header, a wrong secret (the callback secret
// included) or a changed body is refused. Without one, an unsigned
// request still passes and a signature is checked as before.
func TestPlatformSourceSecret(t *testing.T) {
	t.Parallel()
	const source, callback = "src-secret-1", "whsec_callback"
	body := []byte(`{"state":"ready","name":"site","branch":"main","deploy_ssl_url":"https://x.netlify.app"}`)
	sum := sha256.Sum256(body)
	netlifyClaims := `{"iss":"netlify","sha256":"` + hex.EncodeToString(sum[:]) + `"}`
	for _, c := range []struct {
		source, header string
		sign           func(secret string, body []byte) string
		forged         []string // signed with the source secret, yet not what the platform sends
	}{
		{"github", "X-Hub-Signature-256", signGitHub, []string{strings.TrimPrefix(signGitHub(source, body), "sha256=")}},
		{"vercel", "x-vercel-signature", signVercel, []string{signGitHub(source, body)}},
		{"netlify", "X-Webhook-Signature", signNetlify, []string{
			signJWS(source, `{"alg":"HS256","typ":"JWT"}`, `{"iss":"someone","sha256":"`+hex.EncodeToString(sum[:])+`"}`),
			signJWS(source, `{"alg":"HS256","typ":"JWT"}`, `{"sha256":"`+hex.EncodeToString(sum[:])+`"}`),
			signJWS(source, `{"alg":"HS512","typ":"JWT"}`, netlifyClaims),
			signJWS(source, `{"alg":"none"}`, netlifyClaims),
		}},
	} {
		t.Run(c.source, func(t *testing.T) {
			both := Secrets{Source: source, Callback: callback}
			ok := func(secrets Secrets, h Headers, b []byte) {
				t.Helper()
				if _, err := Transform(c.source, secrets, h, b); err != nil {
					t.Fatalf("refused: %v", err)
				}
			}
			bad := func(secrets Secrets, h Headers, b []byte, want error) {
				t.Helper()
				if _, err := Transform(c.source, secrets, h, b); !errors.Is(err, want) {
					t.Fatalf("err = %v, want %v", err, want)
				}
			}
			ok(both, headers(c.header, c.sign(source, body), "X-GitHub-Event", "ping"), body)
			bad(both, headers("X-GitHub-Event", "ping"), body, ErrNoSignature)
			bad(both, headers(c.header, "", "X-GitHub-Event", "ping"), body, ErrNoSignature)
			bad(both, headers(c.header, c.sign(callback, body), "X-GitHub-Event", "ping"), body, ErrBadSignature)
			bad(both, headers(c.header, c.sign(source, body)), append(body, ' '), ErrBadSignature)
			for _, f := range c.forged {
				bad(both, headers(c.header, f), body, ErrBadSignature)
			}

			old := Secrets{Callback: callback}
			ok(old, headers("X-GitHub-Event", "ping"), body)
			ok(old, headers(c.header, c.sign(callback, body), "X-GitHub-Event", "ping"), body)
			bad(old, headers(c.header, c.sign(source, body)), body, ErrBadSignature)
		})
	}
	if !errors.Is(ErrNoSignature, ErrBadSignature) {
		t.Fatal("ErrNoSignature is not an ErrBadSignature")
	}
}

// TestBodyRefusals: a body that is not the JSON a source sends is refused
// in the sender's terms (never Go's types), and an event without the
// object it is about is refused, not made into an empty message.
func TestBodyRefusals(t *testing.T) {
	for _, c := range []struct {
		source, event, body, want string
	}{
		{"gitea", "push", `[]`, "the body must be a JSON object, not array"},
		{"github", "push", `{"ref":5}`, `field "ref" must not be number`},
		{"gitlab", "", `{"object_kind":"merge_request"}`, "merge_request event without object_attributes"},
		{"gitlab", "", `{"object_kind":"pipeline","object_attributes":null}`, "pipeline event without object_attributes"},
		{"uptimekuma", "", `"down"`, "the body must be a JSON object, not string"},
		{"vercel", "", `{`, "invalid JSON"},
	} {
		h := headers()
		switch c.source {
		case "gitea":
			h = headers("X-Gitea-Event", c.event)
		case "github":
			h = headers("X-GitHub-Event", c.event)
		}
		_, err := Transform(c.source, Secrets{}, h, []byte(c.body))
		if err == nil || !strings.HasSuffix(err.Error(), ": "+c.want) || strings.Contains(err.Error(), "Go value") {
			t.Errorf("%s %s: %v, want %q", c.source, c.body, err, c.want)
		}
	}
}
