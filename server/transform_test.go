package server

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

func TestWebhookTransformers(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("tx@example.com")
	ch := env.newChannel(u, "ci")
	token := ch["webhook_token"].(string)
	secret := env.do(200, "GET", "/v1/channels/"+ch["id"].(string)+"/secret", nil, u.Token).Str("webhook_secret")
	body := `{"action":"completed","repository":{"full_name":"o/r"},"workflow_run":{"name":"CI","head_branch":"main","conclusion":"failure","html_url":"https://github.com/o/r/actions/runs/9"}}`
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	sig := "sha256=" + hex.EncodeToString(mac.Sum(nil))

	r := env.request("POST", "/v1/webhook/github/"+token, body, "", "X-GitHub-Event", "workflow_run", "X-Hub-Signature-256", sig)
	if r.Status != 200 || r.Body["ok"] != true {
		t.Fatalf("signed workflow_run: %d %s", r.Status, r.Raw)
	}
	m := env.do(200, "GET", "/v1/messages/"+r.Str("id"), nil, u.Token).Body
	if m["title"] != "[o/r] CI failure" || m["priority"] != "high" {
		t.Fatalf("message = %v", m)
	}
	acts := m["actions"].([]any)
	if len(acts) != 1 || acts[0].(map[string]any)["type"] != "url" || acts[0].(map[string]any)["value"] != "https://github.com/o/r/actions/runs/9" {
		t.Fatalf("actions = %v", acts)
	}

	wantError(t, env.request("POST", "/v1/webhook/github/"+token, body, "", "X-GitHub-Event", "workflow_run", "X-Hub-Signature-256", "sha256=00"), 401, "invalid_token")
	r = env.request("POST", "/v1/webhook/github/"+token, `{"zen":"hi"}`, "", "X-GitHub-Event", "ping")
	if r.Status != 200 || r.Body["ignored"] != true {
		t.Fatalf("ping: %d %s", r.Status, r.Raw)
	}
	wantError(t, env.request("POST", "/v1/webhook/bitbucket/"+token, body, ""), 404, "not_found")
	wantError(t, env.request("POST", "/v1/webhook/github/nope", body, "", "X-GitHub-Event", "push"), 401, "invalid_token")
	wantError(t, env.request("POST", "/v1/webhook/vercel/"+token, "{", ""), 400, "invalid_payload")
	if total := env.do(200, "GET", "/v1/messages", nil, u.Token).Body["total"]; total != float64(1) {
		t.Fatalf("total messages = %v, want 1 (refused webhooks store nothing)", total)
	}
}

func TestSubscriptionShowsPlan(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("sub@example.com")
	r := env.do(200, "GET", "/v1/subscriptions", nil, u.Token)
	limits := r.Body["limits"].(map[string]any)
	if r.Str("plan") != "free" || r.Str("status") != "none" || r.Body["store"] != nil ||
		limits["send_per_minute"] != float64(env.cfg.Plans.Free.SendPerMinute) {
		t.Fatalf("subscription = %s", r.Raw)
	}
}

// TestPlatformWebhooksWithSourceSecret: once a channel has a source_secret,
// GitHub, Vercel and Netlify webhooks must carry the platform's own
// signature made with it, computed here as each platform documents it.
// Unsigned, signed with the callback secret or with another secret: 401
// naming the header, and nothing stored.
func TestPlatformWebhooksWithSourceSecret(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("platforms@example.com")
	ch := env.newChannel(u, "deploys")
	token, id := ch["webhook_token"].(string), ch["id"].(string)
	const source = "platform-src-secret"
	env.do(200, "PATCH", "/v1/channels/"+id, map[string]any{"source_secret": source}, u.Token)
	callback := env.do(200, "GET", "/v1/channels/"+id+"/secret", nil, u.Token).Str("webhook_secret")

	gh := `{"action":"completed","repository":{"full_name":"o/r"},"workflow_run":{"name":"CI","head_branch":"main","conclusion":"failure","html_url":"https://github.com/o/r/actions/runs/9"}}`
	vc := `{"type":"deployment.succeeded","payload":{"name":"web","target":"production","deployment":{"url":"web-abc.vercel.app"}}}`
	nl := `{"state":"ready","name":"site","branch":"main","deploy_ssl_url":"https://main--site.netlify.app"}`
	githubSig := func(secret, body string) string {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(body))
		return "sha256=" + hex.EncodeToString(m.Sum(nil))
	}
	vercelSig := func(secret, body string) string {
		m := hmac.New(sha1.New, []byte(secret))
		m.Write([]byte(body))
		return hex.EncodeToString(m.Sum(nil))
	}
	netlifySig := func(secret, body string) string {
		sum := sha256.Sum256([]byte(body))
		enc := base64.RawURLEncoding
		jws := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
			enc.EncodeToString([]byte(`{"iss":"netlify","sha256":"`+hex.EncodeToString(sum[:])+`"}`))
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(jws))
		return jws + "." + enc.EncodeToString(m.Sum(nil))
	}
	stored := 0
	for _, c := range []struct {
		source, header, body, title string
		sign                        func(secret, body string) string
		extra                       []string
	}{
		{"github", "X-Hub-Signature-256", gh, "[o/r] CI failure", githubSig, []string{"X-GitHub-Event", "workflow_run"}},
		{"vercel", "x-vercel-signature", vc, "Vercel: web succeeded", vercelSig, nil},
		{"netlify", "X-Webhook-Signature", nl, "", netlifySig, nil},
	} {
		path := "/v1/webhook/" + c.source + "/" + token
		for _, tc := range []struct {
			name, sig, want string
		}{
			{"unsigned", "", "header is missing"},
			{"signed with the callback secret", c.sign(callback, c.body), "source_secret"},
			{"signed with another secret", c.sign(source+"x", c.body), "source_secret"},
		} {
			headers := append([]string{}, c.extra...)
			if tc.sig != "" {
				headers = append(headers, c.header, tc.sig)
			}
			r := env.request("POST", path, c.body, "", headers...)
			wantError(t, r, 401, "invalid_token")
			if msg := r.Str("message"); !strings.Contains(msg, c.header) || !strings.Contains(msg, tc.want) {
				t.Errorf("%s %s: message %q, want it to name %s and say %q", c.source, tc.name, msg, c.header, tc.want)
			}
		}
		r := env.request("POST", path, c.body, "", append(c.extra, c.header, c.sign(source, c.body))...)
		if r.Status != 200 || r.Body["ok"] != true {
			t.Fatalf("%s signed with the source secret: %d %s", c.source, r.Status, r.Raw)
		}
		stored++
		if c.title != "" {
			if m := env.do(200, "GET", "/v1/messages/"+r.Str("id"), nil, u.Token).Body; m["title"] != c.title {
				t.Errorf("%s: title %v, want %q", c.source, m["title"], c.title)
			}
		}
	}
	if total := env.do(200, "GET", "/v1/messages", nil, u.Token).Body["total"]; total != float64(stored) {
		t.Fatalf("total messages = %v, want %d (refused webhooks store nothing)", total, stored)
	}
}
