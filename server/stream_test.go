package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// sseEvent is one Server-Sent Events frame with data.
type sseEvent struct {
	ID    string
	Event string
	Data  string
	At    time.Time // when its closing blank line was read
}

// JSON decodes the event's data.
func (ev sseEvent) JSON(t *testing.T) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(ev.Data), &out); err != nil {
		t.Fatalf("event %s %s: data %q is not a JSON object: %v", ev.ID, ev.Event, ev.Data, err)
	}
	return out
}

// sseClient reads a live stream on its own goroutine, as a browser's
// EventSource does.
type sseClient struct {
	t      testing.TB
	res    *http.Response
	cancel context.CancelFunc
	events chan sseEvent
	done   chan struct{} // closed when the body ends

	mu       sync.Mutex
	comments []string
	retry    string

	hold        chan struct{} // nil, or closed when the client may read
	releaseOnce sync.Once
}

// release lets a held client read.
func (c *sseClient) release() {
	c.releaseOnce.Do(func() {
		if c.hold != nil {
			close(c.hold)
		}
	})
}

// streamOpen opens GET /v1/stream with token and extra header pairs and
// waits for the 200; the stream is closed when the test ends.
func streamOpen(e *testEnv, token string, headers ...string) *sseClient {
	e.t.Helper()
	return streamOpenPath(e, token, "/v1/stream", headers...)
}

func streamOpenPath(e *testEnv, token, path string, headers ...string) *sseClient {
	e.t.Helper()
	return streamOpenWith(e, e.srv.Client(), token, path, headers...)
}

// streamOpenWith is streamOpenPath through client.
func streamOpenWith(e *testEnv, client *http.Client, token, path string, headers ...string) *sseClient {
	e.t.Helper()
	return streamConnect(e, client, token, path, false, headers...)
}

// streamConnect opens a stream; with hold, its client reads nothing until
// release is called.
func streamConnect(e *testEnv, client *http.Client, token, path string, hold bool, headers ...string) *sseClient {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := client.Do(req)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		cancel()
		res.Body.Close()
		e.t.Fatalf("GET %s: status %d, want 200", path, res.StatusCode)
	}
	c := &sseClient{t: e.t, res: res, cancel: cancel, events: make(chan sseEvent, 100), done: make(chan struct{})}
	if hold {
		c.hold = make(chan struct{})
	}
	go c.read()
	// Registered after newTestEnv's clean-up, so it runs first: the test
	// server's Close waits for open requests.
	e.t.Cleanup(c.close)
	return c
}

func (c *sseClient) read() {
	defer close(c.done)
	defer close(c.events)
	if c.hold != nil {
		<-c.hold
	}
	var ev sseEvent
	var data []string
	sc := bufio.NewScanner(c.res.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if ev.Event != "" || data != nil {
				ev.Data, ev.At = strings.Join(data, "\n"), time.Now()
				c.events <- ev
			}
			ev, data = sseEvent{}, nil
			continue
		}
		if comment, ok := strings.CutPrefix(line, ":"); ok {
			c.mu.Lock()
			c.comments = append(c.comments, strings.TrimSpace(comment))
			c.mu.Unlock()
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.ID = value
		case "event":
			ev.Event = value
		case "data":
			data = append(data, value)
		case "retry":
			c.mu.Lock()
			c.retry = value
			c.mu.Unlock()
		}
	}
}

func (c *sseClient) close() {
	c.release()
	c.cancel()
	c.res.Body.Close()
	for range c.events { // unblock the reader if nobody took what it queued
	}
	<-c.done
}

// streamWait is how long a test waits for something a stream must do. It
// bets on nothing: it only turns a hang into a failure, on a machine as
// loaded as it may be.
const streamWait = 30 * time.Second

// next returns the next event, failing the test after wait.
func (c *sseClient) next(wait time.Duration) sseEvent {
	c.t.Helper()
	select {
	case ev, ok := <-c.events:
		if !ok {
			c.t.Fatal("the stream ended while an event was expected")
		}
		return ev
	case <-time.After(wait):
		c.t.Fatalf("no event within %v", wait)
	}
	return sseEvent{}
}

