package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// execHerald runs the real binary once and returns what it printed and its
// exit status, whatever that is.
func execHerald(t *testing.T, env []string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(heraldBin(t), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("herald %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), code
}

// signIn signs in with a password and returns the access token.
func signIn(t *testing.T, p *heraldProc, email, password string) string {
	t.Helper()
	out := p.must(t, 200, "POST", "/v1/auth/local", map[string]string{"email": email, "password": password}, "")
	return out["access_token"].(string)
}

func TestCLIAccountsThroughBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	p := startHerald(t, 30*time.Second, filepath.Join(t.TempDir(), "data"))

	// Without --password-stdin the user is made, on the CLI's plan, and
	// the command says that nobody can sign in with a password yet.
	out, errOut, code := execHerald(t, p.env, "", "user", "add", "op@example.com")
	if code != 0 || !strings.Contains(out, "plan pro: 200 sends a minute per channel") {
		t.Fatalf("user add: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "no password") || !strings.Contains(errOut, "herald user passwd op@example.com") {
		t.Errorf("user add without a password warned %q", errOut)
	}
	if code, _, _ := p.call("POST", "/v1/auth/local", map[string]string{"email": "op@example.com", "password": ""}, ""); code == 200 {
		t.Fatal("a user without a password signed in")
	}

	// user passwd sets it; a second passwd ends the sessions of the first.
	runHerald(t, p.env, "first pass\n", "user", "passwd", "op@example.com")
	old := signIn(t, p, "op@example.com", "first pass")
	p.must(t, 200, "GET", "/v1/auth/me", nil, old)
	out = runHerald(t, p.env, "second pass\n", "user", "passwd", "op@example.com")
	if !strings.Contains(out, "op@example.com") {
		t.Errorf("user passwd printed %q", out)
	}
	p.must(t, 401, "GET", "/v1/auth/me", nil, old)
	p.must(t, 401, "POST", "/v1/auth/local", map[string]string{"email": "op@example.com", "password": "first pass"}, "")
	signIn(t, p, "op@example.com", "second pass")

	// Keys: list shows ids and prefixes, never keys; revoke works at once.
	key := strings.TrimSpace(runHerald(t, p.env, "", "key", "create", "op@example.com", "--name", "backup-script"))
	p.must(t, 200, "GET", "/v1/channels", nil, key)
	list := runHerald(t, p.env, "", "key", "list", "op@example.com")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ID") || strings.Contains(list, key) || !strings.Contains(lines[1], key[:12]) ||
		!strings.Contains(lines[1], "backup-script") {
		t.Fatalf("key list:\n%s", list)
	}
	id := strings.Fields(lines[1])[0]
	if !strings.HasPrefix(id, "key_") {
		t.Fatalf("key list's first column %q is not a key id", id)
	}
	if out := runHerald(t, p.env, "", "key", "revoke", id); !strings.Contains(out, id) || !strings.Contains(out, "op@example.com") {
		t.Errorf("key revoke printed %q", out)
	}
	p.must(t, 401, "GET", "/v1/channels", nil, key)
	if list := runHerald(t, p.env, "", "key", "list", "op@example.com"); strings.Contains(list, id) {
		t.Errorf("key list after revoke still shows %s:\n%s", id, list)
	}

	// Errors name what is missing or wrong, and exit 1.
	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"user", "passwd"}, "missing argument EMAIL"},
		{"", []string{"user", "passwd", "op@example.com"}, "no password on standard input"},
		{"\n", []string{"user", "passwd", "op@example.com"}, "first line is empty"},
		{"x\n", []string{"user", "passwd", "nobody@example.com"}, "no user with email nobody@example.com"},
		{"", []string{"user", "set-plan", "op@example.com"}, "missing argument PLAN"},
		{"", []string{"user", "add"}, "missing argument EMAIL"},
		{"", []string{"key", "list"}, "missing argument EMAIL"},
		{"", []string{"key", "revoke"}, "missing argument ID"},
		{"", []string{"key", "revoke", id}, "no active API key with id " + id},
		{"", []string{"key", "create", "op@example.com"}, "missing --name"},
		{"", []string{"send", "--title", "x"}, "missing argument WEBHOOK_URL"},
		{"", []string{"backup"}, "missing argument FILE"},
		{"", []string{"serve", "--listen", "8080"}, "--listen must be host:port"},
	} {
		_, errOut, code := execHerald(t, p.env, c.stdin, c.args...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("herald %s: exit %d, stderr %q; want exit 1 and %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
	// The failed passwd changed nothing.
	signIn(t, p, "op@example.com", "second pass")

	out, _, code = execHerald(t, p.env, "", "version")
	if code != 0 || !strings.HasPrefix(out, "herald ") || !strings.Contains(out, "commit ") || !strings.Contains(out, "go1.") {
		t.Errorf("version: exit %d, %q", code, out)
	}
}

// decodeLine decodes the JSON object herald printed.
func decodeLine(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(s)), &m); err != nil {
		t.Fatalf("not one JSON object: %q", s)
	}
	return m
}
