package cli

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/docs"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
)

// TestMain checks every request the tests send through testkit against the
// OpenAPI description, and announces the tests skipped for want of a tool.
func TestMain(m *testing.M) {
	contract, err := testkit.LoadContract(docs.OpenAPI)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	stop := testkit.CheckCalls(contract)
	code := m.Run()
	stop()
	testkit.AnnounceSkips("github.com/heraldhq/herald/cli")
	os.Exit(code)
}

var cliKeyRe = regexp.MustCompile(`^pk_live_[0-9A-Za-z]{32}$`)

// cliEnv is the environment a CLI run sees: only what the test sets.
type cliEnv map[string]string

func (e cliEnv) get(k string) string { return e[k] }

// newCLIEnv points HERALD_DATA_DIR at a fresh directory.
func newCLIEnv(t *testing.T) cliEnv {
	t.Helper()
	return cliEnv{"HERALD_DATA_DIR": t.TempDir()}
}

// runCLI runs one herald command line and returns its output.
func runCLI(t *testing.T, env cliEnv, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := NewRoot(strings.NewReader(stdin), &out, &errOut, env.get, Build{})
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// mustCLI is runCLI that fails the test on an error.
func mustCLI(t *testing.T, env cliEnv, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := runCLI(t, env, stdin, args...)
	if err != nil {
		t.Fatalf("herald %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// openCLIStore opens the database the CLI uses, beside it.
func openCLIStore(t *testing.T, env cliEnv) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(env["HERALD_DATA_DIR"], "herald.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestCLIUsers(t *testing.T) {
	t.Parallel()
	env := newCLIEnv(t)
	ctx := context.Background()

	out := mustCLI(t, env, "s3cret pass\n", "user", "add", "a@example.com", "--name", "A", "--password-stdin", "--plan", "pro")
	if !strings.Contains(out, "a@example.com") || !strings.Contains(out, "pro") || !strings.Contains(out, "usr_") {
		t.Errorf("user add printed %q", out)
	}
	mustCLI(t, env, "", "user", "add", "b@example.com", "--admin")

	list := mustCLI(t, env, "", "user", "list")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != 3 {
		t.Fatalf("user list has %d lines, want header + 2:\n%s", len(lines), list)
	}
	if f := strings.Fields(lines[1]); len(f) < 5 || f[1] != "a@example.com" || f[2] != "A" || f[3] != "pro" || f[4] != "true" {
		t.Errorf("user list line for a (the first user: an administrator) = %q", lines[1])
	}
	if f := strings.Fields(lines[2]); len(f) < 4 || f[1] != "b@example.com" || f[2] != "pro" || f[3] != "true" {
		t.Errorf("user list line for b (the CLI's plan, pro; admin) = %q", lines[2])
	}

	for _, c := range []struct {
		name, stdin string
		args        []string
		inErr       string
	}{
		{"duplicate email", "", []string{"user", "add", "A@example.com"}, "exists"},
		{"bad plan", "", []string{"user", "add", "c@example.com", "--plan", "gold"}, "plan"},
		{"not an email", "", []string{"user", "add", "nobody"}, "email"},
		{"no password on stdin", "", []string{"user", "add", "d@example.com", "--password-stdin"}, "password"},
		{"set-plan bad plan", "", []string{"user", "set-plan", "a@example.com", "gold"}, "plan"},
		{"set-plan unknown user", "", []string{"user", "set-plan", "x@example.com", "free"}, "x@example.com"},
		{"delete unknown user", "", []string{"user", "delete", "x@example.com"}, "x@example.com"},
		{"missing argument", "", []string{"user", "add"}, "arg"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := runCLI(t, env, c.stdin, c.args...)
			if err == nil {
				t.Fatalf("herald %s succeeded: %q", strings.Join(c.args, " "), out)
			}
			if !strings.Contains(err.Error(), c.inErr) {
				t.Errorf("error %q does not mention %q", err, c.inErr)
			}
		})
	}

	st := openCLIStore(t, env)
	all, err := st.ListUsers(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("after the failed commands: %d users, %v; want 2", len(all), err)
	}
	a, err := st.UserByEmail(ctx, "a@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "A" || a.Plan != "pro" || !a.IsAdmin || a.PasswordHash == "" || strings.Contains(a.PasswordHash, "s3cret") {
		t.Errorf("stored user a = %+v", a)
	}

	mustCLI(t, env, "", "user", "set-plan", "a@example.com", "free")
	if a, err := st.UserByEmail(ctx, "a@example.com"); err != nil || a.Plan != "free" {
		t.Errorf("after set-plan: %+v, %v", a, err)
	}

	mustCLI(t, env, "", "user", "delete", "b@example.com")
	if _, err := st.UserByEmail(ctx, "b@example.com"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after delete: %v, want ErrNotFound", err)
	}
	if list := mustCLI(t, env, "", "user", "list"); strings.Contains(list, "b@example.com") || !strings.Contains(list, "a@example.com") {
		t.Errorf("user list after delete:\n%s", list)
	}
}

func TestCLIKeyBackupVersion(t *testing.T) {
	t.Parallel()
	env := newCLIEnv(t)
	ctx := context.Background()
	mustCLI(t, env, "", "user", "add", "a@example.com")

	out := mustCLI(t, env, "", "key", "create", "a@example.com", "--name", "ci")
	key := strings.TrimSpace(out)
	if !cliKeyRe.MatchString(key) || len(key) != 40 {
		t.Fatalf("key create printed %q, want one 40-character pk_live_ key", out)
	}
	st := openCLIStore(t, env)
	k, u, err := st.APIKeyByHash(ctx, store.HashToken(key))
	if err != nil {
		t.Fatalf("APIKeyByHash: %v", err)
	}
	if u.Email != "a@example.com" || k.Name != "ci" || k.Prefix != key[:12] {
		t.Errorf("stored key %+v of %s", k, u.Email)
	}
	for _, args := range [][]string{
		{"key", "create", "a@example.com"},                 // no --name
		{"key", "create", "a@example.com", "--name", "  "}, // blank --name
		{"key", "create", "x@example.com", "--name", "ci"}, // unknown user
	} {
		if out, _, err := runCLI(t, env, "", args...); err == nil {
			t.Errorf("herald %s succeeded: %q", strings.Join(args, " "), out)
		}
	}

	dst := filepath.Join(t.TempDir(), "copy.db")
	out = mustCLI(t, env, "", "backup", dst)
	if !strings.Contains(out, dst) {
		t.Errorf("backup printed %q", out)
	}
	if n := cliCountUsers(t, dst); n != 1 {
		t.Errorf("backup holds %d users, want 1", n)
	}
	// A second backup to the same file replaces it.
	mustCLI(t, env, "", "user", "add", "b@example.com")
	mustCLI(t, env, "", "backup", dst)
	if n := cliCountUsers(t, dst); n != 2 {
		t.Errorf("second backup holds %d users, want 2", n)
	}

	out = mustCLI(t, env, "", "version")
	if !strings.HasPrefix(out, "herald ") || !strings.Contains(out, "go1.") {
		t.Errorf("version printed %q", out)
	}
}

// cliCountUsers opens a database file on its own and counts its users.
func cliCountUsers(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM users").Scan(&n); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n
}

// cliHTTP sends a JSON request and decodes a JSON object answer.
func cliHTTP(t *testing.T, method, url string, body any, token string) (int, map[string]any) {
	t.Helper()
	var m map[string]any
	status, err := testkit.CallJSON(method, url, body, &m, token)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return status, m
}
