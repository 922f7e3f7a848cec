package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald/docs"
	"github.com/heraldhq/herald/internal/testkit"
)

// This file holds what the tests need to run the real herald binary: one
// build per test binary run, herald serve as a subprocess (heraldProc),
// herald CLI runs (runHerald) and JSON requests.

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
	contract, err := testkit.LoadContract(docs.OpenAPI)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	stop := testkit.CheckCalls(contract)
	code := m.Run()
	stop()
	testkit.AnnounceSkips("github.com/heraldhq/herald")
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
	log     *syncBuffer // stdout and stderr, for failure messages
	exited  chan struct{}
	waitErr error // what cmd.Wait returned; set before exited is closed
}

// startHerald runs herald serve on a free port with dataDir as
// HERALD_DATA_DIR and waits up to healthyWithin for /healthz to answer 200.
// The environment is the caller's without HERALD_*, plus extraEnv. The
// process is killed at cleanup if it is still running.
func startHerald(t *testing.T, healthyWithin time.Duration, dataDir string, extraEnv ...string) *heraldProc {
	t.Helper()
	bin := heraldBin(t)
	addr := freeAddr(t)
	p := &heraldProc{base: "http://" + addr, log: &syncBuffer{}, exited: make(chan struct{})}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HERALD_") {
			p.env = append(p.env, kv)
		}
	}
	p.env = append(append(append(p.env, "HERALD_DATA_DIR="+dataDir), extraEnv...), "HERALD_LISTEN="+addr, "HERALD_BASE_URL="+p.base)
	p.cmd = exec.Command(bin, "serve")
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
	waitHealthy(t, p.base, p.exited, healthyWithin, p.log)
	return p
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
	code, err := callJSON(method, p.base+path, body, &out, token)
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

// jsonClient makes the tests' JSON requests.
var jsonClient = &http.Client{Timeout: 10 * time.Second}

// callJSON sends body, when not nil, as JSON, with token, when not empty, as
// the bearer token, and decodes the JSON answer into out. It returns the
// status; an answer that is not JSON is an error.
func callJSON(method, url string, body, out any, token string) (int, error) {
	r, err := testkit.Call(jsonClient, method, url, body, token)
	if err != nil {
		return r.Status, err
	}
	if err := json.Unmarshal(r.Raw, out); err != nil {
		return r.Status, fmt.Errorf("%s %s: %d, not JSON: %q", method, url, r.Status, r.Raw)
	}
	return r.Status, nil
}

// waitHealthy polls base/healthz until it answers 200. It fails the test if
// exited is closed first or within passes; logs goes in the failure
// message.
func waitHealthy(t *testing.T, base string, exited <-chan struct{}, within time.Duration, logs fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-exited:
			t.Fatalf("the server exited before it became healthy:\n%s", logs)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/healthz did not answer 200 within %s (last error %v):\n%s", base, within, err, logs)
		}
	}
}

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// syncBuffer is a bytes.Buffer safe for a server's goroutines (or os/exec's
// copying goroutine) and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
