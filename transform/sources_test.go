package transform

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture reads a sample payload from testdata (see testdata/SOURCES.md).
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSourceFixtures runs each platform's published sample payload
// through its transformer.
func TestSourceFixtures(t *testing.T) {
	cases := []struct {
		source, file string
		hdr          []string
		title, url   string
		priority     string
		body         []string // substrings of the body
	}{
		{"alertmanager", "alertmanager_exec_success.json", nil, "[FIRING:1] Alertmanager", "http://am", "normal",
			[]string{"firing", "`Message=message`"}},
		{"alertmanager", "alertmanager_exec_scope.json", nil, "[RESOLVED] Alertmanager", "http://am", "low",
			[]string{"resolved notification with no alerts"}},
		{"grafana", "grafana_docs_firing.json", nil, "[FIRING:2]  (blue)", "https://play.grafana.org/alerting/1afz29v7z/edit", "normal",
			[]string{"**High memory usage** firing", "This alert was triggered for zone us-1", "`team=blue` `zone=us-1`", "**High CPU usage** firing"}},
		{"alertmanager", "grafana_docs_firing.json", nil, "[FIRING:2] My Super Webhook", "https://play.grafana.org/alerting/1afz29v7z/edit", "normal",
			[]string{"**High memory usage** firing"}},
		{"gitea", "gitea_docs_push.json", []string{"X-Gitea-Event", "push"}, "[gitea/webhooks] push to develop",
			"http://localhost:3000/gitea/webhooks/compare/28e1879d029cb852e4844d9c718537df08844e03...bffeb74224043ba2feb48d137756c8a9331c449a", "normal",
			[]string{"**gitea** pushed 1 commit(s) to `develop`", "- `bffeb74` Webhooks Yay!"}},
		{"gitea", "gitea_push.json", []string{"X-Gitea-Event", "push"}, "[test/repo] push to test", "http://localhost:3000/test/repo", "normal",
			[]string{"**user1** pushed 2 commit(s) to `test`"}},
		{"forgejo", "gitea_pull_request.json", []string{"X-Forgejo-Event", "pull_request", "X-Gitea-Event", "pull_request"}, "[test/repo] PR #12 opened",
			"http://localhost:3000/test/repo/pulls/12", "normal", []string{"**Fix bug** by user1"}},
		{"gitea", "gitea_issues.json", []string{"X-Gitea-Event", "issues"}, "[test/repo] issue #2 updated",
			"http://localhost:3000/test/repo/issues/2", "normal", []string{"**crash** by user1"}},
		{"gitea", "gitea_release.json", []string{"X-Gitea-Event", "release"}, "[test/repo] release v1.0 published",
			"http://localhost:3000/test/repo/releases/tag/v1.0", "normal", []string{"**First stable release** (v1.0)"}},
		{"gitea", "gitea_workflow_run.json", []string{"X-Gitea-Event", "workflow_run"}, "Build success",
			"https://gitea.example/actions/runs/1", "normal", []string{"Workflow **Build**: success"}},
		{"forgejo", "gitea_workflow_job.json", []string{"X-Forgejo-Event", "workflow_job"}, "Test success",
			"https://gitea.example/actions/runs/1/jobs/1", "normal", []string{"Job **Test**: success"}},
		{"gitlab", "gitlab_push.json", []string{"X-Gitlab-Event", "Push Hook"}, "[mike/diaspora] push to master",
			"http://example.com/mike/diaspora/-/compare/95790bf891e76fee5e1747ab589903a6a1f80f22...da1560886d4f094c3e6c9ef40349f7d38b5d27d7", "normal",
			[]string{"**John Smith** pushed 4 commit(s) to `master`", "- `b6568db` Merge branch 'some-feature' into 'master'", "- `da15608` fixed readme"}},
		{"gitlab", "gitlab_merge_request.json", []string{"X-Gitlab-Event", "Merge Request Hook"}, "[gitlabhq/gitlab-test] MR !1 open",
			"http://example.com/diaspora/merge_requests/1", "normal", []string{"**MS-Viewport** by User1", "`ms-viewport` → `master`"}},
		{"gitlab", "gitlab_pipeline.json", []string{"X-Gitlab-Event", "Pipeline Hook"}, "[gitlab-org/gitlab-test] pipeline passed on master",
			"http://192.168.64.1:3005/gitlab-org/gitlab-test/-/pipelines/31", "normal", []string{"Pipeline #31 on `master`: **passed** in 63s, started by User1"}},
	}
	for _, c := range cases {
		t.Run(c.source+" "+c.file, func(t *testing.T) {
			m, err := Transform(c.source, Secrets{}, headers(c.hdr...), fixture(t, c.file))
			if err != nil || m == nil {
				t.Fatalf("Transform = %+v, %v", m, err)
			}
			if m.Title != c.title || m.URL != c.url || m.Priority != c.priority {
				t.Errorf("title %q url %q priority %q; want %q %q %q", m.Title, m.URL, m.Priority, c.title, c.url, c.priority)
			}
			for _, want := range c.body {
				if !strings.Contains(m.Body, want) {
					t.Errorf("body %q lacks %q", m.Body, want)
				}
			}
		})
	}
}

