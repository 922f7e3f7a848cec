package server

import (
	"os"
	"strings"
	"testing"
)

// TestSourceSecretOverHTTP: a channel's source secret is set with PATCH,
// never shown, required by the alert and forge transformers once set
// (wrong or missing: 401 {error, message}, nothing stored), and removed
// with null.
func TestSourceSecretOverHTTP(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("src@example.com")
	ch := env.newChannel(u, "alerts")
	id, token := ch["id"].(string), ch["webhook_token"].(string)
	body, err := os.ReadFile("../transform/testdata/gitlab_pipeline.json")
	if err != nil {
		t.Fatal(err)
	}
	if ch["source_secret_set"] != false {
		t.Fatalf("new channel: source_secret_set = %v", ch["source_secret_set"])
	}
	// No secret yet: the URL's token is enough.
	r := env.request("POST", "/v1/webhook/gitlab/"+token, string(body), "", "X-Gitlab-Event", "Pipeline Hook")
	if r.Status != 200 {
		t.Fatalf("no secret: %d %s", r.Status, r.Raw)
	}
	wantError(t, env.request("PATCH", "/v1/channels/"+id, map[string]any{"source_secret": "short"}, u.Token), 400, "invalid_payload")
	wantError(t, env.request("PATCH", "/v1/channels/"+id, map[string]any{"source_secret": 5}, u.Token), 400, "invalid_payload")
	got := env.do(200, "PATCH", "/v1/channels/"+id, map[string]any{"source_secret": "gl-token-123"}, u.Token)
	if got.Body["source_secret_set"] != true || strings.Contains(string(got.Raw), "gl-token-123") {
		t.Fatalf("after PATCH: %s", got.Raw)
	}
	for _, hdr := range [][]string{{}, {"X-Gitlab-Token", "wrong-token"}} {
		r := env.request("POST", "/v1/webhook/gitlab/"+token, string(body), "", append([]string{"X-Gitlab-Event", "Pipeline Hook"}, hdr...)...)
		wantError(t, r, 401, "invalid_token")
		if !strings.Contains(r.Str("message"), "X-Gitlab-Token") {
			t.Errorf("401 message %q does not name the header", r.Str("message"))
		}
	}
	r = env.request("POST", "/v1/webhook/gitlab/"+token, string(body), "", "X-Gitlab-Event", "Pipeline Hook", "X-Gitlab-Token", "gl-token-123")
	if r.Status != 200 {
		t.Fatalf("right token: %d %s", r.Status, r.Raw)
	}
	m := env.do(200, "GET", "/v1/messages/"+r.Str("id"), nil, u.Token).Body
	if m["title"] != "[gitlab-org/gitlab-test] pipeline passed on master" {
		t.Fatalf("message = %v", m)
	}
	wantError(t, env.request("POST", "/v1/webhook/alertmanager/"+token, `{"status":"firing","alerts":[]}`, "", "Authorization", "Bearer nope"), 401, "invalid_token")
	if total := env.do(200, "GET", "/v1/messages", nil, u.Token).Body["total"]; total != float64(2) {
		t.Fatalf("total = %v, want 2 (refused webhooks store nothing)", total)
	}
	env.do(200, "PATCH", "/v1/channels/"+id, map[string]any{"source_secret": nil}, u.Token)
	r = env.request("POST", "/v1/webhook/alertmanager/"+token, `{"status":"firing","alerts":[]}`, "")
	if r.Status != 200 {
		t.Fatalf("secret removed: %d %s", r.Status, r.Raw)
	}
}

