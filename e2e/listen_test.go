package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// listenProc is one run of herald listen with its output collected.
type listenProc struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	lines  []string // stdout, line by line
	stderr *testkit.SyncBuffer
	exited chan struct{}
}

func startListen(t *testing.T, env []string, args ...string) *listenProc {
	t.Helper()
	l := &listenProc{stderr: &testkit.SyncBuffer{}, exited: make(chan struct{})}
	l.cmd = exec.Command(heraldBin(t), append([]string{"listen"}, args...)...)
	l.cmd.Dir = t.TempDir()
	l.cmd.Env = env
	l.cmd.Stderr = l.stderr
	out, err := l.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			l.mu.Lock()
			l.lines = append(l.lines, sc.Text())
			l.mu.Unlock()
		}
		_ = l.cmd.Wait()
		close(l.exited)
	}()
	t.Cleanup(func() {
		_ = l.cmd.Process.Kill()
		<-l.exited
		if t.Failed() {
			t.Logf("herald listen %v stderr:\n%s", args, l.stderr)
		}
	})
	return l
}

// waitFor polls until cond holds on what listen printed (stdout lines,
// stderr), or fails after within.
func (l *listenProc) waitFor(t *testing.T, within time.Duration, what string, cond func(lines []string, stderr string) bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		l.mu.Lock()
		lines := append([]string(nil), l.lines...)
		l.mu.Unlock()
		if cond(lines, l.stderr.String()) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("herald listen: no %s within %s; stdout %q", what, within, lines)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (l *listenProc) connected(t *testing.T, n int) {
	t.Helper()
	l.waitFor(t, 30*time.Second, "connection", func(_ []string, stderr string) bool {
		return strings.Count(stderr, "connected to") >= n
	})
}

// restartHerald starts herald serve again over the same data and address,
// so a client that follows the old process finds the new one.
func restartHerald(t *testing.T, old *heraldProc) *heraldProc {
	t.Helper()
	p := &heraldProc{base: old.base, env: old.env}
	p.start(t, 60*time.Second)
	return p
}

// TestListenAcrossRestart runs herald listen (printing, and with --exec and
// --channel) against a real herald serve that is killed and started again:
// every message sent before, during the reconnect and after comes out once,
// in order; herald respond answers one; a bad key stops listen with an
// error.
func TestListenAcrossRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dataDir := t.TempDir()
	srv := startHerald(t, 60*time.Second, dataDir)
	runHerald(t, srv.env, "pw-listen\n", "user", "add", "listen@example.com", "--password-stdin")
	key := strings.TrimSpace(runHerald(t, srv.env, "", "key", "create", "listen@example.com", "--name", "listen"))
	ch := srv.must(t, 201, "POST", "/v1/channels", map[string]string{"name": "ops"}, key)
	other := srv.must(t, 201, "POST", "/v1/channels", map[string]string{"name": "noise"}, key)
	hook, otherHook := "/v1/send/"+ch["webhook_token"].(string), "/v1/send/"+other["webhook_token"].(string)

	env := append(os.Environ(), "HERALD_SERVER="+srv.base, "HERALD_TOKEN="+key)
	printer := startListen(t, env)
	out := filepath.Join(t.TempDir(), "exec.txt")
	runner := startListen(t, env, "--channel", ch["id"].(string),
		"--exec", `printf '%s|%s|%s|%s\n' "$HERALD_ID" "$HERALD_TITLE" "$HERALD_PRIORITY" "$HERALD_CHANNEL_ID" >> `+out)
	printer.connected(t, 1)
	runner.connected(t, 1)

	var sent []string
	send := func(path, title string) string {
		m := srv.must(t, 200, "POST", path, map[string]any{"title": title, "priority": "high",
			"actions": []map[string]string{{"type": "button", "key": "ack", "label": "Ack"}}}, "")
		return m["id"].(string)
	}
	for i := range 3 {
		sent = append(sent, send(hook, "before "+string(rune('a'+i))))
	}
	noise := send(otherHook, "other channel")
	// A listener that has seen no message yet still resumes where it
	// started: the stream's first id tells it.
	late := startListen(t, env)
	late.connected(t, 1)

	// A crash, then the server is back on the same address and data. The
	// messages sent at once after the restart are usually committed while
	// the listeners are still waiting to reconnect.
	srv.kill(t)
	// Down long enough that the listeners back off for seconds: the
	// messages sent right after the restart land before they reconnect,
	// so they must come from the replay after Last-Event-ID.
	time.Sleep(3 * time.Second)
	srv = restartHerald(t, srv)
	for i := range 3 {
		sent = append(sent, send(hook, "after "+string(rune('a'+i))))
	}
	printer.connected(t, 2)
	runner.connected(t, 2)
	late.connected(t, 2)
	for i := range 2 {
		sent = append(sent, send(hook, "later "+string(rune('a'+i))))
	}

	wantPrinted := append(append(append([]string(nil), sent[:3]...), noise), sent[3:]...)
	printer.waitFor(t, 30*time.Second, "message", func(lines []string, _ string) bool { return len(lines) >= len(wantPrinted) })
	time.Sleep(500 * time.Millisecond) // a repeat would show up now
	printer.mu.Lock()
	lines := append([]string(nil), printer.lines...)
	printer.mu.Unlock()
	var got []string
	for _, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("printed line is not JSON: %q", line)
		}
		got = append(got, m["id"].(string))
	}
	if strings.Join(got, ",") != strings.Join(wantPrinted, ",") {
		t.Fatalf("printed ids\n%v\nwant each once, in order\n%v", got, wantPrinted)
	}

	late.waitFor(t, 30*time.Second, "message", func(lines []string, _ string) bool { return len(lines) >= len(sent)-3 })
	late.mu.Lock()
	got = got[:0]
	for _, line := range late.lines {
		var m map[string]any
		_ = json.Unmarshal([]byte(line), &m)
		got = append(got, fmt.Sprint(m["id"]))
	}
	late.mu.Unlock()
	if strings.Join(got, ",") != strings.Join(sent[3:], ",") {
		t.Fatalf("listener started before the crash printed\n%v\nwant\n%v", got, sent[3:])
	}

	runner.waitFor(t, 30*time.Second, "exec output", func(_ []string, _ string) bool {
		b, _ := os.ReadFile(out)
		return strings.Count(string(b), "\n") >= len(sent)
	})
	time.Sleep(500 * time.Millisecond)
	b, _ := os.ReadFile(out)
	execLines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(execLines) != len(sent) {
		t.Fatalf("--exec ran %d times, want %d (the other channel's message filtered out):\n%s", len(execLines), len(sent), b)
	}
	for i, line := range execLines {
		f := strings.Split(line, "|")
		if len(f) != 4 || f[0] != sent[i] || f[2] != "high" || f[3] != ch["id"] || !strings.Contains(f[1], " ") {
			t.Errorf("--exec line %d = %q, want id %s with its title, priority and channel", i, line, sent[i])
		}
	}

	// herald respond answers the message as a tap would.
	res := runHerald(t, env, "", "respond", sent[0], "ack")
	if !strings.Contains(res, `"submitted"`) {
		t.Fatalf("respond printed %q", res)
	}
	m := srv.must(t, 200, "GET", "/v1/messages/"+sent[0], nil, key)
	if resp, _ := m["response"].(map[string]any); resp == nil || resp["triggered_by"] != "ack" {
		t.Fatalf("message after respond: %v", m)
	}

	// A key that does not work is an error, not an endless retry.
	bad := exec.Command(heraldBin(t), "listen", "--server", srv.base, "--token", "pk_live_nope")
	bad.Env = os.Environ()
	done := make(chan error, 1)
	var combined []byte
	go func() { var err error; combined, err = bad.CombinedOutput(); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(string(combined), "401") {
			t.Fatalf("listen with a bad key: %v, %s; want a non-zero exit naming 401", err, combined)
		}
	case <-time.After(20 * time.Second):
		_ = bad.Process.Kill()
		t.Fatal("listen with a bad key is still running")
	}
}
