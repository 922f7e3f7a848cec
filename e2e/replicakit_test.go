package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/signature"
)

// This file holds what the replica tests share: several herald serve on one
// PostgreSQL database, a callback receiver that checks signatures, and a
// live stream reader.

// startReplicas runs n herald serve on the PostgreSQL database db, each on
// its own port with its own data directory, with env beside db's own.
func startReplicas(t *testing.T, db procDB, n int, env ...string) []*heraldProc {
	t.Helper()
	procs := make([]*heraldProc, n)
	for i := range procs {
		procs[i] = startHerald(t, 60*time.Second, t.TempDir(), append(db.env(), env...)...)
	}
	return procs
}

// replicaDB returns a fresh PostgreSQL database for a replica test, or
// skips it (with -short, or without HERALD_TEST_DATABASE_URL).
func replicaDB(t *testing.T) procDB {
	t.Helper()
	if testing.Short() {
		t.Skip("runs several herald binaries on PostgreSQL; skipped with -short")
	}
	return procDB{url: pgtest.NewDatabase(t)}
}

// replicaChannel is a channel made for a replica test.
type replicaChannel struct {
	id, hook, secret string
}

// replicaUser adds a user with the CLI (pro unless plan says otherwise) and
// returns an API key of theirs.
func replicaUser(t *testing.T, p *heraldProc, email string, plan string) string {
	t.Helper()
	runHerald(t, p.env, "", "user", "add", email, "--plan", plan)
	return strings.TrimSpace(runHerald(t, p.env, "", "key", "create", email, "--name", "replicas"))
}

// replicaNewChannel makes a channel through one replica and reads its
// signing secret through another, so both have seen it.
func replicaNewChannel(t *testing.T, procs []*heraldProc, key, name string) replicaChannel {
	t.Helper()
	made := procs[0].must(t, http.StatusCreated, "POST", "/v1/channels", map[string]string{"name": name}, key)
	ch := replicaChannel{}
	ch.id, _ = made["id"].(string)
	ch.hook, _ = made["webhook_token"].(string)
	ch.secret, _ = procs[len(procs)-1].must(t, http.StatusOK, "GET", "/v1/channels/"+ch.id+"/secret", nil, key)["webhook_secret"].(string)
	if ch.id == "" || ch.hook == "" || ch.secret == "" {
		t.Fatalf("channel %v, secret %q", made, ch.secret)
	}
	return ch
}

// replicaReceiver records every callback it answers 200, per message and
// per delivery id, after checking its signature with the channel secret.
type replicaReceiver struct {
	*httptest.Server
	secret string
	event  string        // the event every callback must be
	hold   time.Duration // how long each callback is held before the 200
	mu     sync.Mutex
	perMsg map[string]int // callbacks answered 200, per message id
	perDlv map[string]int // the same, per X-Service-Delivery
	bad    []string       // callbacks that were not what was promised
}

func replicaNewReceiver(t *testing.T, secret, event string, hold time.Duration) *replicaReceiver {
	t.Helper()
	rc := &replicaReceiver{secret: secret, event: event, hold: hold, perMsg: map[string]int{}, perDlv: map[string]int{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *replicaReceiver) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return // cut off by a killed sender
	}
	var b struct {
		Event     string `json:"event"`
		MessageID string `json:"message_id"`
	}
	problem := ""
	if err := signature.Verify(rc.secret, r.Header.Get(signature.Header), raw, time.Now(), signature.Tolerance); err != nil {
		problem = fmt.Sprintf("signature %q: %v", r.Header.Get(signature.Header), err)
	} else if err := json.Unmarshal(raw, &b); err != nil || b.Event != rc.event || b.MessageID == "" {
		problem = fmt.Sprintf("body %s, want event %s", raw, rc.event)
	}
	if problem != "" {
		rc.mu.Lock()
		rc.bad = append(rc.bad, problem)
		rc.mu.Unlock()
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	select {
	case <-time.After(rc.hold):
	case <-r.Context().Done():
		return // cut off: not delivered
	}
	rc.mu.Lock()
	rc.perMsg[b.MessageID]++
	rc.perDlv[r.Header.Get("X-Service-Delivery")]++
	rc.mu.Unlock()
}

// missing returns those of ids that no callback has reached yet.
func (rc *replicaReceiver) missing(ids []string) []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for _, id := range ids {
		if rc.perMsg[id] == 0 {
			out = append(out, id)
		}
	}
	return out
}

// waitAll waits until a callback for each of ids has arrived.
func (rc *replicaReceiver) waitAll(t *testing.T, ids []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		lost := rc.missing(ids)
		if len(lost) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d callbacks never arrived within %s, e.g. %v", len(lost), len(ids), within, lost[:min(5, len(lost))])
		}
		time.Sleep(20 * time.Millisecond)
	}
	rc.checkSigned(t)
}

// checkSigned fails the test if a callback was badly signed or shaped.
func (rc *replicaReceiver) checkSigned(t *testing.T) {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.bad) > 0 {
		t.Errorf("%d callbacks were refused, e.g. %s", len(rc.bad), rc.bad[0])
	}
}

// total counts the callbacks answered 200 so far.
func (rc *replicaReceiver) total() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, c := range rc.perDlv {
		n += c
	}
	return n
}

// times returns how many callbacks each of ids got.
func (rc *replicaReceiver) times(ids []string) map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[string]int, len(ids))
	for _, id := range ids {
		out[id] = rc.perMsg[id]
	}
	return out
}

// replicaStream reads GET /v1/stream and remembers the message.created
// events it saw.
type replicaStream struct {
	mu      sync.Mutex
	created map[string]bool
	ended   chan struct{}
	err     error // why the stream ended; read after ended is closed
}

// openStream opens the stream on p with key and returns once it is
// connected: every event from then on reaches it.
func openStream(t *testing.T, p *heraldProc, key string) *replicaStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", p.base+"/v1/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("open the stream: %v", err)
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		cancel()
		t.Fatalf("GET /v1/stream: %d", res.StatusCode)
	}
	s := &replicaStream{created: map[string]bool{}, ended: make(chan struct{})}
	t.Cleanup(func() { cancel(); res.Body.Close(); <-s.ended })
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() && sc.Text() != ": connected" {
	}
	go s.read(sc)
	return s
}

func (s *replicaStream) read(sc *bufio.Scanner) {
	defer close(s.ended)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			event = ""
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == "message.created":
			var m struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err == nil {
				s.mu.Lock()
				s.created[m.ID] = true
				s.mu.Unlock()
			}
		}
	}
	s.err = sc.Err()
}

// waitCreated waits until the stream saw message.created for each of ids.
func (s *replicaStream) waitCreated(t *testing.T, ids []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		s.mu.Lock()
		var unseen []string
		for _, id := range ids {
			if !s.created[id] {
				unseen = append(unseen, id)
			}
		}
		s.mu.Unlock()
		if len(unseen) == 0 {
			return
		}
		select {
		case <-s.ended:
			t.Fatalf("the stream ended (%v) with %d of %d messages unseen", s.err, len(unseen), len(ids))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stream saw no message.created for %d of %d messages within %s, e.g. %v", len(unseen), len(ids), within, unseen[:min(5, len(unseen))])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
