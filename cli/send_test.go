package cli

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestCLISendWaitUnanswerable: herald send --wait on a message nothing can
// answer (no button, no form, no approval rule) stops at its first poll
// with exit 2 and a message saying why and what to do, instead of waiting
// out the default hour. The message is sent all the same.
func TestCLISendWaitUnanswerable(t *testing.T) {
	t.Parallel()
	env := newCLIEnv(t)
	base, _ := serveInProcess(t, env)
	token, webhook := cliOwner(t, env, base)
	for _, extra := range [][]string{nil, {"--action", "type=url,label=Logs,value=https://ci.example.com/run/7"}} {
		start := time.Now()
		out, errOut, err := runCLI(t, env, "", append([]string{"send", webhook, "--title", "FYI", "--wait"}, extra...)...)
		code, _ := exitCode(err)
		if code != 2 || !errors.Is(err, errUnanswerable) || out != "" {
			t.Fatalf("send --wait %v: exit %d, %v, stdout %q; want exit 2 saying nothing can answer it", extra, code, err, out)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("send --wait %v took %s to give up, want its first poll", extra, took)
		}
		for _, want := range []string{"no button or form", "no approval rule", "--action type=button", "without --wait"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
		if !strings.Contains(errOut, "sent msg_") {
			t.Errorf("stderr %q does not name the message sent", errOut)
		}
	}
	_, msgs := cliHTTP(t, "GET", base+"/v1/messages", nil, token)
	if list, _ := msgs["messages"].([]any); len(list) != 2 {
		t.Errorf("%d messages stored, want the 2 sent", len(list))
	}
}

// TestCLISendHidesToken: what herald send prints when a request fails never
// holds the webhook token: not the send's error, not the last poll's error
// in the --timeout message, not a URL refused for --wait.
func TestCLISendHidesToken(t *testing.T) {
	t.Parallel()
	const token = "Tok3nTok3nTok3nTok3nTok3nTok3nXY"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"ok":true,"id":"msg_1","muted":false}`))
			return
		}
		// Every poll: the connection drops, so the client's error names the URL.
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // nothing listens there any more

	env := newCLIEnv(t)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"a poll that fails until --timeout", []string{"send", srv.URL + "/v1/send/" + token, "--title", "x", "--wait", "--timeout", "2s",
			"--action", "type=button,key=ok,label=OK"}, "no answer within 2s (last poll: Get \"" + srv.URL + "/v1/callback/REDACTED/msg_1\""},
		{"a send that cannot connect", []string{"send", closed.URL + "/v1/send/" + token, "--title", "x"}, "/v1/send/REDACTED"},
		{"a bad URL for --wait", []string{"send", closed.URL + "/v1/sned/" + token, "--title", "x", "--wait"}, "/v1/sned/REDACTED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, err := runCLI(t, env, "", c.args...)
			if err == nil {
				t.Fatalf("succeeded: %q", out)
			}
			all := err.Error() + out + errOut
			if strings.Contains(all, token[:16]) {
				t.Errorf("the token is printed: %q", all)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q lacks %q", err, c.want)
			}
		})
	}
}

// TestCLISendHelpExplainsForms: the help says why a form needs
// --callback-url even with --wait, and what --wait needs to answer it.
func TestCLISendHelpExplainsForms(t *testing.T) {
	t.Parallel()
	out := mustCLI(t, newCLIEnv(t), "", "send", "--help")
	for _, want := range []string{"A form needs --callback-url, even with --wait", "signed POST, retried until it arrives",
		"only once", "--wait still polls the form's answer", "buttons alone\nneed no --callback-url",
		"required with --form, even with --wait", "a message nothing can answer ends the\nwait then with exit 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("send --help lacks %q:\n%s", want, out)
		}
	}
}
