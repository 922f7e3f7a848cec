package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
)

// streamTestBuffer is every test server's per-stream buffer: small, so
// that a stream that does not read falls behind after a few events.
const streamTestBuffer = 16

// streamReadIDs reads n message.created events from c and returns their
// message ids, checking that event ids increase.
func streamReadIDs(t *testing.T, c *sseClient, n int) []string {
	t.Helper()
	var ids []string
	var last int64
	for range n {
		ev := c.next(streamWait)
		if ev.Event != "message.created" {
			t.Fatalf("event %s %s, want message.created", ev.ID, ev.Event)
		}
		id := eventID(t, ev)
		if id <= last {
			t.Fatalf("event id %d after %d: ids must increase", id, last)
		}
		last = id
		ids = append(ids, ev.JSON(t)["id"].(string))
	}
	return ids
}

// TestStreamHubManyStreamsAndUsers: many streams of several users, one of
// whom owns an approval channel. Every stream gets exactly its user's
// events, in order: the owner's and the (accepting) approvers' streams the
// approval messages, nobody else's.
func TestStreamHubManyStreamsAndUsers(t *testing.T) {
	t.Parallel()
	f := aprSetup(t) // a owns an approval channel; b, c are users too
	env := f.env
	f.rule(1, 3600, f.b, f.c)
	env.acceptInvitations(f.b)
	env.acceptInvitations(f.c)
	users := []*testUser{f.a, f.b, f.c, env.newUser("dan@example.com"), env.newUser("eve@example.com")}
	tokens := []string{f.token}
	for _, u := range users[1:] {
		_, tok := streamChannel(env, u, "own")
		tokens = append(tokens, tok)
	}
	const perUser = 8
	streams := make([][]*sseClient, len(users))
	for i, u := range users {
		for range perUser {
			c := streamOpen(env, u.Token)
			c.waitComment("connected")
			streams[i] = append(streams[i], c)
		}
	}
	want := make([][]string, len(users))
	send := func(i int, title string) {
		id := env.do(200, "POST", "/v1/send/"+tokens[i], map[string]any{"title": title}, "").Str("id")
		want[i] = append(want[i], id)
		if i == 0 { // an approval message: b and c see it too
			want[1] = append(want[1], id)
			want[2] = append(want[2], id)
		}
	}
	for k := range 20 {
		send(k%len(users), "message "+strconv.Itoa(k))
	}
	// Then one message of each user's own, sent last: anything a stream
	// got that it should not have shifts what it reads.
	for i := range users {
		send(i, "marker")
	}
	for i, u := range users {
		for j, c := range streams[i] {
			if got := streamReadIDs(t, c, len(want[i])); !slices.Equal(got, want[i]) {
				t.Fatalf("%s stream %d got %v, want %v", u.Email, j, got, want[i])
			}
		}
	}
}

// smallWindowClient reads through connections whose receive buffer is as
// small as the kernel allows, so that a client that stops reading soon
// blocks the server's writes to it.
func smallWindowClient() *http.Client {
	d := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048) })
		if err != nil {
			return err
		}
		return serr
	}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// TestStreamHubSlowConsumer: a stream whose client stops reading falls
// behind; the user's other stream is not slowed by it, and once the slow
// client reads again it gets every event from the database, in order, with
// no gap and no duplicate, then live ones again.
func TestStreamHubSlowConsumer(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("slow@example.com")
	_, token := streamChannel(env, u, "busy")
	fast := streamOpen(env, u.Token)
	fast.waitComment("connected")
	// Its 200 means it is subscribed; it reads nothing until released.
	slow := streamConnect(env, smallWindowClient(), u.Token, "/v1/stream", true)

	// The fast client reads all along.
	var fastMu sync.Mutex
	var fastEvents []sseEvent
	stopFast, fastStopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(fastStopped)
		for {
			select {
			case ev := <-fast.events:
				fastMu.Lock()
				fastEvents = append(fastEvents, ev)
				fastMu.Unlock()
			case <-stopFast:
				return
			}
		}
	}()

	// Big messages, in rounds, until the stalled stream has fallen behind
	// (its connection holds some megabytes first), then one round more.
	body := strings.Repeat("x", 10000)
	var sent []string
	var mu sync.Mutex
	sendRound := func() {
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range 5 {
					r := env.request("POST", "/v1/send/"+token, map[string]any{"title": fmt.Sprint("m", w, k), "body": body}, "")
					if r.Status != 200 {
						t.Errorf("send: %d %s", r.Status, r.Raw)
						return
					}
					mu.Lock()
					sent = append(sent, r.Str("id"))
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
	}
	for env.s.hub.Dropped() == 0 && len(sent) < 2000 {
		sendRound()
	}
	sendRound()
	n := len(sent)

	// The fast stream has everything while the slow one is still stuck.
	testkit.Eventually(t, streamWait, func() error {
		fastMu.Lock()
		got := len(fastEvents)
		fastMu.Unlock()
		if got < n {
			return fmt.Errorf("the fast stream got %d of %d events while the other was stalled", got, n)
		}
		return nil
	})
	close(stopFast)
	<-fastStopped
	var fastIDs []string
	for _, ev := range fastEvents {
		fastIDs = append(fastIDs, streamWantEvent(t, ev, "message.created", ev.JSON(t)["id"].(string))["id"].(string))
	}
	if got := env.s.hub.Dropped(); got == 0 {
		t.Fatalf("the hub dropped no frame for the stalled stream after %d messages: it did not fall behind", n)
	}
	metrics := string(env.request("GET", "/metrics", nil, "").Raw)
	if !strings.Contains(metrics, "herald_streams_open 2\n") ||
		!strings.Contains(metrics, "herald_stream_events_dropped_total "+strconv.FormatInt(env.s.hub.Dropped(), 10)+"\n") {
		t.Errorf("/metrics does not show 2 open streams and %d dropped events", env.s.hub.Dropped())
	}
	slow.release()
	slowIDs := streamReadIDs(t, slow, n)
	if !slices.Equal(slowIDs, fastIDs) {
		t.Fatalf("the stream that fell behind got %d events, differing from the other stream's", len(slowIDs))
	}
	slices.Sort(sent)
	got := slices.Sorted(slices.Values(fastIDs))
	if !slices.Equal(got, sent) {
		t.Fatal("the events are not the messages sent, each once")
	}
	// And it is live again: the next event is the next message.
	marker := streamSend(env, token, "marker")
	streamWantEvent(t, slow.next(streamWait), "message.created", marker)
	streamWantEvent(t, fast.next(streamWait), "message.created", marker)
}

