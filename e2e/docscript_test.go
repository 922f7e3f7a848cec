package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// needTools skips t, or fails it under CI=true, when a tool that the
// documentation's script (what) needs is missing.
func needTools(t *testing.T, what string, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s needs %s: %v", what, tool, err)
			}
			t.Skipf("%s needs %s: %v", what, tool, err)
		}
	}
}

// scriptServer is herald serve started as the README starts it (--listen,
// no base_url, no HERALD_ variables but its data directory) on a free
// port, for a script of the documentation to run against.
type scriptServer struct {
	base string   // http://127.0.0.1:PORT
	dir  string   // the working directory of the server and the script
	env  []string // their environment
	logs *testkit.SyncBuffer
}

// startScriptServer starts bin serve for t, stopped when t ends.
func startScriptServer(t *testing.T, bin string) *scriptServer {
	t.Helper()
	addr := testkit.FreeAddr(t)
	s := &scriptServer{base: "http://" + addr, dir: t.TempDir(), logs: &testkit.SyncBuffer{}}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HERALD_") {
			s.env = append(s.env, kv)
		}
	}
	s.env = append(s.env, "HERALD_DATA_DIR="+filepath.Join(t.TempDir(), "data"))
	srv := exec.Command(bin, "serve", "--listen", addr)
	srv.Dir, srv.Env, srv.Stdout, srv.Stderr = s.dir, s.env, s.logs, s.logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = srv.Wait(); close(exited) }()
	t.Cleanup(func() { _ = srv.Process.Kill(); <-exited })
	testkit.WaitHealthy(t, s.base, exited, 30*time.Second, s.logs)
	return s
}

// run runs script in POSIX sh (sh -eu) beside the server, within two
// minutes, and returns its output; a failure fails t with the output and
// the server's log.
func (s *scriptServer) run(t *testing.T, what, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sh := exec.CommandContext(ctx, "sh", "-eu", "-c", script)
	sh.Dir, sh.Env = s.dir, s.env
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("%s failed: %v\n%s\nserver log:\n%s", what, err, out, s.logs)
	}
	return string(out)
}
