package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The crash tests run the real binary, kill it with SIGKILL while callbacks
// are queued, start it again on the same data directory and check that every
// accepted response still reaches its receiver (duplicates allowed, losses
// not), on SQLite and on PostgreSQL. They take a few seconds each (on
// PostgreSQL up to a lease more, see procDB.leaseWait) and are skipped with
// -short.

// crashEnv is the environment of every herald serve in a crash test, beside
// the data directory: fast retries and enough attempts that nothing is
// dead-lettered while the receiver is down.
func crashEnv(extra ...string) []string {
	return append([]string{
		"HERALD_LOG_LEVEL=warn",
		"HERALD_PLANS_FREE_SEND_PER_MINUTE=1000000",
		"HERALD_PLANS_FREE_API_PER_MINUTE=1000000",
		"HERALD_PLANS_PRO_SEND_PER_MINUTE=1000000", // herald user add makes pro users
		"HERALD_PLANS_PRO_API_PER_MINUTE=1000000",
		"HERALD_DELIVERY_BACKOFF_BASE=100ms",
		"HERALD_DELIVERY_BACKOFF_MAX=400ms",
		"HERALD_DELIVERY_MAX_ATTEMPTS=1000",
		"HERALD_DELIVERY_ALLOW_LOOPBACK=true", // the receivers listen on 127.0.0.1
	}, extra...)
}

// crashStart runs herald serve on dataDir and waits until it is healthy.
func crashStart(t *testing.T, dataDir string, env []string) *heraldProc {
	t.Helper()
	return startHerald(t, 30*time.Second, dataDir, env...)
}

// crashReceiver answers callbacks with 503 until it is made healthy, and
// remembers which messages it accepted (answered 200 without the request
// being cut off).
type crashReceiver struct {
	*httptest.Server
	healthy  atomic.Bool
	hold     time.Duration
	gate     chan struct{} // when set, a request waits until it is closed
	inHand   atomic.Int32  // requests waiting at the gate
	mu       sync.Mutex
	tried    map[string]int // requests per message, any answer
	accepted map[string]int // 200s per message
	badUA    string
}

