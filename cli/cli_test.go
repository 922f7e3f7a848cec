package cli

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
)

// TestMain checks every request the tests send through testkit against the
// OpenAPI description, and announces the tests skipped for want of a tool.
func TestMain(m *testing.M) {
	os.Exit(testkit.RunChecked(m, "github.com/heraldhq/herald/cli"))
}

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

// serveInProcess runs herald serve in this process on a free port over
// env's data directory, until the test ends, and returns its base URL.
func serveInProcess(t *testing.T, env cliEnv) (base string, logs *testkit.SyncBuffer) {
	t.Helper()
	base, logs, stop := startInProcess(t, env)
	t.Cleanup(stop)
	return base, logs
}

// startInProcess is serveInProcess that also returns a function that stops
// the server and waits until it has.
func startInProcess(t *testing.T, env cliEnv) (base string, logs *testkit.SyncBuffer, stop func()) {
	t.Helper()
	addr := testkit.FreeAddr(t)
	base = "http://" + addr
	env["HERALD_LISTEN"] = addr
	logs = &testkit.SyncBuffer{}
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: logs, getenv: env.get}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	exited := make(chan struct{})
	go func() { served <- a.serve(ctx); close(exited) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-served; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
	testkit.WaitHealthy(t, base, exited, 30*time.Second, logs)
	return base, logs, stop
}

// cliOwner makes the first user of env's server (an administrator) and a
// channel, and returns a session token and the channel's webhook URL.
func cliOwner(t *testing.T, env cliEnv, base string) (token, webhook string) {
	t.Helper()
	mustCLI(t, env, "correct horse battery\n", "user", "add", "owner@example.com", "--password-stdin")
	status, sess := cliHTTP(t, "POST", base+"/v1/auth/local", map[string]string{"email": "owner@example.com", "password": "correct horse battery"}, "")
	if status != 200 {
		t.Fatalf("sign-in: %d %v", status, sess)
	}
	token = sess["access_token"].(string)
	status, ch := cliHTTP(t, "POST", base+"/v1/channels", map[string]string{"name": "ops"}, token)
	if status != 201 {
		t.Fatalf("create channel: %d %v", status, ch)
	}
	return token, ch["webhook_url"].(string)
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