// TestStreamHubResumeWhileSending: streams that open, with and without
// Last-Event-ID, while messages are being sent continue without a gap or a
// duplicate where the database's part hands over to the hub's.
func TestStreamHubResumeWhileSending(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("busy@example.com")
	_, token := streamChannel(env, u, "busy")
	first := streamOpen(env, u.Token)
	first.waitComment("connected")

	const n = 60
	done := make(chan []string, 1)
	go func() {
		var ids []string
		for k := range n {
			r := env.request("POST", "/v1/send/"+token, map[string]any{"title": fmt.Sprint("m", k)}, "")
			ids = append(ids, r.Str("id"))
		}
		done <- ids
	}()
	var all []sseEvent
	for range 10 {
		all = append(all, first.next(streamWait))
	}
	resumed := streamOpen(env, u.Token, "Last-Event-ID", all[4].ID) // the 5th event seen
	fresh := streamOpen(env, u.Token)                               // from now on
	for len(all) < n {
		all = append(all, first.next(streamWait))
	}
	sent := <-done
	for i, ev := range all {
		streamWantEvent(t, ev, "message.created", sent[i])
	}
	// The resumed stream: exactly the events after the 5th.
	for _, want := range all[5:] {
		got := resumed.next(streamWait)
		if got.ID != want.ID {
			t.Fatalf("resumed stream: event %s, want %s", got.ID, want.ID)
		}
	}
	// The fresh stream: a run of the events without a hole, then the marker.
	marker := streamSend(env, token, "marker")
	ev := fresh.next(streamWait)
	i := slices.IndexFunc(all, func(e sseEvent) bool { return e.ID == ev.ID })
	for ev.ID != "" && i >= 0 {
		if ev.ID != all[i].ID {
			t.Fatalf("fresh stream: event %s after %s, want %s", ev.ID, all[i-1].ID, all[i].ID)
		}
		ev, i = fresh.next(streamWait), i+1
		if i == len(all) {
			break
		}
	}
	if i < 0 {
		// It opened after the last send: the marker is its first event.
		i = len(all)
	}
	if i != len(all) {
		t.Fatalf("fresh stream: stopped at event %d of %d", i, len(all))
	}
	streamWantEvent(t, ev, "message.created", marker)
	streamWantEvent(t, resumed.next(streamWait), "message.created", marker)
}

// TestStreamEndsWhenRevokedElsewhere: a key revoked and sessions ended by
// another process on the same database (the CLI, another replica) end the
// live streams they opened before the next event reaches them.
func TestStreamEndsWhenRevokedElsewhere(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	ann := env.newUser("ann@example.com")
	_, token := streamChannel(env, ann, "ops")
	key := env.do(201, "POST", "/v1/keys", map[string]string{"name": "cli"}, ann.Token)
	byKey, bySession := streamOpen(env, key.Str("key")), streamOpen(env, ann.Token)
	byKey.waitComment("connected")
	bySession.waitComment("connected")
	// Both live: an event reaches them.
	id := streamSend(env, token, "before")
	streamWantEvent(t, byKey.next(streamWait), "message.created", id)
	streamWantEvent(t, bySession.next(streamWait), "message.created", id)

	other, err := store.Open(context.Background(), env.dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.RevokeAPIKey(context.Background(), ann.ID, key.Str("id")); err != nil {
		t.Fatal(err)
	}
	if err := other.DeleteUserSessions(context.Background(), ann.ID); err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	streamSend(env, token, "after revocation")
	streamsEnd(t, "revoked elsewhere", map[string]*sseClient{"API key": byKey, "session": bySession})
}