// waitComment waits until the stream has sent the comment want.
func (c *sseClient) waitComment(want string) {
	c.t.Helper()
	testkit.Eventually(c.t, streamWait, func() error {
		c.mu.Lock()
		found := slices.Contains(c.comments, want)
		c.mu.Unlock()
		if !found {
			return fmt.Errorf("the stream did not send the comment %q", want)
		}
		return nil
	})
}

// streamChannel creates a channel for u and returns its id and webhook token.
func streamChannel(e *testEnv, u *testUser, name string) (id, token string) {
	e.t.Helper()
	c := e.newChannel(u, name)
	id, _ = c["id"].(string)
	token, _ = c["webhook_token"].(string)
	return id, token
}

// streamSend sends a message with an "ack" button through token.
func streamSend(e *testEnv, token, title string) string {
	e.t.Helper()
	r := e.do(200, "POST", "/v1/send/"+token, map[string]any{"title": title, "body": "**" + title + "**",
		"actions": []any{map[string]any{"type": "button", "label": "Ack", "key": "ack"}}}, "")
	return r.Str("id")
}

// streamWantEvent checks an event's type and message id.
func streamWantEvent(t *testing.T, ev sseEvent, typ, messageID string) map[string]any {
	t.Helper()
	data := ev.JSON(t)
	if ev.Event != typ || data["id"] != messageID {
		t.Fatalf("got event %s %s for %v, want %s for %s", ev.ID, ev.Event, data["id"], typ, messageID)
	}
	if _, err := strconv.ParseInt(ev.ID, 10, 64); err != nil {
		t.Fatalf("event id %q is not an integer", ev.ID)
	}
	return data
}