func crashNewReceiver(t *testing.T, hold time.Duration) *crashReceiver {
	rc := &crashReceiver{hold: hold, tried: map[string]int{}, accepted: map[string]int{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			Event     string `json:"event"`
			MessageID string `json:"message_id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&b)
		rc.mu.Lock()
		rc.tried[b.MessageID]++
		if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "Herald-Webhooks/") || b.Event != "response.received" {
			rc.badUA = fmt.Sprintf("User-Agent %q, event %q", ua, b.Event)
		}
		rc.mu.Unlock()
		if !rc.healthy.Load() {
			w.WriteHeader(503)
			return
		}
		if rc.gate != nil {
			rc.inHand.Add(1)
			select {
			case <-rc.gate:
				rc.inHand.Add(-1)
			case <-r.Context().Done():
				rc.inHand.Add(-1)
				return // cut off: not accepted
			}
		}
		select {
		case <-time.After(rc.hold):
		case <-r.Context().Done():
			return // cut off: not accepted
		}
		rc.mu.Lock()
		rc.accepted[b.MessageID]++
		rc.mu.Unlock()
		w.WriteHeader(200)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// count returns how many of ids m has.
func (rc *crashReceiver) count(m map[string]int, ids []string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, id := range ids {
		if m[id] > 0 {
			n++
		}
	}
	return n
}

// waitAll waits until the receiver accepted every one of ids.
func (rc *crashReceiver) waitAll(t *testing.T, ids []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for rc.count(rc.accepted, ids) < len(ids) {
		if time.Now().After(deadline) {
			rc.mu.Lock()
			var lost []string
			for _, id := range ids {
				if rc.accepted[id] == 0 {
					lost = append(lost, id)
				}
			}
			rc.mu.Unlock()
			t.Fatalf("%d of %d callbacks never arrived within %s: %v", len(lost), len(ids), within, lost)
		}
		time.Sleep(10 * time.Millisecond)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.badUA != "" {
		t.Errorf("a callback had %s", rc.badUA)
	}
}

// crashSetup adds a user with the CLI, signs in and makes a channel; it
// returns the session token and the webhook token.
func crashSetup(t *testing.T, s *heraldProc) (token, hook string) {
	t.Helper()
	runHerald(t, s.env, "crash-password\n", "user", "add", "crash@example.com", "--password-stdin")
	token, _ = s.must(t, 200, "POST", "/v1/auth/local", map[string]string{"email": "crash@example.com", "password": "crash-password"}, "")["access_token"].(string)
	hook, _ = s.must(t, 201, "POST", "/v1/channels", map[string]string{"name": "crash"}, token)["webhook_token"].(string)
	if token == "" || hook == "" {
		t.Fatalf("token %q, webhook token %q", token, hook)
	}
	return token, hook
}

// crashSend sends n messages with a callback to url.
func crashSend(t *testing.T, s *heraldProc, hook, url string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i], _ = s.must(t, 200, "POST", "/v1/send/"+hook, map[string]any{"title": fmt.Sprint("crash ", i), "callback_url": url,
			"actions": []any{map[string]string{"type": "button", "label": "OK", "key": "ok"}}}, "")["id"].(string)
	}
	return ids
}

// crashWaitDelivered waits until the server reports every message's
// callback as delivered.
func crashWaitDelivered(t *testing.T, s *heraldProc, token string, ids []string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, id := range ids {
		for {
			_, m, err := s.call("GET", "/v1/messages/"+id, nil, token)
			d, _ := m["delivery"].(map[string]any)
			if err == nil && d["state"] == "delivered" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("message %s delivery %v (%v), want delivered", id, m["delivery"], err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestCrashWithPendingCallbacks: responses are accepted while the receiver
// is down, the server is killed with their jobs retrying, the receiver
// comes back, the server restarts: every callback arrives.
func TestCrashWithPendingCallbacks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary; skipped with -short")
	}
	forEachDatabase(t, testCrashWithPendingCallbacks)
}

func testCrashWithPendingCallbacks(t *testing.T, db procDB) {
	dataDir, env := t.TempDir(), crashEnv(append(db.env(), db.leaseEnv()...)...)
	rc := crashNewReceiver(t, 0)
	s := crashStart(t, dataDir, env)
	token, hook := crashSetup(t, s)
	const k = 25
	ids := crashSend(t, s, hook, rc.URL+"/herald", k)
	for _, id := range ids {
		s.must(t, 200, "POST", "/v1/messages/"+id+"/respond", map[string]string{"action": "ok"}, token)
	}
	// Kill once every job has been tried (and refused) at least once.
	deadline := time.Now().Add(20 * time.Second)
	for rc.count(rc.tried, ids) < k {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d callbacks tried within 20s", rc.count(rc.tried, ids), k)
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.kill(t)
	if n := rc.count(rc.accepted, ids); n != 0 {
		t.Fatalf("%d callbacks accepted while the receiver was down", n)
	}

	rc.healthy.Store(true)
	s = crashStart(t, dataDir, env)
	rc.waitAll(t, ids, 30*time.Second+db.leaseWait())
	crashWaitDelivered(t, s, token, ids)
	s.stop(t, 30*time.Second)
}

// TestCrashDuringResponds: the server is killed while responses are being
// accepted and their callbacks are in flight to a receiver that holds them;
// every response that got a 200 is delivered after the restart. The
// receiver answers nothing before the kill, so the kill always finds
// callbacks in flight and others queued behind them.
func TestCrashDuringResponds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary; skipped with -short")
	}
	forEachDatabase(t, testCrashDuringResponds)
}

func testCrashDuringResponds(t *testing.T, db procDB) {
	dataDir, env := t.TempDir(), crashEnv(append(append(db.env(), db.leaseEnv()...), "HERALD_DELIVERY_WORKERS=2")...)
	rc := crashNewReceiver(t, 0)
	rc.gate = make(chan struct{})
	rc.healthy.Store(true)
	s := crashStart(t, dataDir, env)
	token, hook := crashSetup(t, s)
	const k = 120
	ids := crashSend(t, s, hook, rc.URL+"/herald", k)

	var mu sync.Mutex
	var acked []string
	work := make(chan string)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				if code, _, err := s.call("POST", "/v1/messages/"+id+"/respond", map[string]string{"action": "ok"}, token); err == nil && code == 200 {
					mu.Lock()
					acked = append(acked, id)
					mu.Unlock()
				}
			}
		}()
	}
	killed := make(chan struct{})
	first := s
	var inFlight atomic.Int32
	go func() {
		defer close(killed)
		for {
			mu.Lock()
			n := len(acked)
			mu.Unlock()
			// Killed with responses acknowledged and a callback in the
			// receiver's hands.
			if n >= k/3 && rc.inHand.Load() > 0 {
				inFlight.Store(rc.inHand.Load())
				_ = first.cmd.Process.Signal(syscall.SIGKILL)
				<-first.exited
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	for _, id := range ids {
		select {
		case work <- id:
		case <-killed:
		}
		if crashClosed(killed) {
			break
		}
	}
	close(work)
	wg.Wait()
	<-killed
	mu.Lock()
	got := append([]string(nil), acked...)
	mu.Unlock()
	pending := len(got) - rc.count(rc.accepted, got)
	t.Logf("%d responses acknowledged before the kill, %d callbacks in flight at it, %d not yet delivered",
		len(got), inFlight.Load(), pending)
	if inFlight.Load() == 0 || pending != len(got) {
		t.Fatalf("at the kill %d callbacks were in flight and %d of %d acknowledged ones undelivered; want some in flight and none delivered",
			inFlight.Load(), pending, len(got))
	}

	close(rc.gate)
	s = crashStart(t, dataDir, env)
	rc.waitAll(t, got, 30*time.Second+db.leaseWait())
	crashWaitDelivered(t, s, token, got)
	s.stop(t, 30*time.Second)
}

func crashClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
