package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
)

// TestDurabilityAfterSIGKILL checks the promise of POST /v1/send: a 200 means
// the message is committed. It sends from many goroutines, kills the server
// with SIGKILL while sends are in flight, restarts it on the same data
// directory and requires every acknowledged id to be there, through the API
// and through store.Open.
func TestDurabilityAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the herald binary")
	}
	bin := durBuild(t)
	dataDir := t.TempDir()

	srv := durStart(t, bin, dataDir)
	durRun(t, bin, srv.env, "user", "add", "durability@example.com")
	key := strings.TrimSpace(durRun(t, bin, srv.env, "key", "create", "durability@example.com", "--name", "durability"))
	var ch struct {
		ID           string `json:"id"`
		WebhookToken string `json:"webhook_token"`
	}
	if status := durJSON(t, http.MethodPost, srv.base+"/v1/channels", key, `{"name":"Durability"}`, &ch); status != http.StatusCreated {
		t.Fatalf("create channel: status %d, want 201", status)
	}

	acked := durSendUntilKilled(t, srv, srv.base+"/v1/send/"+ch.WebhookToken)
	if got, want := len(acked), 50; got < want {
		t.Fatalf("only %d sends were acknowledged before the kill; want at least %d for a meaningful test", got, want)
	}
	t.Logf("%d sends acknowledged before SIGKILL", len(acked))

	srv2 := durStart(t, bin, dataDir)
	stored := durListIDs(t, srv2.base, key, ch.ID)
	var missing []string
	for _, id := range acked {
		if !stored[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d of %d acknowledged messages are missing after restart, e.g. %v", len(missing), len(acked), missing[:min(5, len(missing))])
	}
	t.Logf("all %d acknowledged messages found after restart (%d stored)", len(acked), len(stored))

	srv2.stop(t)
	durCheckStore(t, dataDir, acked)
}

// durServer is one herald serve process.
type durServer struct {
	cmd    *exec.Cmd
	base   string
	env    []string
	log    *durBuffer
	exited chan struct{}
}

// durBuild compiles the herald binary as it ships (CGO_ENABLED=0).
func durBuild(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	bin := filepath.Join(t.TempDir(), "herald")
	cmd := exec.Command(gobin, "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// durEnv is the environment of every herald process: the caller's, minus any
// HERALD_* it may hold, plus what points herald at this test's data.
func durEnv(dataDir, listen string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HERALD_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"HERALD_DATA_DIR="+dataDir,
		"HERALD_LISTEN="+listen,
		"HERALD_BASE_URL=http://"+listen,
		"HERALD_PLANS_FREE_SEND_PER_MINUTE=100000000",
		"HERALD_PLANS_FREE_API_PER_MINUTE=100000000",
		"HERALD_LOG_LEVEL=warn",
	)
}

// durStart runs herald serve on a free port and waits for /healthz. The
// process is killed at cleanup if it is still running.
func durStart(t *testing.T, bin, dataDir string) *durServer {
	t.Helper()
	listen := durFreeAddr(t)
	s := &durServer{base: "http://" + listen, env: durEnv(dataDir, listen), log: &durBuffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(bin, "serve")
	s.cmd.Dir = t.TempDir() // no ./herald.toml can be picked up
	s.cmd.Env = s.env
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start herald: %v", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		<-s.exited
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(s.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-s.exited:
			t.Fatalf("herald exited before it was healthy:\n%s", s.log)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("herald not healthy after 20s (last error %v):\n%s", err, s.log)
		}
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *durServer) kill(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	<-s.exited
}

// stop asks for a clean shutdown (SIGTERM) and waits for it.
func (s *durServer) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("herald did not stop within 30s of SIGTERM:\n%s", s.log)
	}
}

// durSendUntilKilled sends from 16 goroutines; after 300 ms (longer if fewer
// than 50 sends were acknowledged by then, up to 15 s) it kills the server
// mid-flight. It returns the ids of every send answered 200. Any failure
// before the kill fails the test.
func durSendUntilKilled(t *testing.T, srv *durServer, url string) []string {
	t.Helper()
	const senders = 16
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: senders, MaxConnsPerHost: senders},
	}
	defer client.CloseIdleConnections()
	var (
		mu      sync.Mutex
		acked   []string
		count   atomic.Int64
		killed  atomic.Bool
		wg      sync.WaitGroup
		errOnce sync.Once
		early   error // set once, read after wg.Wait
		failed  atomic.Bool
	)
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !killed.Load(); i++ {
				id, err := durSend(client, url, g, i)
				if err != nil {
					if !killed.Load() {
						errOnce.Do(func() { early = err })
						failed.Store(true)
					}
					return
				}
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
				count.Add(1)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	for deadline := time.Now().Add(15 * time.Second); count.Load() < 50 && time.Now().Before(deadline) && !failed.Load(); {
		time.Sleep(20 * time.Millisecond)
	}
	killed.Store(true) // before the kill: errors from here on are expected
	srv.kill(t)
	wg.Wait()
	if early != nil {
		t.Fatalf("a send failed before the kill: %v\n%s", early, srv.log)
	}
	return acked
}

// durSend posts one message and returns its id if the answer was 200.
func durSend(client *http.Client, url string, g, i int) (string, error) {
	body := fmt.Sprintf(`{"title":"durability %d/%d","body":"sent before the crash","priority":"high"}`, g, i)
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	var out struct {
		OK bool   `json:"ok"`
		ID string `json:"id"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil || !out.OK || out.ID == "" {
		return "", fmt.Errorf("send: status %d: %s", resp.StatusCode, b)
	}
	return out.ID, nil
}

// durListIDs pages through GET /v1/messages of the channel.
func durListIDs(t *testing.T, base, key, channelID string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for offset := 0; ; offset += 200 {
		var page struct {
			Messages []struct {
				ID string `json:"id"`
			} `json:"messages"`
			Total int `json:"total"`
		}
		u := fmt.Sprintf("%s/v1/messages?channel_id=%s&limit=200&offset=%d", base, channelID, offset)
		if status := durJSON(t, http.MethodGet, u, key, "", &page); status != http.StatusOK {
			t.Fatalf("GET /v1/messages: status %d, want 200", status)
		}
		for _, m := range page.Messages {
			ids[m.ID] = true
		}
		if len(page.Messages) == 0 || offset+200 >= page.Total {
			if got, want := len(ids), page.Total; got != want {
				t.Errorf("listed %d distinct messages, total says %d", got, want)
			}
			return ids
		}
	}
}

// durCheckStore opens the database directly, after the server has stopped,
// and looks every acknowledged id up.
func durCheckStore(t *testing.T, dataDir string, acked []string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dataDir, "herald.db"), store.Options{})
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	defer st.Close()
	for _, id := range acked {
		if _, err := st.Message(ctx, id); err != nil {
			t.Fatalf("store.Message(%s) of an acknowledged send: %v", id, err)
		}
	}
}

// durRun runs a herald CLI command and returns its standard output.
func durRun(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("herald %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// durJSON makes a request with an API key and decodes the JSON answer.
func durJSON(t *testing.T, method, url, key, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	if resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, url, b, err)
		}
	}
	return resp.StatusCode
}

// durFreeAddr returns a 127.0.0.1 address nobody listens on right now.
func durFreeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// durBuffer collects a process's output for failure messages; the process
// writes to it from os/exec's copying goroutine.
type durBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *durBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *durBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
