package e2e

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sendRun is one herald send --wait running in the background.
type sendRun struct {
	cmd         *exec.Cmd
	out, errOut bytes.Buffer
	done        chan struct{}
	code        int
}

func startSend(t *testing.T, env []string, args ...string) *sendRun {
	t.Helper()
	r := &sendRun{cmd: exec.Command(heraldBin(t), append([]string{"send"}, args...)...), done: make(chan struct{})}
	r.cmd.Env = env
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.errOut
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := r.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			r.code = ee.ExitCode()
		}
		close(r.done)
	}()
	t.Cleanup(func() { _ = r.cmd.Process.Kill(); <-r.done })
	return r
}

func (r *sendRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-r.done:
		return r.code
	case <-time.After(30 * time.Second):
		t.Fatalf("herald send still running after 30 s; stderr %q", r.errOut.String())
		return 0
	}
}

// newestMessage waits for a message titled title in the channel.
func newestMessage(t *testing.T, p *heraldProc, token, channelID, title string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		out := p.must(t, 200, "GET", "/v1/messages?channel_id="+channelID, nil, token)
		for _, m := range out["messages"].([]any) {
			if m := m.(map[string]any); m["title"] == title {
				return m["id"].(string)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no message %q arrived", title)
	return ""
}

func TestCLISendWait(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	p := startHerald(t, 30*time.Second, filepath.Join(t.TempDir(), "data"))
	runHerald(t, p.env, "pw-send-wait\n", "user", "add", "me@example.com", "--password-stdin")
	token := signIn(t, p, "me@example.com", "pw-send-wait")
	ch := p.must(t, 201, "POST", "/v1/channels", map[string]string{"name": "deploys"}, token)
	url, chID := ch["webhook_url"].(string), ch["id"].(string)
	buttons := []string{"--action", "type=button,key=yes,label=Deploy,style=primary",
		"--action", "type=button,key=no,label=Cancel,style=destructive"}

	for _, c := range []struct {
		answer   string
		wantCode int
	}{{"yes", 0}, {"no", 1}} {
		title := "Deploy? " + c.answer
		r := startSend(t, p.env, append([]string{url, "--title", title, "--wait", "--timeout", "30s"}, buttons...)...)
		id := newestMessage(t, p, token, chID, title)
		p.must(t, 200, "POST", "/v1/messages/"+id+"/respond", map[string]string{"action": c.answer}, token)
		if code := r.wait(t); code != c.wantCode {
			t.Errorf("answer %s: exit %d, want %d; stderr %q", c.answer, code, c.wantCode, r.errOut.String())
		}
		got := decodeLine(t, r.out.String())
		res, _ := got["result"].(map[string]any)
		if got["status"] != "submitted" || res["triggered_by"] != c.answer || res["message_id"] != id {
			t.Errorf("answer %s: printed %v", c.answer, got)
		}
		if !strings.Contains(r.errOut.String(), id) {
			t.Errorf("stderr %q does not name the message", r.errOut.String())
		}
	}

	// A form: its fields arrive in the printed answer.
	r := startSend(t, p.env, url, "--title", "Why?", "--wait", "--callback-url", "http://192.0.2.1/hook",
		"--form", "key=report,label=Report", "--field", "key=reason,label=Reason,type=text,required=true",
		"--field", "key=when,label=When,type=select,options=now|tonight")
	id := newestMessage(t, p, token, chID, "Why?")
	p.must(t, 200, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "report",
		"responses": map[string]any{"reason": "disk full", "when": "tonight"}}, token)
	if code := r.wait(t); code != 0 {
		t.Errorf("form: exit %d; stderr %q", code, r.errOut.String())
	}
	res, _ := decodeLine(t, r.out.String())["result"].(map[string]any)
	if resp, _ := res["responses"].(map[string]any); resp["reason"] != "disk full" || resp["when"] != "tonight" {
		t.Errorf("form answer printed %v", res)
	}

	// An approval channel: a rejection is 1, an approval 0.
	me := p.must(t, 200, "GET", "/v1/auth/me", nil, token)
	appr := p.must(t, 201, "POST", "/v1/channels", map[string]string{"name": "prod"}, token)
	p.must(t, 200, "PATCH", "/v1/channels/"+appr["id"].(string), map[string]any{"approval": map[string]any{
		"required_count": 1, "approvers": []string{me["id"].(string)}, "window_seconds": 600}}, token)
	for _, c := range []struct {
		vote, status string
		wantCode     int
	}{{"reject", "rejected", 1}, {"approve", "approved", 0}} {
		title := "Ship it? " + c.vote
		r := startSend(t, p.env, appr["webhook_url"].(string), "--title", title, "--wait")
		id := newestMessage(t, p, token, appr["id"].(string), title)
		p.must(t, 200, "POST", "/v1/messages/"+id+"/respond", map[string]string{"action": c.vote}, token)
		if code := r.wait(t); code != c.wantCode {
			t.Errorf("vote %s: exit %d, want %d; stderr %q", c.vote, code, c.wantCode, r.errOut.String())
		}
		if got := decodeLine(t, r.out.String()); got["approval_status"] != c.status {
			t.Errorf("vote %s: printed %v", c.vote, got)
		}
	}

	// An approval window that closes without a vote: 1, and "expired".
	p.must(t, 200, "PATCH", "/v1/channels/"+appr["id"].(string), map[string]any{"approval": map[string]any{
		"required_count": 1, "approvers": []string{me["id"].(string)}, "window_seconds": 1}}, token)
	out, errOut, code := execHerald(t, p.env, "", "send", appr["webhook_url"].(string), "--title", "Anyone?", "--wait", "--timeout", "20s")
	if code != 1 || decodeLine(t, out)["status"] != "expired" || !strings.Contains(errOut, "expired") {
		t.Errorf("expired approval: exit %d, stdout %q, stderr %q; want 1 and status expired", code, out, errOut)
	}

	// No answer within --timeout: 2.
	_, errOut, code = execHerald(t, p.env, "", append([]string{"send", url, "--title", "Nobody?", "--wait", "--timeout", "1s"}, buttons...)...)
	if code != 2 || !strings.Contains(errOut, "no answer within 1s") {
		t.Errorf("timeout: exit %d, stderr %q; want 2", code, errOut)
	}
	// A send the server refuses: 2 with --wait (a form needs a callback_url), 1 without.
	args := []string{"send", url, "--title", "Form", "--form", "key=f,label=F", "--field", "key=a,label=A,type=text"}
	_, errOut, code = execHerald(t, p.env, "", append(args, "--wait")...)
	if code != 2 || !strings.Contains(errOut, "callback_url") {
		t.Errorf("refused send with --wait: exit %d, stderr %q; want 2 and the server's reason", code, errOut)
	}
	out, _, code = execHerald(t, p.env, "", args...)
	if code != 1 || !strings.Contains(out, "invalid_payload") {
		t.Errorf("refused send: exit %d, stdout %q; want 1 and the server's answer", code, out)
	}
	_, errOut, code = execHerald(t, p.env, "", "send", p.base+"/v1/send/nosuchtoken", "--title", "x", "--wait")
	if code != 2 || !strings.Contains(errOut, "401") {
		t.Errorf("unknown token with --wait: exit %d, stderr %q; want 2", code, errOut)
	}
	_, errOut, code = execHerald(t, p.env, "", "send", url, "--title", "x", "--field", "key=a,label=A,type=text")
	if code != 1 || !strings.Contains(errOut, "--field needs --form") {
		t.Errorf("--field without --form: exit %d, stderr %q", code, errOut)
	}
}

// TestCLIPlanChoice: the 6th herald send in a minute goes through for a
// user the operator added (Pro unless --plan), and is refused with 429 on
// the Free plan, whose limits still hold.
func TestCLIPlanChoice(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	p := startHerald(t, 30*time.Second, filepath.Join(t.TempDir(), "data"))
	for _, c := range []struct {
		email string
		args  []string
		plan  string
		sixth int // exit status of the 6th send
	}{
		{"op@example.com", nil, "pro", 0},
		{"guest@example.com", []string{"--plan", "free"}, "free", 1},
	} {
		out := runHerald(t, p.env, "pw-plans\n", append([]string{"user", "add", c.email, "--password-stdin"}, c.args...)...)
		if !strings.Contains(out, "plan "+c.plan+":") {
			t.Errorf("user add %s printed %q, want plan %s and its limits", c.email, out, c.plan)
		}
		token := signIn(t, p, c.email, "pw-plans")
		url := p.must(t, 201, "POST", "/v1/channels", map[string]string{"name": "cron"}, token)["webhook_url"].(string)
		for i := 1; i <= 6; i++ {
			out, _, code := execHerald(t, p.env, "", "send", url, "--title", "tick")
			want := 0
			if i == 6 {
				want = c.sixth
			}
			if code != want {
				t.Fatalf("%s (%s): send %d exited %d, want %d: %s", c.email, c.plan, i, code, want, out)
			}
			if i == 6 && want != 0 && !strings.Contains(out, "rate_limited") {
				t.Errorf("%s: the 6th send printed %q, want rate_limited", c.email, out)
			}
		}
	}
	if !strings.Contains(p.log.String(), "sign-ups get default_plan") || !strings.Contains(p.log.String(), "herald user add gives") {
		t.Errorf("serve did not log the plans it gives:\n%s", p.log)
	}
}
