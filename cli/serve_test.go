package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

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

func TestCLIBesideRunningServer(t *testing.T) {
	t.Parallel()
	addr := testkit.FreeAddr(t)
	base := "http://" + addr
	env := newCLIEnv(t)
	env["HERALD_LISTEN"] = addr
	env["HERALD_BASE_URL"] = base

	logs := &testkit.SyncBuffer{}
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: logs, getenv: env.get}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	exited := make(chan struct{})
	go func() { served <- a.serve(ctx); close(exited) }()
	testkit.WaitHealthy(t, base, exited, 30*time.Second, logs)

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

// TestServeWarnsUnreachableBaseURL: listening on every interface without a
// base_url gives webhook URLs that work only on the server itself; serve
// says so at start.
func TestServeWarnsUnreachableBaseURL(t *testing.T) {
	t.Parallel()
	port := strings.TrimPrefix(testkit.FreeAddr(t), "127.0.0.1:")
	env := newCLIEnv(t)
	env["HERALD_LISTEN"] = "0.0.0.0:" + port
	logs := &testkit.SyncBuffer{}
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: logs, getenv: env.get}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	exited := make(chan struct{})
	go func() { served <- a.serve(ctx); close(exited) }()
	testkit.WaitHealthy(t, "http://127.0.0.1:"+port, exited, 30*time.Second, logs)
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"names this machine only", "base_url=http://127.0.0.1:" + port, "listen=0.0.0.0:" + port, "HERALD_BASE_URL"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs)
		}
	}
}
