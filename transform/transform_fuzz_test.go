package transform

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzGitHub sends fuzzed GitHub webhooks, correctly signed, with a fuzzed
// event and a fuzzed forged signature.
func FuzzGitHub(f *testing.F) {
	for _, c := range []struct{ event, body string }{
		{"push", `{"ref":"refs/heads/main","compare":"https://github.com/o/r/compare/a...b","repository":{"full_name":"o/r","html_url":"https://github.com/o/r"},"pusher":{"name":"ann"},"commits":[{"id":"0123456789abcdef","message":"Fix bug\n\nlong"},{"id":"1","message":""}]}`},
		{"pull_request", `{"action":"closed","repository":{"full_name":"o/r"},"sender":{"login":"bob"},"pull_request":{"number":7,"title":"Add X","html_url":"https://github.com/o/r/pull/7","merged":true}}`},
		{"workflow_run", `{"action":"completed","repository":{"full_name":"o/r"},"workflow_run":{"name":"CI","head_branch":"main","conclusion":"failure","status":"completed","html_url":"https://github.com/o/r/actions/runs/1"}}`},
		{"check_suite", `{"repository":{"full_name":"o/r","html_url":"https://github.com/o/r"},"check_suite":{"head_branch":"dev","conclusion":"","status":"queued"}}`},
		{"release", `{"action":"published","repository":{"full_name":"o/r"},"release":{"tag_name":"v1.2","name":"","html_url":"https://github.com/o/r/releases/v1.2"}}`},
		{"issues", `{"action":"opened","repository":{"full_name":"o/r"},"sender":{"login":"cy"},"issue":{"number":3,"title":"Crash","html_url":"javascript:alert(1)"}}`},
		{"ping", `{"zen":"Keep it logically awesome."}`},
		{"pull_request", `{"action":"opened"}`},
		{"push", `[]`},
	} {
		f.Add(c.event, "whsec_test", "", []byte(c.body))
	}
	f.Add("push", "s", "sha256=zz", []byte(`{}`))
	f.Fuzz(func(t *testing.T, event, secret, forged string, body []byte) {
		h := headers("X-GitHub-Event", event, "X-Hub-Signature-256", signGitHub(secret, body))
		checkTransform(t, "github", secret, h, body)
		checkForged(t, "github", secret, headers("X-GitHub-Event", event, "X-Hub-Signature-256", forged), body)
	})
}

// FuzzVercel sends fuzzed Vercel webhooks, correctly signed, and the same
// with a fuzzed forged signature.
func FuzzVercel(f *testing.F) {
	for _, body := range []string{
		`{"type":"deployment.succeeded","payload":{"name":"web","target":"production","deployment":{"url":"web-abc.vercel.app","name":"web"},"links":{"deployment":"https://vercel.com/team/web/abc"}}}`,
		`{"type":"deployment.error","payload":{"name":"web","deployment":{"url":"web-abc.vercel.app"}}}`,
		`{"type":"deployment.canceled","payload":{"deployment":{"url":"javascript:alert(1)"}}}`,
		`{"type":"deployment.created","payload":{"deployment":{"url":"http://x"}}}`,
		`{"type":"project.created","payload":{}}`,
		`{"type":"deployment."}`,
		`nope`,
	} {
		f.Add("whsec_test", "", []byte(body))
	}
	f.Add("s", "0000", []byte(`{}`))
	f.Fuzz(func(t *testing.T, secret, forged string, body []byte) {
		checkTransform(t, "vercel", secret, headers("x-vercel-signature", signVercel(secret, body)), body)
		checkForged(t, "vercel", secret, headers("x-vercel-signature", forged), body)
	})
}

// FuzzNetlify sends fuzzed Netlify deploy notifications, correctly signed
// (a JWS), and the same with a fuzzed forged signature.
func FuzzNetlify(f *testing.F) {
	for _, body := range []string{
		`{"id":"d1","state":"ready","name":"site","branch":"main","deploy_ssl_url":"https://main--site.netlify.app","admin_url":"https://app.netlify.com/sites/site"}`,
		`{"id":"d2","state":"error","name":"site","branch":"main","admin_url":"https://app.netlify.com/sites/site","error_message":"Build failed"}`,
		`{"state":"building","name":"","deploy_ssl_url":"ftp://site"}`,
		`{"state":""}`,
		`{"state":"ready","name":"` + strings.Repeat("é", 120) + `"}`,
	} {
		f.Add("whsec_test", "", []byte(body))
	}
	f.Add("s", "e30.e30.", []byte(`{}`))
	f.Fuzz(func(t *testing.T, secret, forged string, body []byte) {
		checkTransform(t, "netlify", secret, headers("X-Webhook-Signature", signNetlify(secret, body)), body)
		checkForged(t, "netlify", secret, headers("X-Webhook-Signature", forged), body)
	})
}

// checkTransform runs a correctly signed webhook: the signature must
// verify (and fail with another secret), and a message must be one Herald
// can send as it is.
func checkTransform(t *testing.T, source, secret string, h Headers, body []byte) {
	t.Helper()
	m, err := Transform(source, Secrets{Source: secret}, h, body)
	if errors.Is(err, ErrBadSignature) {
		t.Fatalf("%s: a correct signature was refused", source)
	}
	if err != nil && !strings.HasPrefix(err.Error(), "transform: "+source+": ") {
		t.Fatalf("%s: error %q does not name the source", source, err)
	}
	if m != nil {
		checkMessage(t, m)
	}
	if _, err := Transform(source, Secrets{Source: secret + "x"}, h, body); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("%s: with another secret err = %v, want ErrBadSignature", source, err)
	}
}

// checkForged runs a webhook with a fuzzed signature header: it may be
// refused or (empty, or a lucky match) accepted, but what comes out still
// holds.
func checkForged(t *testing.T, source, secret string, h Headers, body []byte) {
	t.Helper()
	if m, err := Transform(source, Secrets{Source: secret}, h, body); err == nil && m != nil {
		checkMessage(t, m)
	}
}

func checkMessage(t *testing.T, m *Message) {
	t.Helper()
	// The lengths are the sender's to cut (service.WebhookPayload).
	if strings.TrimSpace(m.Title) == "" || !utf8.ValidString(m.Title) {
		t.Fatalf("title %q: want a title of valid UTF-8", m.Title)
	}
	if !utf8.ValidString(m.Body) {
		t.Fatalf("body of %d characters: want valid UTF-8", utf8.RuneCountInString(m.Body))
	}
	if !slices.Contains([]string{"low", "normal", "high"}, m.Priority) {
		t.Fatalf("priority %q", m.Priority)
	}
	if m.URL != "" {
		u, err := url.Parse(m.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Fatalf("URL %q: want an absolute http(s) URL", m.URL)
		}
		if strings.TrimSpace(m.URLLabel) == "" {
			t.Fatalf("URL %q without a label", m.URL)
		}
	}
}

func signGitHub(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func signVercel(secret string, body []byte) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// signNetlify is the JWS Netlify sends: HS256 over claims whose sha256 is
// the body's hash.
func signNetlify(secret string, body []byte) string {
	sum := sha256.Sum256(body)
	enc := base64.RawURLEncoding
	jws := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
		enc.EncodeToString([]byte(`{"iss":"netlify","sha256":"`+hex.EncodeToString(sum[:])+`"}`))
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(jws))
	return jws + "." + enc.EncodeToString(m.Sum(nil))
}
