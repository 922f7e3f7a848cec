package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestLogsHideMistypedTokens sends a real webhook token in paths that match
// no route, as a typo would, and checks that no log line carries it.
func TestLogsHideMistypedTokens(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("typo@example.com")
	ch := env.newChannel(u, "typos")
	token := strings.TrimPrefix(ch["webhook_url"].(string), env.srv.URL+"/v1/send/")
	if token == "" || strings.Contains(token, "/") {
		t.Fatalf("no token in %v", ch["webhook_url"])
	}
	paths := []string{
		"/v1/webhook/" + token,
		"//v1/send/" + token,
		"/v1//send/" + token,
		"/V1/send/" + token,
		"/v1/send/" + token + ".json",
		"/v1/sned/" + token,
		"/" + token + "/x/y", // (/<token> itself is the ntfy door: TestNtfyPublishKeepsTokenOutOfLogs)
	}
	for _, p := range paths {
		r := env.request("POST", p, map[string]string{"title": "x"}, "")
		if r.Status == 200 {
			t.Errorf("POST %s: 200, want a refusal", p)
		}
	}
	// A matched route with an id keeps the id: it is not a secret.
	env.request("GET", "/v1/messages/msg_0123456789ABCDEFabcdef", nil, u.Token)

	logs := env.opsLogs()
	if strings.Contains(logs, token) {
		t.Fatalf("the log holds the webhook token:\n%s", grepLines(logs, token))
	}
	if got := strings.Count(logs, "REDACTED"); got < len(paths) {
		t.Errorf("%d REDACTED in the log, want at least %d:\n%s", got, len(paths), logs)
	}
	if !strings.Contains(logs, "path=/v1/messages/msg_0123456789ABCDEFabcdef") {
		t.Errorf("an id was redacted:\n%s", grepLines(logs, "/v1/messages/"))
	}
}

// TestLogsOptionsStatus: an OPTIONS request, answered by the router without
// a body, is logged with the status the client got.
func TestLogsOptionsStatus(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	r := env.request(http.MethodOptions, "/v1/channels", nil, "")
	if r.Status != 200 {
		t.Fatalf("OPTIONS status %d", r.Status)
	}
	logs := env.opsLogs()
	line := grepLines(logs, "method=OPTIONS")
	if !strings.Contains(line, "status=200") {
		t.Fatalf("OPTIONS logged as %q, want status=200", line)
	}
}

func TestRedactPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/v1/send/short":                           "/v1/send/REDACTED",
		"/v1/send/":                                "/v1/send/",
		"/v1/webhook/github/abc":                   "/v1/webhook/github/REDACTED",
		"/v1/webhook/Ab3defghijklmnopqrst":         "/v1/webhook/REDACTED",
		"/v1/channels/ch_Ab3defghijklmnopqrstuvwx": "/v1/channels/ch_Ab3defghijklmnopqrstuvwx",
		"/v1/push/vapid-public-key":                "/v1/push/vapid-public-key",
		"/x/pk_live_Ab3defghijklmnopqrstuvwx":      "/x/REDACTED",
		"/a.b/Ab3defghijklmnopqr.txt":              "/a.b/REDACTED",
	} {
		if got := redactPath(in); got != want {
			t.Errorf("redactPath(%q) = %q, want %q", in, got, want)
		}
	}
}