func TestStreamLifecycle(t *testing.T) {
	env := newTestEnv(t)
	ann, bob := env.newUser("ann@example.com"), env.newUser("bob@example.com")
	chID, token := streamChannel(env, ann, "ops")
	_, bobToken := streamChannel(env, bob, "bob")

	annStream, bobStream := streamOpen(env, ann.Token), streamOpen(env, bob.Token)
	for _, h := range [][2]string{{"Content-Type", "text/event-stream"}, {"Cache-Control", "no-cache"}} {
		if got := annStream.res.Header.Get(h[0]); got != h[1] {
			t.Errorf("%s = %q, want %q", h[0], got, h[1])
		}
	}
	annStream.waitComment("connected")
	bobStream.waitComment("connected")
	annStream.mu.Lock()
	retry := annStream.retry
	annStream.mu.Unlock()
	if n, err := strconv.Atoi(retry); err != nil || n <= 0 {
		t.Errorf("retry: %q, want a reconnection delay in milliseconds", retry)
	}

	// message.created carries the message as GET /v1/messages/:id shows it.
	id := streamSend(env, token, "Disk full")
	created := annStream.next(streamWait)
	data := streamWantEvent(t, created, "message.created", id)
	if got := env.do(200, "GET", "/v1/messages/"+id, nil, ann.Token).Body; !reflect.DeepEqual(data, got) {
		t.Errorf("message.created data = %v\nGET /v1/messages/%s = %v", data, id, got)
	}
	if data["channel_id"] != chID || data["status"] != "pending" {
		t.Errorf("created message = %v, want channel %s, status pending", data, chID)
	}

	env.do(200, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "ack"}, ann.Token)
	updated := annStream.next(streamWait)
	if data := streamWantEvent(t, updated, "message.updated", id); data["status"] != "submitted" {
		t.Errorf("message.updated status = %v, want submitted", data["status"])
	}

	env.do(200, "DELETE", "/v1/messages/"+id, nil, ann.Token)
	deleted := annStream.next(streamWait)
	if got, want := deleted.JSON(t), map[string]any{"id": id, "channel_id": chID}; deleted.Event != "message.deleted" || !reflect.DeepEqual(got, want) {
		t.Errorf("got %s %v, want message.deleted %v", deleted.Event, got, want)
	}
	ids := []string{created.ID, updated.ID, deleted.ID}
	if !slices.IsSortedFunc(ids, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y }) {
		t.Errorf("event ids %v do not increase", ids)
	}

	// Bob saw none of it: the first event of his stream is his own message.
	own := streamSend(env, bobToken, "bob's own")
	streamWantEvent(t, bobStream.next(streamWait), "message.created", own)

	// Reconnecting after the first event replays the other two, in order,
	// then carries on live with no duplicate.
	again := streamOpen(env, ann.Token, "Last-Event-ID", created.ID)
	for _, want := range []sseEvent{updated, deleted} {
		got := again.next(streamWait)
		if got.ID != want.ID || got.Event != want.Event {
			t.Fatalf("replayed %s %s, want %s %s", got.ID, got.Event, want.ID, want.Event)
		}
		// The message is gone by now, so even the update carries its ids only.
		if got, want := got.JSON(t), map[string]any{"id": id, "channel_id": chID}; !reflect.DeepEqual(got, want) {
			t.Errorf("replayed %s data = %v, want %v", got["id"], got, want)
		}
	}
	id2 := streamSend(env, token, "after the reconnect")
	streamWantEvent(t, again.next(streamWait), "message.created", id2)
	streamWantEvent(t, annStream.next(streamWait), "message.created", id2)

	// The query parameter serves clients that cannot set headers.
	env.do(200, "DELETE", "/v1/messages/"+id2, nil, ann.Token)
	byQuery := streamOpenPath(env, ann.Token, "/v1/stream?last_event_id="+deleted.ID)
	streamWantEvent(t, byQuery.next(streamWait), "message.created", id2)
	streamWantEvent(t, byQuery.next(streamWait), "message.deleted", id2)

	// Nothing else reached either of ann's first two streams: the next
	// event of each is the one sent last.
	for _, c := range []*sseClient{annStream, again} {
		streamWantEvent(t, c.next(streamWait), "message.deleted", id2)
	}
	marker := streamSend(env, token, "marker")
	for _, c := range []*sseClient{annStream, again} {
		streamWantEvent(t, c.next(streamWait), "message.created", marker)
	}
	// Nor did bob's: his next event is his own.
	own2 := streamSend(env, bobToken, "bob's second")
	streamWantEvent(t, bobStream.next(streamWait), "message.created", own2)
}

func TestStreamApproverSeesApprovalMessages(t *testing.T) {
	env := newTestEnv(t)
	ann, bob, cat := env.newUser("ann@example.com"), env.newUser("bob@example.com"), env.newUser("cat@example.com")
	chID, token := streamChannel(env, ann, "deploys")
	env.do(200, "PATCH", "/v1/channels/"+chID, map[string]any{"approval": map[string]any{
		"required_count": 1, "approvers": []string{bob.ID}, "window_seconds": 3600}}, ann.Token)
	env.acceptInvitations(bob)
	bobStream, catStream := streamOpen(env, bob.Token), streamOpen(env, cat.Token)
	bobStream.waitComment("connected")
	catStream.waitComment("connected")

	r := env.do(200, "POST", "/v1/send/"+token, map[string]any{"title": "ship it?"}, "")
	id := r.Str("id")
	streamWantEvent(t, bobStream.next(streamWait), "message.created", id)

	env.do(200, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "approve"}, bob.Token)
	streamWantEvent(t, bobStream.next(streamWait), "message.updated", id)

	_, catToken := streamChannel(env, cat, "cat")
	own := streamSend(env, catToken, "cat's own")
	streamWantEvent(t, catStream.next(streamWait), "message.created", own)
}

func TestStreamCredentials(t *testing.T) {
	env := newTestEnv(t)
	ann := env.newUser("ann@example.com")
	wantError(t, env.request("GET", "/v1/stream", nil, ""), 401, "invalid_token")
	wantError(t, env.request("GET", "/v1/stream", nil, "not-a-token"), 401, "invalid_token")
	wantError(t, env.request("GET", "/v1/stream", nil, ann.Token, "Last-Event-ID", "abc"), 400, "invalid_payload")

	// An API key opens a stream too (scripts and CLIs).
	_, token := streamChannel(env, ann, "ops")
	c := streamOpen(env, env.apiKey(ann))
	c.waitComment("connected")
	id := streamSend(env, token, "by key")
	streamWantEvent(t, c.next(streamWait), "message.created", id)
}

