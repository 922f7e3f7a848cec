package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// guideBlocks returns the sh blocks of docs/urgent-alerts.md: the script
// (the block that starts with #!/bin/sh) and the commands, in order.
func guideBlocks(t *testing.T) (script, commands string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "urgent-alerts.md"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, b := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		if strings.HasPrefix(b[1], "#!/bin/sh\n") {
			script = b[1]
			continue
		}
		cmds = append(cmds, b[1])
	}
	if script == "" || len(cmds) < 6 {
		t.Fatalf("docs/urgent-alerts.md has %d command blocks and script %t; has its form changed?", len(cmds), script != "")
	}
	return script, strings.Join(cmds, "\n")
}

// TestUrgentAlertsGuide runs docs/urgent-alerts.md as it stands, in POSIX
// sh, against herald serve: the users, the channel and its urgent policy,
// Bob accepting the escalation, the NUT script on battery and back on
// mains (acknowledged first, then cancelled by the sender), the polls, and
// quiet hours. Each answer the guide shows in a comment must come back.
func TestUrgentAlertsGuide(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for _, tool := range []string{"sh", "curl", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("the guide needs %s: %v", tool, err)
			}
			t.Skipf("the guide needs %s: %v", tool, err)
		}
	}
	script, commands := guideBlocks(t)
	bin := heraldBin(t)
	addr := testkit.FreeAddr(t)
	base := "http://" + addr
	if !strings.Contains(commands, "HERALD=http://127.0.0.1:8080") {
		t.Fatalf("the guide no longer sets HERALD=http://127.0.0.1:8080; update this test:\n%s", commands)
	}
	commands = strings.ReplaceAll(commands, "http://127.0.0.1:8080", base)
	commands = regexp.MustCompile(`\bherald (user|key) `).ReplaceAllString(commands, bin+" $1 ")

	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HERALD_") {
			env = append(env, kv)
		}
	}
	env = append(env, "HERALD_DATA_DIR="+filepath.Join(t.TempDir(), "data"))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "herald-ups"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	logs := &testkit.SyncBuffer{}
	srv := exec.Command(bin, "serve", "--listen", addr)
	srv.Dir, srv.Env, srv.Stdout, srv.Stderr = dir, env, logs, logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = srv.Wait(); close(exited) }()
	t.Cleanup(func() { _ = srv.Process.Kill(); <-exited })
	testkit.WaitHealthy(t, base, exited, 30*time.Second, logs)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sh := exec.CommandContext(ctx, "sh", "-eu", "-c", commands)
	sh.Dir, sh.Env = dir, env
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("the guide failed: %v\n%s\nserver log:\n%s", err, out, logs)
	}
	got := string(out)
	// In the guide's order: each must come after the one before.
	for _, want := range []string{
		`"urgent":{"repeat_seconds":120,"expire_seconds":10800,"escalate_after_seconds":600,"escalation":["bob@example.com"]}`,
		`"state":"accepted"`,
		`{"alert":{"state":"active","repeats":0,"repeat_seconds":120,"level":0,"alerted":[{`,
		`{"alert_state":"acknowledged","ok":true,"status":"pending"}`,
		`{"alert":{"state":"acknowledged"`,
		`"error":"alert_closed"`,
		`{"ok":true,"id":"msg_`,
		`{"alert":{"state":"cancelled"`,
		`{"ok":true,"id":"msg_`,
		`{"alert":{"state":"cancelled"`,
		`{"enabled":true,"start":"22:00","end":"07:00","time_zone":"Europe/Berlin","mode":"hold"}`,
	} {
		i := strings.Index(got, want)
		if i < 0 {
			t.Fatalf("the guide's output lacks %s (or has it too early):\n%s", want, out)
		}
		got = got[i+len(want):]
	}
	for _, want := range []string{`"role":"escalation"`, `"name":"Ann"`, `"device":"key_`, `"cancelled_by":"sender"`,
		`"cancelled_by":"sender","resolved_at":`, `"ok":true}`, `"status":"pending"}`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the guide's output lacks %s:\n%s", want, out)
		}
	}
}