// TestTemplateWebhook: a template set with PATCH (parse errors refused at
// save time) turns any JSON into a message; a failing template is a 400
// naming the problem and stores nothing.
func TestTemplateWebhook(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("tmpl@example.com")
	ch := env.newChannel(u, "backups")
	id, token := ch["id"].(string), ch["webhook_token"].(string)
	wantError(t, env.request("POST", "/v1/webhook/template/"+token, `{}`, ""), 400, "invalid_payload")
	r := env.request("PATCH", "/v1/channels/"+id, map[string]any{"template": map[string]string{"title": "{{.x", "body": "b"}}, u.Token)
	wantError(t, r, 400, "invalid_payload")
	if !strings.Contains(r.Str("message"), "template.title does not parse") {
		t.Fatalf("parse error message: %q", r.Str("message"))
	}
	wantError(t, env.request("PATCH", "/v1/channels/"+id, map[string]any{"template": map[string]any{"title": "t", "body": "b", "colour": "x"}}, u.Token), 400, "invalid_payload")
	tmpl := map[string]string{
		"title":    `Backup {{.job}} {{if .ok}}done{{else}}FAILED{{end}}`,
		"body":     `{{.files}} files, {{.bytes}} bytes{{range .warnings}}{{"\n"}}- {{.}}{{end}}`,
		"priority": `{{if not .ok}}high{{end}}`,
		"url":      `{{.log_url}}`,
	}
	got := env.do(200, "PATCH", "/v1/channels/"+id, map[string]any{"template": tmpl}, u.Token)
	if tm, _ := got.Body["template"].(map[string]any); tm["title"] != tmpl["title"] {
		t.Fatalf("channel after PATCH: %s", got.Raw)
	}
	r = env.request("POST", "/v1/webhook/template/"+token,
		`{"job":"nas","ok":false,"files":1200,"bytes":734003200,"warnings":["disk 2 slow"],"log_url":"https://backup.lan/log/7"}`, "")
	if r.Status != 200 {
		t.Fatalf("template send: %d %s", r.Status, r.Raw)
	}
	m := env.do(200, "GET", "/v1/messages/"+r.Str("id"), nil, u.Token).Body
	if m["title"] != "Backup nas FAILED" || m["body"] != "1200 files, 734003200 bytes\n- disk 2 slow" || m["priority"] != "high" {
		t.Fatalf("message = %v", m)
	}
	// A template that runs away is stopped and named.
	env.do(200, "PATCH", "/v1/channels/"+id, map[string]any{"template": map[string]string{
		"title": "t", "body": `{{range .a}}{{range $.a}}{{range $.a}}xxxxxxxxxx{{end}}{{end}}{{end}}`}}, u.Token)
	r = env.request("POST", "/v1/webhook/template/"+token, `{"a":[`+strings.Repeat("1,", 499)+`1]}`, "")
	wantError(t, r, 400, "invalid_payload")
	if !strings.Contains(r.Str("message"), "template.body failed") {
		t.Fatalf("runaway message: %q", r.Str("message"))
	}
	wantError(t, env.request("POST", "/v1/webhook/template/"+token, `not json`, ""), 400, "invalid_payload")
	if total := env.do(200, "GET", "/v1/messages", nil, u.Token).Body["total"]; total != float64(1) {
		t.Fatalf("total = %v, want 1", total)
	}
	got = env.do(200, "PATCH", "/v1/channels/"+id, map[string]any{"template": nil}, u.Token)
	if got.Body["template"] != nil {
		t.Fatalf("template not removed: %s", got.Raw)
	}
}

// TestTemplateWebhookRunaway: a template that doubles a variable until it
// would fill the memory of the host is a 400 naming the field, stores
// nothing, and the server goes on answering: the next webhook on the same
// channel, with an ordinary template, is delivered.
func TestTemplateWebhookRunaway(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("runaway@example.com")
	ch := env.newChannel(u, "hooks")
	id, token := ch["id"].(string), ch["webhook_token"].(string)
	doubling := `{{$x := printf "%v" .}}` + strings.Repeat(`{{$x = print $x $x}}`, 24) + `{{len $x}}`
	env.do(200, "PATCH", "/v1/channels/"+id, map[string]any{"template": map[string]string{"title": "t", "body": doubling}}, u.Token)
	input := `{"a":"` + strings.Repeat("x", 1000) + `"}`
	for range 3 {
		r := env.request("POST", "/v1/webhook/template/"+token, input, "")
		wantError(t, r, 400, "invalid_payload")
		if !strings.HasPrefix(r.Str("message"), "template.body failed: ") || !strings.Contains(r.Str("message"), "1024 KiB") {
			t.Fatalf("message %q, want template.body failed: ... 1024 KiB", r.Str("message"))
		}
	}
	env.do(200, "PATCH", "/v1/channels/"+id, map[string]any{"template": map[string]string{"title": "{{len .a}} bytes", "body": "b"}}, u.Token)
	r := env.do(200, "POST", "/v1/webhook/template/"+token, input, "")
	if m := env.do(200, "GET", "/v1/messages/"+r.Str("id"), nil, u.Token).Body; m["title"] != "1000 bytes" {
		t.Fatalf("message = %v", m)
	}
	if total := env.do(200, "GET", "/v1/messages", nil, u.Token).Body["total"]; total != float64(1) {
		t.Fatalf("total = %v, want 1 (the refused webhooks store nothing)", total)
	}
}