func TestStreamCloseStreams(t *testing.T) {
	env := newTestEnv(t)
	ann := env.newUser("ann@example.com")
	a, b := streamOpen(env, ann.Token), streamOpen(env, ann.Token)
	a.waitComment("connected")
	b.waitComment("connected")

	start := time.Now()
	env.s.CloseStreams()
	env.s.CloseStreams() // the HTTP server may call it more than once
	for name, c := range map[string]*sseClient{"first": a, "second": b} {
		select {
		case <-c.done:
		case <-time.After(streamWait):
			t.Fatalf("the %s stream was still open %v after CloseStreams", name, streamWait)
		}
	}
	t.Logf("streams ended %v after CloseStreams", time.Since(start))
}

// vapidPoint decodes a base64url VAPID public key and checks that it is an
// uncompressed P-256 point.
func vapidPoint(t *testing.T, key string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(key)
	if err != nil {
		t.Fatalf("public key %q is not unpadded base64url: %v", key, err)
	}
	if len(b) != 65 || b[0] != 0x04 {
		t.Fatalf("public key is %d bytes starting %#x, want 65 starting 0x04", len(b), b[0])
	}
	if _, err := ecdh.P256().NewPublicKey(b); err != nil {
		t.Fatalf("public key is not on P-256: %v", err)
	}
	return b
}

func TestVAPIDPublicKeyEndpoint(t *testing.T) {
	env := newTestEnv(t)
	first := env.do(200, "GET", "/v1/push/vapid-public-key", nil, "")
	if len(first.Body) != 1 {
		t.Errorf("body %s, want only public_key", first.Raw)
	}
	key := first.Str("public_key")
	vapidPoint(t, key)
	if again := env.do(200, "GET", "/v1/push/vapid-public-key", nil, "").Str("public_key"); again != key {
		t.Errorf("second call gave %q, want the same key %q", again, key)
	}
	pub, priv, err := env.s.svc.VAPIDKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if pub != key {
		t.Errorf("the endpoint serves %q, the pushes would sign with the pair of %q", key, pub)
	}
	d, err := base64.RawURLEncoding.DecodeString(priv)
	if err != nil || len(d) != 32 {
		t.Fatalf("private key: %d bytes (%v), want 32", len(d), err)
	}
	k, err := ecdh.P256().NewPrivateKey(d)
	if err != nil {
		t.Fatalf("private key: %v", err)
	}
	if !bytes.Equal(k.PublicKey().Bytes(), vapidPoint(t, key)) {
		t.Error("the stored private key does not belong to the public key")
	}
}

