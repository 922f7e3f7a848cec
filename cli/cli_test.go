package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
)

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
	root := newRoot(strings.NewReader(stdin), &out, &errOut, env.get)
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

// waitRefused waits until nothing accepts connections on addr.
func waitRefused(t *testing.T, addr string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("%s still accepts connections %s after shutdown began", addr, within)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// cliHTTP sends a JSON request and decodes a JSON object answer.
func cliHTTP(t *testing.T, method, url string, body any, token string) (int, map[string]any) {
	t.Helper()
	var m map[string]any
	status, err := callJSON(method, url, body, &m, token)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return status, m
}

func TestCLIBesideRunningServer(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	base := "http://" + addr
	env := newCLIEnv(t)
	env["HERALD_LISTEN"] = addr
	env["HERALD_BASE_URL"] = base

	logs := &syncBuffer{}
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: logs, getenv: env.get}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	exited := make(chan struct{})
	go func() { served <- a.serve(ctx); close(exited) }()
	waitHealthy(t, base, exited, 30*time.Second, logs)

	// A user added by the CLI can sign in at once.
	mustCLI(t, env, "hunter2-live\n", "user", "add", "live@example.com", "--name", "Live", "--password-stdin", "--plan", "free")
	status, sess := cliHTTP(t, "POST", base+"/v1/auth/local", map[string]string{"email": "live@example.com", "password": "hunter2-live"}, "")
	if status != 200 {
		t.Fatalf("sign-in after user add: %d %v", status, sess)
	}
	token, _ := sess["access_token"].(string)
	if status, me := cliHTTP(t, "GET", base+"/v1/auth/me", nil, token); status != 200 || me["plan"] != "free" || me["name"] != "Live" {
		t.Fatalf("me = %d %v", status, me)
	}

	// A plan change shows on the next request.
	mustCLI(t, env, "", "user", "set-plan", "live@example.com", "pro")
	if status, me := cliHTTP(t, "GET", base+"/v1/auth/me", nil, token); status != 200 || me["plan"] != "pro" {
		t.Errorf("me after set-plan = %d %v, want plan pro", status, me)
	}

	// A key made by the CLI authenticates at once.
	key := strings.TrimSpace(mustCLI(t, env, "", "key", "create", "live@example.com", "--name", "bootstrap"))
	if status, me := cliHTTP(t, "GET", base+"/v1/auth/me", nil, key); status != 200 || me["email"] != "live@example.com" {
		t.Errorf("me with the CLI's key = %d %v", status, me)
	}
	if status, _ := cliHTTP(t, "POST", base+"/v1/channels", map[string]string{"name": "from-key"}, key); status != 201 {
		t.Errorf("create channel with the CLI's key: %d", status)
	}

	// An online backup holds what the server wrote.
	dst := filepath.Join(t.TempDir(), "online.db")
	mustCLI(t, env, "", "backup", dst)
	if n := cliCountUsers(t, dst); n != 1 {
		t.Errorf("online backup holds %d users, want 1", n)
	}

	// A request in flight when shutdown starts is finished, not cut off:
	// its body is still arriving when the context is cancelled. With
	// "Expect: 100-continue" the server says "100 Continue" when the handler
	// starts reading the body, and the client sends it only then: so the
	// trace's Got100Continue means the server is reading it.
	pr, pw := io.Pipe()
	reading := make(chan struct{})
	trace := &httptrace.ClientTrace{Got100Continue: func() { close(reading) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", base+"/v1/channels", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Minute}}
	inflight := make(chan int, 1)
	go func() {
		res, err := client.Do(req)
		if err != nil {
			t.Errorf("in-flight request: %v", err)
			inflight <- 0
			return
		}
		res.Body.Close()
		inflight <- res.StatusCode
	}()
	select {
	case <-reading:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start reading the request body within 30 s")
	}
	io.WriteString(pw, `{"name": "in-fl`)

	// Cancelling the context shuts the server down cleanly. Shutdown closes
	// the listener first: once a new connection is refused, it has begun,
	// with the request still in flight.
	cancel()
	waitRefused(t, addr, 30*time.Second)
	io.WriteString(pw, `ight"}`)
	pw.Close()
	if got := <-inflight; got != 201 {
		t.Errorf("in-flight request during shutdown: %d, want 201", got)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("serve returned %v after cancel, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not return within 10 s of cancel")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the server still answers after shutdown")
	}
	if !strings.Contains(logs.String(), "stopped") {
		t.Errorf("serve did not log its stop:\n%s", logs.String())
	}
	st := openCLIStore(t, env)
	u, err := st.UserByEmail(context.Background(), "live@example.com")
	if err != nil {
		t.Fatal(err)
	}
	chs, err := st.ListChannels(context.Background(), u.ID)
	if err != nil || len(chs) != 2 {
		t.Errorf("after shutdown: %d channels, %v; want 2 (one made during shutdown)", len(chs), err)
	}
}

// TestServeSIGTERM: herald serve stops cleanly on SIGTERM, on SQLite and on
// PostgreSQL, with what it committed in the database.
func TestServeSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	forEachDatabase(t, testServeSIGTERM)
}

func testServeSIGTERM(t *testing.T, db procDB) {
	dataDir := filepath.Join(t.TempDir(), "data")
	p := startHerald(t, 30*time.Second, dataDir, db.env()...)
	_, err := os.Stat(filepath.Join(dataDir, "herald.db"))
	switch {
	case db.postgres() && err == nil:
		t.Errorf("herald.db created in HERALD_DATA_DIR with HERALD_DATABASE_URL set")
	case !db.postgres() && err != nil:
		t.Errorf("database not created in HERALD_DATA_DIR: %v", err)
	}
	runHerald(t, p.env, "", "user", "add", "sigterm@example.com")
	key := strings.TrimSpace(runHerald(t, p.env, "", "key", "create", "sigterm@example.com", "--name", "sigterm"))
	p.must(t, http.StatusCreated, "POST", "/v1/channels", map[string]string{"name": "before SIGTERM"}, key)

	start := time.Now()
	code, err := p.stop(t, 15*time.Second)
	if err != nil {
		t.Errorf("herald serve exited with %v after SIGTERM, want exit code 0\n%s", err, p.log)
	}
	if code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown took %s, want under 5 s", d)
	}
	if !strings.Contains(p.log.String(), "stopped") {
		t.Errorf("no clean stop in the log:\n%s", p.log)
	}

	ctx := context.Background()
	st := db.open(t, dataDir)
	u, err := st.UserByEmail(ctx, "sigterm@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if chs, err := st.ListChannels(ctx, u.ID); err != nil || len(chs) != 1 || chs[0].Name != "before SIGTERM" {
		t.Errorf("after SIGTERM the database holds channels %+v (%v), want the one made before it", chs, err)
	}
}
