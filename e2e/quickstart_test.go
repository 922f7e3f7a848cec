package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// quickStartBlock returns the second sh block of the README's "Quick start
// with curl" section: the commands a newcomer types in a second terminal.
func quickStartBlock(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Quick start with curl\n")
	if !ok {
		t.Fatal(`README.md has no "## Quick start with curl" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1)
	if len(blocks) != 2 {
		t.Fatalf("the quick start has %d sh blocks, want 2 (the server, the commands)", len(blocks))
	}
	return blocks[1][1]
}

// TestQuickStartREADME runs the README's quick start as it stands, in POSIX
// sh (dash where /bin/sh is dash), against herald serve on a port other
// than the default, started the way the README starts it (--listen, no
// base_url): the webhook URL the script gets must lead to that port, or
// step 4 fails. The user it makes is the administrator, and a second poll
// reads already_read, as the README says.
func TestQuickStartREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	needTools(t, "the quick start", "sh", "curl", "sed")
	script := quickStartBlock(t)
	if !strings.Contains(script, "http://127.0.0.1:8080") || !strings.Contains(script, "go run . ") {
		t.Fatalf("the quick start no longer names http://127.0.0.1:8080 and go run; update this test:\n%s", script)
	}
	srv := startScriptServer(t, heraldBin(t))
	base := srv.base
	script = strings.ReplaceAll(script, "http://127.0.0.1:8080", base)
	script = strings.ReplaceAll(script, "go run . ", heraldBin(t)+" ")
	out := srv.run(t, "the quick start", script)
	for _, want := range []string{"me@example.com is an administrator", `{"ok":true,"id":"msg_`, `{"ok":true,"status":"submitted"}`,
		`"status":"submitted"`, `"triggered_by":"yes"`, `{"status":"already_read"}`,
		`"event":"message"`, `"title":"Backup","message":"42 GB in 3 minutes"`, `"tags":["floppy_disk"]`} {
		if !strings.Contains(out, want) {
			t.Errorf("the quick start's output lacks %s:\n%s", want, out)
		}
	}
	// The account it made reaches the admin pages.
	c := &http.Client{Timeout: 10 * time.Second}
	sess := testkit.Do(t, c, "POST", base+"/v1/auth/local", map[string]string{"email": "me@example.com", "password": "correct horse battery"}, "")
	if sess.Status != 200 {
		t.Fatalf("signing in as the quick start's user: %d %v", sess.Status, sess.Body)
	}
	token := sess.Str("access_token")
	if me := testkit.Do(t, c, "GET", base+"/v1/auth/me", nil, token); me.Status != 200 || me.Body["is_admin"] != true {
		t.Errorf("the quick start's user: %d %v, want is_admin true", me.Status, me.Body)
	}
	if users := testkit.Do(t, c, "GET", base+"/v1/admin/users", nil, token); users.Status != 200 {
		t.Errorf("GET /v1/admin/users as the quick start's user: %d %v, want 200", users.Status, users.Body)
	}
	log := srv.logs.String()
	for _, want := range []string{"base_url=" + base, "no users yet", "herald user add EMAIL --password-stdin", "the first user is the administrator", "plans"} {
		if !strings.Contains(log, want) {
			t.Errorf("the server log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "names this machine only") {
		t.Errorf("the server warned about base_url although it listens on loopback:\n%s", log)
	}
}