// TestAlertPriorityAndStatus: severity decides a firing group's priority;
// a resolved group is low; an Uptime Kuma monitor going down is high.
func TestAlertPriorityAndStatus(t *testing.T) {
	body := strings.Replace(string(fixture(t, "alertmanager_exec_success.json")), `"labels":{"Message":"message"}`,
		`"labels":{"Message":"message","severity":"critical","alertname":"DiskFull"}`, 1)
	m, err := Transform("alertmanager", Secrets{}, headers(), []byte(body))
	if err != nil || m.Priority != "high" || !strings.Contains(m.Body, "**DiskFull** firing (critical)") {
		t.Fatalf("critical alert: %+v, %v", m, err)
	}
	down := `{"heartbeat":{"status":0,"msg":"connect ECONNREFUSED","time":"2024-09-24 23:51:35.527"},"monitor":{"name":"NAS","url":"https://nas.lan"},"msg":"[NAS] [🔴 Down] connect ECONNREFUSED"}`
	m, err = Transform("uptimekuma", Secrets{}, headers(), []byte(down))
	if err != nil || m.Title != "NAS is down" || m.Priority != "high" || m.URL != "https://nas.lan" || !strings.Contains(m.Body, "ECONNREFUSED") {
		t.Fatalf("uptime kuma down: %+v, %v", m, err)
	}
	up := strings.Replace(down, `"status":0`, `"status":1`, 1)
	if m, err = Transform("uptimekuma", Secrets{}, headers(), []byte(up)); err != nil || m.Title != "NAS is up" || m.Priority != "normal" {
		t.Fatalf("uptime kuma up: %+v, %v", m, err)
	}
	test := `{"heartbeat":null,"monitor":null,"msg":"Uptime Kuma Testing"}`
	if m, err = Transform("uptimekuma", Secrets{}, headers(), []byte(test)); err != nil || m.Body != "Uptime Kuma Testing" {
		t.Fatalf("uptime kuma test button: %+v, %v", m, err)
	}
	if m, err = Transform("gitea", Secrets{}, headers("X-Gitea-Event", "create"), fixture(t, "gitea_push.json")); err != nil || m != nil {
		t.Fatalf("unhandled gitea event: %+v, %v; want ignored", m, err)
	}
	run := strings.Replace(string(fixture(t, "gitea_workflow_run.json")), `"conclusion": "success"`, `"conclusion": "failure"`, 1)
	if m, err = Transform("gitea", Secrets{}, headers("X-Gitea-Event", "workflow_run"), []byte(run)); err != nil || m.Priority != "high" || m.Title != "Build failure" {
		t.Fatalf("failed gitea run: %+v, %v", m, err)
	}
	queued := strings.Replace(string(fixture(t, "gitea_workflow_job.json")), `"action": "completed"`, `"action": "queued"`, 1)
	if m, err = Transform("gitea", Secrets{}, headers("X-Gitea-Event", "workflow_job"), []byte(queued)); err != nil || m != nil {
		t.Fatalf("queued gitea job: %+v, %v; want ignored", m, err)
	}
}

// TestSourceSecrets: with a source secret each platform's credential must
// be present and right; without one nothing is checked.
func TestSourceSecrets(t *testing.T) {
	const secret = "s3cret-value"
	body := fixture(t, "gitea_docs_push.json")
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	sig := hex.EncodeToString(mac.Sum(nil))
	basic := func(user, pass string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	}
	cases := []struct {
		source string
		good   []string
		bad    [][]string
	}{
		{"gitea", []string{"X-Gitea-Event", "push", "X-Gitea-Signature", sig},
			[][]string{{"X-Gitea-Event", "push"}, {"X-Gitea-Event", "push", "X-Gitea-Signature", strings.Repeat("0", 64)}}},
		{"forgejo", []string{"X-Forgejo-Event", "push", "X-Forgejo-Signature", sig},
			[][]string{{"X-Forgejo-Event", "push", "X-Forgejo-Signature", "zz"}}},
		{"gitlab", []string{"X-Gitlab-Token", secret},
			[][]string{{}, {"X-Gitlab-Token", secret + "x"}, {"X-Gitlab-Token", ""}}},
		{"alertmanager", []string{"Authorization", "Bearer " + secret},
			[][]string{{}, {"Authorization", "Bearer nope"}, {"Authorization", basic("u", "nope")}, {"Authorization", "Basic !!"}}},
		{"grafana", []string{"Authorization", basic("grafana", secret)},
			[][]string{{"Authorization", basic(secret, "")}}},
		{"uptimekuma", []string{"Authorization", "Bearer " + secret},
			[][]string{{"Authorization", secret}}},
	}
	for _, c := range cases {
		t.Run(c.source, func(t *testing.T) {
			if _, err := Transform(c.source, Secrets{Source: secret}, headers(c.good...), body); err != nil {
				t.Fatalf("right credential refused: %v", err)
			}
			for _, bad := range c.bad {
				if _, err := Transform(c.source, Secrets{Source: secret}, headers(bad...), body); !errors.Is(err, ErrBadSignature) {
					t.Errorf("headers %q: err = %v, want ErrBadSignature", bad, err)
				}
			}
			if _, err := Transform(c.source, Secrets{}, headers(c.bad[0]...), body); errors.Is(err, ErrBadSignature) {
				t.Errorf("no secret set, yet %v", err)
			}
		})
	}
}
