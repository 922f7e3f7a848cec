package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
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
