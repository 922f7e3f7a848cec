package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
	needTools(t, "the guide", "sh", "curl", "sed")
	script, commands := guideBlocks(t)
	if !strings.Contains(commands, "HERALD=http://127.0.0.1:8080") {
		t.Fatalf("the guide no longer sets HERALD=http://127.0.0.1:8080; update this test:\n%s", commands)
	}
	bin := heraldBin(t)
	srv := startScriptServer(t, bin)
	commands = strings.ReplaceAll(commands, "http://127.0.0.1:8080", srv.base)
	commands = regexp.MustCompile(`\bherald (user|key) `).ReplaceAllString(commands, bin+" $1 ")
	if err := os.WriteFile(filepath.Join(srv.dir, "herald-ups"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := srv.run(t, "the guide", commands)
	got := out
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
		if !strings.Contains(out, want) {
			t.Errorf("the guide's output lacks %s:\n%s", want, out)
		}
	}
}