func TestVAPIDKeysSurviveReopen(t *testing.T) {
	path := pgtest.Or(t, filepath.Join(t.TempDir(), "herald.db"))
	open := func() *store.Store {
		st, err := store.Open(context.Background(), path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	pub, priv, err := service.New(st, service.Options{}).VAPIDKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st = open()
	defer st.Close()
	pub2, priv2, err := service.New(st, service.Options{}).VAPIDKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if pub2 != pub || priv2 != priv {
		t.Fatal("the VAPID keys changed when the database was reopened")
	}
	// And the endpoint of a server over the reopened store serves them.
	s := New(Options{Config: config.Default(), Store: st, Version: "test", Logger: slog.New(slog.DiscardHandler)})
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/v1/push/vapid-public-key", nil))
	var body map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &body); rec.Code != 200 || err != nil {
		t.Fatalf("GET /v1/push/vapid-public-key: %d %s", rec.Code, rec.Body)
	}
	if got := body["public_key"]; got != pub {
		t.Errorf("public_key after reopening = %q, want %q", got, pub)
	}
}

// TestStreamEndsWhenCredentialRevoked: logging out or revoking an API key
// stops the credential at once, including a stream it opened.
func TestStreamEndsWhenCredentialRevoked(t *testing.T) {
	env := newTestEnv(t)
	ann := env.newUser("ann@example.com")
	_, token := streamChannel(env, ann, "ops")
	key := env.do(201, "POST", "/v1/keys", map[string]string{"name": "cli"}, ann.Token)

	byKey, bySession := streamOpen(env, key.Str("key")), streamOpen(env, ann.Token)
	byKey.waitComment("connected")
	bySession.waitComment("connected")

	env.do(200, "DELETE", "/v1/keys/"+key.Str("id"), nil, ann.Token)
	env.do(200, "POST", "/v1/auth/logout", nil, ann.Token)
	streamSend(env, token, "after revocation")
	streamsEnd(t, "revoked", map[string]*sseClient{"API key": byKey, "session": bySession})
}

// streamsEnd checks that each stream ends without another event; how
// describes why it should ("revoked", "revoked elsewhere").
func streamsEnd(t *testing.T, how string, streams map[string]*sseClient) {
	t.Helper()
	for name, c := range streams {
		select {
		case ev, ok := <-c.events:
			if ok {
				t.Errorf("the stream of a %s %s got %s %s", name, how, ev.Event, ev.Data)
			}
		case <-time.After(streamWait):
			t.Errorf("the stream of a %s %s is still open", name, how)
		}
	}
}

// TestStreamChannelDeleteSendsDeletions checks that deleting a channel tells
// live clients that each of its messages is gone.
func TestStreamChannelDeleteSendsDeletions(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("del-stream@example.com")
	chID, token := streamChannel(env, u, "doomed")
	ids := []string{streamSend(env, token, "one"), streamSend(env, token, "two")}
	c := streamOpen(env, u.Token)
	defer c.close()
	c.waitComment("connected")
	env.do(200, "DELETE", "/v1/channels/"+chID, nil, u.Token)
	got := map[string]bool{}
	for range ids {
		ev := c.next(streamWait)
		if ev.Event != "message.deleted" {
			t.Fatalf("event %q, want message.deleted", ev.Event)
		}
		data := ev.JSON(t)
		if data["channel_id"] != chID {
			t.Fatalf("deleted event for channel %v, want %s", data["channel_id"], chID)
		}
		got[data["id"].(string)] = true
	}
	for _, id := range ids {
		if !got[id] {
			t.Fatalf("no message.deleted for %s; got %v", id, got)
		}
	}
}

// TestStreamUserDeleteTellsApprovers: when the owner of an approval channel
// deletes their account, its messages go with it, and an approver's live
// stream hears of each one. An approver's own channel is untouched.
func TestStreamUserDeleteTellsApprovers(t *testing.T) {
	f := aprSetup(t)
	env := f.env
	f.rule(1, 3600, f.b)
	env.acceptInvitations(f.b)
	ids := []string{f.send(), f.send()}
	_, bobToken := streamChannel(env, f.b, "bob's own")
	bobsOwn := streamSend(env, bobToken, "bob's own message")

	bob := streamOpen(env, f.b.Token)
	defer bob.close()
	bob.waitComment("connected")
	env.do(200, "DELETE", "/v1/auth/user", nil, f.a.Token)

	got := map[string]bool{}
	for range ids {
		ev := bob.next(streamWait)
		data := ev.JSON(t)
		if ev.Event != "message.deleted" || data["channel_id"] != f.chID {
			t.Fatalf("bob got %s %v, want message.deleted in %s", ev.Event, data, f.chID)
		}
		got[data["id"].(string)] = true
	}
	for _, id := range ids {
		if !got[id] {
			t.Errorf("no message.deleted for %s; got %v", id, got)
		}
	}
	// Nothing else: bob's next event is about his own message.
	marker := streamSend(env, bobToken, "marker")
	streamWantEvent(t, bob.next(streamWait), "message.created", marker)
	env.do(200, "GET", "/v1/messages/"+bobsOwn, nil, f.b.Token)
}
