package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// This file holds what the tests need to run the real herald binary: one
// build per test binary run, herald serve as a subprocess (heraldProc),
// herald CLI runs (runHerald) and JSON requests.

// root is the repository's top directory: the herald command's package,
// and the files these tests hold to what the binary does (the README,
// docs/, the release files).
const root = ".."

// The herald binary, built once by the first test that asks for it.
var (
	heraldBuildOnce sync.Once
	heraldBinDir    string // removed by TestMain
	heraldBinPath   string
	heraldBuildErr  error
	heraldNoGo      error // set instead of heraldBuildErr if there is no go command
)

// TestMain checks every request the tests send through testkit, to the
// real binary or through a reverse proxy in front of it, against the
// OpenAPI description, and announces the tests skipped for want of a tool.
func TestMain(m *testing.M) {
	code := testkit.RunChecked(m, "github.com/heraldhq/herald/e2e")
	if heraldBinDir != "" {
		os.RemoveAll(heraldBinDir)
	}
	os.Exit(code)
}

// heraldBin returns the path of herald built as it ships (CGO_ENABLED=0). It
// skips the test if there is no go command on PATH.
func heraldBin(t *testing.T) string {
	t.Helper()
	heraldBuildOnce.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			heraldNoGo = err
			return
		}
		if heraldBinDir, err = os.MkdirTemp("", "herald-test-bin-"); err != nil {
			heraldBuildErr = err
			return
		}
		heraldBinPath = filepath.Join(heraldBinDir, "herald")
		cmd := exec.Command(gobin, "build", "-o", heraldBinPath, ".")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			heraldBuildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if heraldNoGo != nil {
		t.Skipf("cannot build herald: %v", heraldNoGo)
	}
	if heraldBuildErr != nil {
		t.Fatal(heraldBuildErr)
	}
	return heraldBinPath
}

// heraldProc is one run of herald serve.
type heraldProc struct {
	base    string   // http://127.0.0.1:port
	env     []string // the process's whole environment
	cmd     *exec.Cmd
	log     *testkit.SyncBuffer // stdout and stderr, for failure messages
	exited  chan struct{}
	waitErr error // what cmd.Wait returned; set before exited is closed
}

// startHerald runs herald serve on a free port with dataDir as
// HERALD_DATA_DIR and waits up to healthyWithin for /healthz to answer 200.
// The environment is the caller's without HERALD_*, plus extraEnv. The
// process is killed at cleanup if it is still running.
func startHerald(t *testing.T, healthyWithin time.Duration, dataDir string, extraEnv ...string) *heraldProc {
	t.Helper()
	addr := testkit.FreeAddr(t)
	return startHeraldAt(t, healthyWithin, addr, dataDir, append([]string{"HERALD_BASE_URL=http://" + addr}, extraEnv...)...)
}

// startHeraldAt is startHerald listening on addr. extraEnv comes last, so
// that it may set HERALD_BASE_URL (a proxy's address in front of addr).
func startHeraldAt(t *testing.T, healthyWithin time.Duration, addr, dataDir string, extraEnv ...string) *heraldProc {
	t.Helper()
	p := &heraldProc{base: "http://" + addr}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HERALD_") {
			p.env = append(p.env, kv)
		}
	}
	p.env = append(append(p.env, "HERALD_DATA_DIR="+dataDir, "HERALD_LISTEN="+addr), extraEnv...)
	p.start(t, healthyWithin)
	return p
}

// start runs herald serve with p.env and waits up to healthyWithin for
// p.base/healthz to answer 200. The process is killed at cleanup if it is
// still running.
func (p *heraldProc) start(t *testing.T, healthyWithin time.Duration) {
	t.Helper()
	p.log, p.exited = &testkit.SyncBuffer{}, make(chan struct{})
	p.cmd = exec.Command(heraldBin(t), "serve")
	p.cmd.Dir = t.TempDir() // no ./herald.toml can be picked up
	p.cmd.Env = p.env
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start herald: %v", err)
	}
	go func() { p.waitErr = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("herald serve at %s logged:\n%s", p.base, p.log)
		}
	})
	testkit.WaitHealthy(t, p.base, p.exited, healthyWithin, p.log)
}

// kill is a crash: SIGKILL, no shutdown code runs. It waits for the process
// to be gone.
func (p *heraldProc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	<-p.exited
}

// stop asks for a clean shutdown (SIGTERM) and waits up to within for the
// process to exit. It returns the exit code and what cmd.Wait returned.
func (p *heraldProc) stop(t *testing.T, within time.Duration) (code int, err error) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode(), p.waitErr
	case <-time.After(within):
		t.Fatalf("herald serve still running %s after SIGTERM:\n%s", within, p.log)
		return 0, nil
	}
}

// call makes a JSON request to the server; safe from any goroutine.
func (p *heraldProc) call(method, path string, body any, token string) (int, map[string]any, error) {
	var out map[string]any
	code, err := testkit.CallJSON(method, p.base+path, body, &out, token)
	return code, out, err
}

// must is call that fails the test unless the status is want.
func (p *heraldProc) must(t *testing.T, want int, method, path string, body any, token string) map[string]any {
	t.Helper()
	code, out, err := p.call(method, path, body, token)
	if err != nil || code != want {
		t.Fatalf("%s %s: %d %v %v, want %d", method, path, code, out, err, want)
	}
	return out
}

// runHerald runs one herald CLI command line with env as its whole
// environment and stdin as its input, and returns its standard output. It
// fails the test if the command does.
func runHerald(t *testing.T, env []string, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(heraldBin(t), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("herald %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}
