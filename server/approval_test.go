package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/delivery"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/signature"
	"github.com/heraldhq/herald/store"
)

// Every check in this file goes through HTTP: the API for votes, polls and
// messages, and a real delivery queue posting to a real receiver for the
// approval.resolved callbacks.

// aprCallback is one callback the receiver got.
type aprCallback struct {
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// aprReceiver is a callback endpoint that records every POST and answers 200.
type aprReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []aprCallback
}

func aprNewReceiver(t *testing.T) *aprReceiver {
	t.Helper()
	rc := &aprReceiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		rc.mu.Lock()
		rc.got = append(rc.got, aprCallback{Header: r.Header.Clone(), Raw: raw, Body: body})
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *aprReceiver) url() string { return rc.srv.URL + "/hook" }

func (rc *aprReceiver) all() []aprCallback {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// wait returns the callbacks once at least n have arrived.
func (rc *aprReceiver) wait(t *testing.T, n int) []aprCallback {
	t.Helper()
	var got []aprCallback
	testkit.Eventually(t, 5*time.Second, func() error {
		if got = rc.all(); len(got) < n {
			return fmt.Errorf("%d callbacks arrived, want %d", len(got), n)
		}
		return nil
	})
	return got
}

// settle waits d, so that a callback that should not come has time to
// arrive, and fails unless exactly n have arrived.
func (rc *aprReceiver) settle(t *testing.T, n int, d time.Duration) []aprCallback {
	t.Helper()
	time.Sleep(d)
	got := rc.all()
	if len(got) != n {
		var bodies []string
		for _, c := range got {
			bodies = append(bodies, string(c.Raw))
		}
		t.Fatalf("%d callbacks arrived, want %d: %v", len(got), n, bodies)
	}
	return got
}

// aprStartQueue runs a real delivery queue over env's store, on env's clock.
func aprStartQueue(t *testing.T, env *testEnv) {
	t.Helper()
	q := delivery.New(env.st, delivery.Config{Workers: 2, Timeout: 2 * time.Second, BackoffBase: 20 * time.Millisecond,
		BackoffMax: 80 * time.Millisecond, MaxAttempts: 8, UserAgent: "Herald-Webhooks/test",
		Guard: netguard.Policy{AllowLoopback: true}},
		delivery.Options{Now: env.clock.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = q.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// aprFixture is an owner A with a channel, two more users B and C, a
// receiver and a running delivery queue.
type aprFixture struct {
	env         *testEnv
	a, b, c     *testUser
	chID, token string
	secret      string
	rcv         *aprReceiver
}

func aprSetup(t *testing.T) *aprFixture {
	t.Helper()
	env := newTestEnv(t)
	f := &aprFixture{env: env, a: env.newUser("ann@example.com"), b: env.newUser("bob@example.com"), c: env.newUser("cat@example.com")}
	ch := env.newChannel(f.a, "prod deploys")
	f.chID, f.token = ch["id"].(string), ch["webhook_token"].(string)
	f.secret = env.do(200, "GET", "/v1/channels/"+f.chID+"/secret", nil, f.a.Token).Str("webhook_secret")
	f.rcv = aprNewReceiver(t)
	aprStartQueue(t, env)
	return f
}

// rule sets the channel's approval rule (nil removes it) and returns the channel.
func (f *aprFixture) rule(required, window int, approvers ...*testUser) response {
	f.env.t.Helper()
	ids := make([]string, len(approvers))
	for i, u := range approvers {
		ids[i] = u.ID
	}
	return f.env.do(200, "PATCH", "/v1/channels/"+f.chID, map[string]any{"approval": map[string]any{
		"required_count": required, "approvers": ids, "window_seconds": window}}, f.a.Token)
}

// send sends a message without actions, with the receiver as callback_url.
func (f *aprFixture) send() string {
	f.env.t.Helper()
	return f.env.do(200, "POST", "/v1/send/"+f.token, map[string]any{"title": "Deploy v2 to prod?",
		"callback_url": f.rcv.url()}, "").Str("id")
}

func (f *aprFixture) vote(id string, u *testUser, action string, responses any) response {
	f.env.t.Helper()
	body := map[string]any{"action": action}
	if responses != nil {
		body["responses"] = responses
	}
	return f.env.request("POST", "/v1/messages/"+id+"/respond", body, u.Token)
}

func (f *aprFixture) poll(id string) response {
	f.env.t.Helper()
	return f.env.do(200, "GET", "/v1/callback/"+f.token+"/"+id, nil, "")
}

// message reads message id as u and returns it with its approval object.
func (f *aprFixture) message(id string, u *testUser) (msg, approval map[string]any) {
	f.env.t.Helper()
	r := f.env.do(200, "GET", "/v1/messages/"+id, nil, u.Token)
	a, ok := r.Body["approval"].(map[string]any)
	if !ok {
		f.env.t.Fatalf("message %s has approval %v, want an object", id, r.Body["approval"])
	}
	return r.Body, a
}

// waitApproval polls the message until its approval status is want.
func (f *aprFixture) waitApproval(id, want string) map[string]any {
	f.env.t.Helper()
	var a map[string]any
	testkit.Eventually(f.env.t, 5*time.Second, func() error {
		if _, a = f.message(id, f.a); a["status"] != want {
			return fmt.Errorf("approval of %s is %v, want %s", id, a["status"], want)
		}
		return nil
	})
	return a
}

// aprNum reads a JSON number as an int (-1 when it is not one).
func aprNum(v any) int {
	n, ok := v.(float64)
	if !ok {
		return -1
	}
	return int(n)
}

// aprKeys returns an object's keys, sorted.
func aprKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// aprSameJSON fails unless got and want are the same JSON value.
func aprSameJSON(t testing.TB, what string, got any, want string) {
	t.Helper()
	raw, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var g, w any
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want %q: %v", what, want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s = %s, want %s", what, raw, want)
	}
}

// aprVote is a vote a test expects to see.
type aprVote struct {
	user   *testUser
	action string
	data   string // response_data as JSON
	at     time.Time
}

// aprCheckVotes compares a votes array with want, field by field.
func aprCheckVotes(t testing.TB, what string, got any, want []aprVote) {
	t.Helper()
	arr, ok := got.([]any)
	if !ok || len(arr) != len(want) {
		t.Fatalf("%s = %v, want %d votes", what, got, len(want))
	}
	for i, w := range want {
		v, ok := arr[i].(map[string]any)
		if !ok {
			t.Fatalf("%s[%d] = %v, want an object", what, i, arr[i])
		}
		if got, want := aprKeys(v), []string{"action", "responded_at", "response_data", "user_id", "user_name"}; !slices.Equal(got, want) {
			t.Fatalf("%s[%d] has fields %v, want %v", what, i, got, want)
		}
		if v["user_id"] != w.user.ID || v["user_name"] != w.user.Name || v["action"] != w.action {
			t.Fatalf("%s[%d] = %v, want user %s (%s) %s", what, i, v, w.user.ID, w.user.Name, w.action)
		}
		if _, ok := v["response_data"].(map[string]any); !ok {
			t.Fatalf("%s[%d].response_data = %v, want an object", what, i, v["response_data"])
		}
		aprSameJSON(t, fmt.Sprintf("%s[%d].response_data", what, i), v["response_data"], w.data)
		at, err := time.Parse(time.RFC3339, fmt.Sprint(v["responded_at"]))
		if err != nil || !at.Equal(w.at) {
			t.Fatalf("%s[%d].responded_at = %v, want %s (err %v)", what, i, v["responded_at"], ts(w.at), err)
		}
	}
}

// aprEvent is the approval.resolved callback a test expects.
type aprEvent struct {
	id, status                      string
	approvals, rejections, required int
	votes                           []aprVote
	at                              time.Time
}

// checkEvent checks a callback against the approval.resolved event of
// docs/answers.md ("Events"), field by field, and its signature with the
// channel secret.
func (f *aprFixture) checkEvent(cb aprCallback, want aprEvent) {
	t := f.env.t
	t.Helper()
	if err := signature.Verify(f.secret, cb.Header.Get("X-Service-Signature"), cb.Raw, f.env.clock.Now(), 300*time.Second); err != nil {
		t.Fatalf("signature %q does not verify: %v", cb.Header.Get("X-Service-Signature"), err)
	}
	if got := cb.Header.Get("X-Service-Event"); got != "approval.resolved" {
		t.Errorf("X-Service-Event = %q, want approval.resolved", got)
	}
	if got := cb.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", got)
	}
	b := cb.Body
	wantKeys := []string{"approvals_received", "channel_id", "event", "message_id", "metadata",
		"rejections_received", "required_count", "status", "timestamp", "votes"}
	if got := aprKeys(b); !slices.Equal(got, wantKeys) { // in particular, no triggered_by
		t.Fatalf("callback fields %v, want %v; body %s", got, wantKeys, cb.Raw)
	}
	if b["event"] != "approval.resolved" || b["message_id"] != want.id || b["channel_id"] != f.chID || b["status"] != want.status {
		t.Fatalf("callback %s, want event approval.resolved, message %s, channel %s, status %s", cb.Raw, want.id, f.chID, want.status)
	}
	if aprNum(b["approvals_received"]) != want.approvals || aprNum(b["rejections_received"]) != want.rejections ||
		aprNum(b["required_count"]) != want.required {
		t.Fatalf("callback counts %v/%v/%v, want %d/%d/%d", b["approvals_received"], b["rejections_received"],
			b["required_count"], want.approvals, want.rejections, want.required)
	}
	if b["metadata"] != nil {
		t.Fatalf("metadata = %v, want null", b["metadata"])
	}
	at, err := time.Parse(time.RFC3339, fmt.Sprint(b["timestamp"]))
	if err != nil || !at.Equal(want.at) {
		t.Fatalf("timestamp = %v, want %s (err %v)", b["timestamp"], ts(want.at), err)
	}
	aprCheckVotes(t, "callback votes", b["votes"], want.votes)
}

func TestApprovalRulePatch(t *testing.T) {
	f := aprSetup(t)
	path := "/v1/channels/" + f.chID
	want := `{"required_count": 2, "approvers": ["` + f.a.ID + `", "` + f.b.ID + `", "` + f.c.ID + `"], "window_seconds": 3600}`
	aprSameJSON(t, "PATCH approval", f.rule(2, 3600, f.a, f.b, f.c).Body["approval"], want)
	aprSameJSON(t, "GET approval", f.env.do(200, "GET", path, nil, f.a.Token).Body["approval"], want)

	r := f.env.do(200, "PATCH", path, map[string]any{"approval": nil}, f.a.Token)
	if v, ok := r.Body["approval"]; !ok || v != nil {
		t.Fatalf("approval after null = %v, want null", r.Raw)
	}
	if v, ok := f.env.do(200, "GET", path, nil, f.a.Token).Body["approval"]; !ok || v != nil {
		t.Fatalf("GET approval after null = %v, want null", v)
	}
}

func TestApprovalTwoOfThree(t *testing.T) {
	f := aprSetup(t)
	env := f.env
	f.rule(2, 3600, f.a, f.b, f.c)
	id := f.send()
	sent := env.clock.Now()

	// Sent without actions: Approve and Reject buttons.
	msg, a := f.message(id, f.a)
	acts, _ := msg["actions"].([]any)
	if len(acts) != 2 {
		t.Fatalf("actions = %v, want Approve and Reject", msg["actions"])
	}
	for i, key := range []string{"approve", "reject"} {
		act, _ := acts[i].(map[string]any)
		if act["key"] != key || act["type"] != "button" {
			t.Fatalf("actions[%d] = %v, want a button with key %s", i, acts[i], key)
		}
	}
	if a["status"] != "pending" || aprNum(a["required_count"]) != 2 || a["deadline"] != ts(sent.Add(time.Hour)) {
		t.Fatalf("approval = %v, want pending, 2 required, deadline %s", a, ts(sent.Add(time.Hour)))
	}

	// B approves: pending, no callback.
	env.clock.Advance(time.Second)
	bAt := env.clock.Now()
	r := f.vote(id, f.b, "approve", map[string]any{"note": "x"})
	if r.Status != 200 || r.Body["ok"] != true || r.Str("status") != "pending" {
		t.Fatalf("B's vote: %d %s, want 200 ok pending", r.Status, r.Raw)
	}
	aprSameJSON(t, "pending poll", f.poll(id).Body, `{"status": "pending"}`)
	msg, a = f.message(id, f.a)
	if msg["status"] != "pending" || a["status"] != "pending" || aprNum(a["approvals_received"]) != 1 || aprNum(a["rejections_received"]) != 0 {
		t.Fatalf("message after one vote: status %v, approval %v", msg["status"], a)
	}
	bVote := aprVote{f.b, "approve", `{"note": "x"}`, bAt}
	aprCheckVotes(t, "approval votes", a["votes"], []aprVote{bVote})
	f.rcv.settle(t, 0, 200*time.Millisecond)

	// C approves: quorum, exactly one callback.
	env.clock.Advance(time.Second)
	cAt := env.clock.Now()
	r = f.vote(id, f.c, "approve", nil)
	if r.Status != 200 || r.Body["ok"] != true || r.Str("status") != "submitted" || r.Str("approval_status") != "approved" {
		t.Fatalf("C's vote: %d %s, want 200 submitted approved", r.Status, r.Raw)
	}
	f.rcv.wait(t, 1)
	cbs := f.rcv.settle(t, 1, 300*time.Millisecond)
	cVote := aprVote{f.c, "approve", `{}`, cAt}
	f.checkEvent(cbs[0], aprEvent{id: id, status: "approved", approvals: 2, rejections: 0, required: 2,
		votes: []aprVote{bVote, cVote}, at: cAt})

	// The poll carries the result and the approval summary, once.
	p := f.poll(id)
	if got, want := aprKeys(p.Body), []string{"approval", "approval_status", "result", "status", "submitted_at"}; !slices.Equal(got, want) {
		t.Fatalf("poll fields %v, want %v; %s", got, want, p.Raw)
	}
	if p.Str("status") != "submitted" || p.Str("approval_status") != "approved" || p.Str("submitted_at") != ts(cAt) {
		t.Fatalf("poll = %s, want submitted, approved at %s", p.Raw, ts(cAt))
	}
	aprSameJSON(t, "poll result", p.Body["result"], `{"message_id": "`+id+`", "channel_id": "`+f.chID+
		`", "timestamp": "`+ts(cAt)+`", "triggered_by": "approve", "responses": {}}`)
	summary, _ := p.Body["approval"].(map[string]any)
	if got, want := aprKeys(summary), []string{"approvals_received", "rejections_received", "required_count", "votes"}; !slices.Equal(got, want) {
		t.Fatalf("poll approval fields %v, want %v", got, want)
	}
	if aprNum(summary["approvals_received"]) != 2 || aprNum(summary["rejections_received"]) != 0 || aprNum(summary["required_count"]) != 2 {
		t.Fatalf("poll approval = %v, want 2/0/2", summary)
	}
	aprCheckVotes(t, "poll votes", summary["votes"], []aprVote{bVote, cVote})
	aprSameJSON(t, "second poll", f.poll(id).Body, `{"status": "already_read"}`)

	if _, a := f.message(id, f.a); a["status"] != "approved" || aprNum(a["approvals_received"]) != 2 {
		t.Fatalf("approval after quorum = %v, want approved with 2", a)
	}
	// A third approver's vote after the resolution is refused.
	if r := f.vote(id, f.a, "approve", nil); r.Status != 409 {
		t.Fatalf("vote after approval: %d %s, want 409", r.Status, r.Raw)
	}
	f.rcv.settle(t, 1, 100*time.Millisecond)
}

func TestApprovalFirstRejectResolves(t *testing.T) {
	f := aprSetup(t)
	env := f.env
	f.rule(2, 3600, f.a, f.b, f.c)

	// One rejection resolves at once, even with approvals still possible.
	id := f.send()
	at := env.clock.Now()
	r := f.vote(id, f.b, "reject", map[string]any{"reason": "not today"})
	if r.Status != 200 || r.Str("status") != "submitted" || r.Str("approval_status") != "rejected" {
		t.Fatalf("reject: %d %s, want submitted rejected", r.Status, r.Raw)
	}
	bVote := aprVote{f.b, "reject", `{"reason": "not today"}`, at}
	f.checkEvent(f.rcv.wait(t, 1)[0], aprEvent{id: id, status: "rejected", rejections: 1, required: 2,
		votes: []aprVote{bVote}, at: at})
	p := f.poll(id)
	if p.Str("status") != "submitted" || p.Str("approval_status") != "rejected" {
		t.Fatalf("poll = %s, want submitted rejected", p.Raw)
	}
	aprSameJSON(t, "poll result", p.Body["result"], `{"message_id": "`+id+`", "channel_id": "`+f.chID+
		`", "timestamp": "`+ts(at)+`", "triggered_by": "reject", "responses": {"reason": "not today"}}`)
	if r := f.vote(id, f.c, "approve", nil); r.Status != 409 {
		t.Fatalf("vote after rejection: %d %s, want 409", r.Status, r.Raw)
	}

	// After an approval, a rejection still decides.
	id2 := f.send()
	f.vote(id2, f.a, "approve", nil)
	env.clock.Advance(time.Second)
	at2 := env.clock.Now()
	if r := f.vote(id2, f.c, "reject", nil); r.Str("approval_status") != "rejected" {
		t.Fatalf("reject after an approval: %d %s, want rejected", r.Status, r.Raw)
	}
	cbs := f.rcv.wait(t, 2)
	f.checkEvent(cbs[1], aprEvent{id: id2, status: "rejected", approvals: 1, rejections: 1, required: 2,
		votes: []aprVote{{f.a, "approve", `{}`, at2.Add(-time.Second)}, {f.c, "reject", `{}`, at2}}, at: at2})
	f.rcv.settle(t, 2, 200*time.Millisecond)
}

func TestApprovalWindowExpiry(t *testing.T) {
	f := aprSetup(t)
	env := f.env
	f.rule(2, 60, f.a, f.b, f.c)
	id := f.send()
	deadline := env.clock.Now().Add(60 * time.Second)
	bAt := env.clock.Now()
	f.env.do(200, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "approve"}, f.b.Token)

	env.clock.Advance(61 * time.Second)
	env.st.Poke(store.TopicApprovals)
	a := f.waitApproval(id, "expired")
	if aprNum(a["approvals_received"]) != 1 || a["deadline"] != ts(deadline) {
		t.Fatalf("expired approval = %v, want 1 approval and deadline %s", a, ts(deadline))
	}
	if msg, _ := f.message(id, f.a); msg["status"] != "expired" {
		t.Fatalf("message status = %v, want expired", msg["status"])
	}
	aprSameJSON(t, "poll", f.poll(id).Body, `{"status": "expired"}`)
	f.checkEvent(f.rcv.wait(t, 1)[0], aprEvent{id: id, status: "expired", approvals: 1, required: 2,
		votes: []aprVote{{f.b, "approve", `{}`, bAt}}, at: deadline})

	// A vote after the window is refused and not counted.
	if r := f.vote(id, f.c, "approve", nil); r.Status != 409 {
		t.Fatalf("vote after expiry: %d %s, want 409", r.Status, r.Raw)
	}
	if _, a := f.message(id, f.a); len(a["votes"].([]any)) != 1 || a["status"] != "expired" {
		t.Fatalf("approval after a late vote = %v, want expired with 1 vote", a)
	}

	// A vote that comes after the deadline but before the worker runs closes
	// the approval as expired itself.
	id2 := f.send()
	deadline2 := env.clock.Now().Add(60 * time.Second)
	env.clock.Advance(60 * time.Second)
	if r := f.vote(id2, f.c, "reject", nil); r.Status != 409 {
		t.Fatalf("vote at the deadline: %d %s, want 409", r.Status, r.Raw)
	}
	if _, a := f.message(id2, f.a); a["status"] != "expired" || len(a["votes"].([]any)) != 0 {
		t.Fatalf("approval after a vote at the deadline = %v, want expired without votes", a)
	}
	cbs := f.rcv.wait(t, 2)
	f.checkEvent(cbs[1], aprEvent{id: id2, status: "expired", required: 2, votes: nil, at: deadline2})
	f.rcv.settle(t, 2, 200*time.Millisecond)
}

func TestApprovalDoubleVote(t *testing.T) {
	f := aprSetup(t)
	f.rule(2, 3600, f.a, f.b, f.c)
	id := f.send()
	f.env.do(200, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "approve"}, f.b.Token)
	wantError(t, f.vote(id, f.b, "approve", nil), 409, "already_voted")
	// A changed mind would reject the message; the first vote stands.
	wantError(t, f.vote(id, f.b, "reject", nil), 409, "already_voted")

	msg, a := f.message(id, f.a)
	if msg["status"] != "pending" || a["status"] != "pending" || aprNum(a["approvals_received"]) != 1 || aprNum(a["rejections_received"]) != 0 {
		t.Fatalf("after a double vote: status %v, approval %v", msg["status"], a)
	}
	if votes := a["votes"].([]any); len(votes) != 1 || votes[0].(map[string]any)["action"] != "approve" {
		t.Fatalf("votes = %v, want B's approve only", votes)
	}
	f.rcv.settle(t, 0, 100*time.Millisecond)
}

func TestApprovalWhoMayVote(t *testing.T) {
	f := aprSetup(t)
	dan := f.env.newUser("dan@example.com")
	f.rule(1, 3600, f.b, f.c) // the owner A is not an approver
	id := f.send()

	// The owner sees the message but may not vote; anyone else is told
	// nothing about it, as for any message of another user.
	wantError(t, f.vote(id, f.a, "approve", nil), 403, "forbidden")
	wantError(t, f.vote(id, dan, "approve", nil), 404, "not_found")
	wantError(t, f.vote(id, dan, "reject", nil), 404, "not_found")
	wantError(t, f.vote("msg_doesnotexist", dan, "approve", nil), 404, "not_found")
	for _, action := range []string{"yes", "Approve", "ack"} {
		wantError(t, f.vote(id, f.b, action, nil), 400, "invalid_payload")
	}
	wantError(t, f.vote(id, f.b, "", nil), 400, "invalid_payload")

	if _, a := f.message(id, f.b); a["status"] != "pending" || len(a["votes"].([]any)) != 0 {
		t.Fatalf("approval = %v, want pending without votes", a)
	}
	aprSameJSON(t, "poll", f.poll(id).Body, `{"status": "pending"}`)
	f.rcv.settle(t, 0, 100*time.Millisecond)
}

func TestApprovalVotesAfterResolution(t *testing.T) {
	f := aprSetup(t)
	f.rule(1, 3600, f.a, f.b, f.c)
	id := f.send()
	if r := f.vote(id, f.b, "approve", nil); r.Str("approval_status") != "approved" {
		t.Fatalf("vote: %d %s, want approved", r.Status, r.Raw)
	}
	for _, v := range []struct {
		u      *testUser
		action string
	}{{f.c, "approve"}, {f.c, "reject"}, {f.a, "reject"}, {f.b, "reject"}, {f.b, "approve"}} {
		if r := f.vote(id, v.u, v.action, nil); r.Status != 409 {
			t.Fatalf("%s %s after resolution: %d %s, want 409", v.u.Name, v.action, r.Status, r.Raw)
		}
	}
	_, a := f.message(id, f.a)
	if a["status"] != "approved" || len(a["votes"].([]any)) != 1 || aprNum(a["rejections_received"]) != 0 {
		t.Fatalf("approval = %v, want approved with B's vote only", a)
	}
	f.rcv.wait(t, 1)
	f.rcv.settle(t, 1, 200*time.Millisecond)
}

func TestApprovalRuleChangeAfterSend(t *testing.T) {
	f := aprSetup(t)
	f.rule(2, 3600, f.a, f.b, f.c)
	old := f.send()
	f.rule(1, 3600, f.a)
	next := f.send()
	f.env.do(200, "PATCH", "/v1/channels/"+f.chID, map[string]any{"approval": nil}, f.a.Token)
	plain := f.send()

	// The old message keeps the rule it was sent under: B and C may vote,
	// and one approval is not enough.
	if r := f.vote(old, f.b, "approve", nil); r.Status != 200 || r.Str("approval_status") != "pending" {
		t.Fatalf("B on the old message: %d %s, want 200 pending", r.Status, r.Raw)
	}
	_, a := f.message(old, f.b)
	if aprNum(a["required_count"]) != 2 || len(a["approvers"].([]any)) != 3 {
		t.Fatalf("old message's approval = %v, want 2 of 3", a)
	}
	if r := f.vote(old, f.c, "approve", nil); r.Status != 200 || r.Str("approval_status") != "approved" {
		t.Fatalf("C on the old message: %d %s, want 200 approved", r.Status, r.Raw)
	}

	// The message sent after the change follows the new rule: B is no
	// longer its approver, so it is not B's to see.
	wantError(t, f.vote(next, f.b, "approve", nil), 404, "not_found")
	if r := f.vote(next, f.a, "approve", nil); r.Status != 200 || r.Str("approval_status") != "approved" {
		t.Fatalf("A on the new message: %d %s, want 200 approved", r.Status, r.Raw)
	}
	aprSameJSON(t, "new message's rule", []any{f.waitApproval(next, "approved")["required_count"]}, `[1]`)

	// After the rule is removed, a message is an ordinary one.
	r := f.env.do(200, "GET", "/v1/messages/"+plain, nil, f.a.Token)
	if v, ok := r.Body["approval"]; !ok || v != nil {
		t.Fatalf("approval of a message sent without a rule = %v, want null", v)
	}
	aprSameJSON(t, "actions without a rule", r.Body["actions"], `[]`)

	cbs := f.rcv.wait(t, 2)
	got := map[string]int{}
	for _, cb := range cbs {
		got[fmt.Sprint(cb.Body["message_id"])] = aprNum(cb.Body["required_count"])
	}
	if got[old] != 2 || got[next] != 1 {
		t.Fatalf("required_count per callback = %v, want %s:2 %s:1", got, old, next)
	}
	f.rcv.settle(t, 2, 200*time.Millisecond)
}

func TestApprovalApproverAccess(t *testing.T) {
	f := aprSetup(t)
	dan := f.env.newUser("dan@example.com")
	f.rule(1, 3600, f.b, f.c)
	id := f.send()
	ch, msg := "/v1/channels/"+f.chID, "/v1/messages/"+id
	f.env.acceptInvitations(f.b)

	// An approver who accepted reads the channel's messages...
	r := f.env.do(200, "GET", "/v1/messages?channel_id="+f.chID, nil, f.b.Token)
	if list, _ := r.Body["messages"].([]any); len(list) != 1 || list[0].(map[string]any)["id"] != id {
		t.Fatalf("approver's list = %s, want the one message", r.Raw)
	}
	f.env.do(200, "GET", msg, nil, f.b.Token)

	// ...and nothing else.
	wantError(t, f.env.request("PATCH", ch, map[string]any{"name": "mine"}, f.b.Token), 404, "not_found")
	wantError(t, f.env.request("PATCH", ch, map[string]any{"approval": nil}, f.b.Token), 404, "not_found")
	wantError(t, f.env.request("DELETE", ch, nil, f.b.Token), 404, "not_found")
	wantError(t, f.env.request("DELETE", msg, nil, f.b.Token), 403, "forbidden")
	wantError(t, f.env.request("GET", msg+"/deliveries", nil, f.b.Token), 403, "forbidden")

	// Someone who is not an approver sees nothing.
	wantError(t, f.env.request("GET", msg, nil, dan.Token), 404, "not_found")
	wantError(t, f.env.request("GET", "/v1/messages?channel_id="+f.chID, nil, dan.Token), 404, "not_found")

	// Everything is still there, and the rule unchanged.
	if _, a := f.message(id, f.a); len(a["approvers"].([]any)) != 2 {
		t.Fatalf("approval = %v after the approver's attempts", a)
	}
	if got := f.env.do(200, "GET", ch, nil, f.a.Token).Str("name"); got != "prod deploys" {
		t.Fatalf("channel name = %q, want prod deploys", got)
	}
}

// aprPost is request for goroutines: it reports instead of failing the test.
func aprPost(e *testEnv, path, token string, body any) (int, map[string]any, error) {
	buf, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequest("POST", e.srv.URL+path, bytes.NewReader(buf))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := e.srv.Client().Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return res.StatusCode, nil, err
	}
	return res.StatusCode, out, nil
}

func TestApprovalConcurrentVotes(t *testing.T) {
	f := aprSetup(t)
	env := f.env
	voters := []*testUser{f.a, f.b, f.c, env.newUser("dan@example.com"), env.newUser("eve@example.com")}
	f.rule(3, 3600, voters...)
	const messages = 10
	ids := make([]string, messages)
	for i := range ids {
		ids[i] = f.send()
	}

	type outcome struct {
		msg    int
		status int
		body   map[string]any
		err    error
	}
	out := make(chan outcome, messages*len(voters))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, id := range ids {
		for _, u := range voters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				status, body, err := aprPost(env, "/v1/messages/"+id+"/respond", u.Token, map[string]any{"action": "approve"})
				out <- outcome{i, status, body, err}
			}()
		}
	}
	close(start)
	wg.Wait()
	close(out)

	type tally struct{ pending, approved, conflict int }
	tallies := make([]tally, messages)
	for o := range out {
		switch {
		case o.err != nil:
			t.Fatalf("vote on %s: %v", ids[o.msg], o.err)
		case o.status == 200 && o.body["approval_status"] == "pending":
			tallies[o.msg].pending++
		case o.status == 200 && o.body["approval_status"] == "approved":
			tallies[o.msg].approved++
		case o.status == 409:
			tallies[o.msg].conflict++
		default:
			t.Fatalf("vote on %s: %d %v, want 200 or 409", ids[o.msg], o.status, o.body)
		}
	}
	for i, got := range tallies {
		// Votes are serialised: two wait, the third approves, the rest are late.
		if want := (tally{pending: 2, approved: 1, conflict: 2}); got != want {
			t.Errorf("message %s: %+v, want %+v", ids[i], got, want)
		}
		_, a := f.message(ids[i], f.a)
		if a["status"] != "approved" || aprNum(a["approvals_received"]) != 3 || len(a["votes"].([]any)) != 3 {
			t.Errorf("message %s: approval %v, want approved with 3 votes", ids[i], a)
		}
	}

	// Exactly one callback per message, even after waiting for stragglers.
	f.rcv.wait(t, messages)
	per := map[string]int{}
	for _, cb := range f.rcv.settle(t, messages, 500*time.Millisecond) {
		per[fmt.Sprint(cb.Body["message_id"])]++
		if cb.Body["status"] != "approved" || aprNum(cb.Body["approvals_received"]) != 3 {
			t.Errorf("callback %s, want approved with 3", cb.Raw)
		}
	}
	for _, id := range ids {
		if per[id] != 1 {
			t.Errorf("message %s got %d callbacks, want 1", id, per[id])
		}
		log := env.do(200, "GET", "/v1/messages/"+id+"/deliveries", nil, f.a.Token)
		if d, _ := log.Body["delivery"].(map[string]any); d["state"] != "delivered" || len(log.Body["deliveries"].([]any)) != 1 {
			t.Errorf("message %s: delivery log %s, want one delivered attempt", id, log.Raw)
		}
	}
}

// aprOpenEnv is newTestEnv over a chosen data directory and clock, with a
// stop function, so that a second server can open the same database file
// after the first has shut down.
func aprOpenEnv(t *testing.T, dir string, clk *testkit.Clock) (*testEnv, func()) {
	t.Helper()
	return openTestEnv(t, dir, clk)
}

func TestApprovalRestartDuringWindow(t *testing.T) {
	dir, clk := t.TempDir(), testkit.NewClock()
	rcv := aprNewReceiver(t)

	env, stop := aprOpenEnv(t, dir, clk)
	f := &aprFixture{env: env, a: env.newUser("ann@example.com"), b: env.newUser("bob@example.com"), c: env.newUser("cat@example.com"), rcv: rcv}
	ch := env.newChannel(f.a, "prod deploys")
	f.chID, f.token = ch["id"].(string), ch["webhook_token"].(string)
	f.secret = env.do(200, "GET", "/v1/channels/"+f.chID+"/secret", nil, f.a.Token).Str("webhook_secret")
	f.rule(2, 60, f.a, f.b, f.c)
	id := f.send()
	deadline := clk.Now().Add(60 * time.Second)
	bAt := clk.Now()
	env.do(200, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "approve"}, f.b.Token)
	stop()

	// The process is down when the window closes; the deadline is in the
	// database, so the new process resolves it at start.
	clk.Advance(90 * time.Second)
	env, _ = aprOpenEnv(t, dir, clk)
	aprStartQueue(t, env)
	f.env = env // sessions are in the database: the old tokens still work

	a := f.waitApproval(id, "expired")
	if aprNum(a["approvals_received"]) != 1 || a["deadline"] != ts(deadline) {
		t.Fatalf("approval after restart = %v, want expired with 1 approval, deadline %s", a, ts(deadline))
	}
	aprSameJSON(t, "poll after restart", f.poll(id).Body, `{"status": "expired"}`)
	f.checkEvent(rcv.wait(t, 1)[0], aprEvent{id: id, status: "expired", approvals: 1, required: 2,
		votes: []aprVote{{f.b, "approve", `{}`, bAt}}, at: deadline})
	if r := f.vote(id, f.c, "approve", nil); r.Status != 409 {
		t.Fatalf("vote after the restart expiry: %d %s, want 409", r.Status, r.Raw)
	}
	rcv.settle(t, 1, 200*time.Millisecond)
}

// TestApprovalListFollowsMessageRule checks that listing a channel's
// messages decides by each message's own rule, like GET and voting: an
// approver removed after sending still lists that message, one added later
// does not see the older message (even accepting after the newer one was
// sent, which lists that one), and a stranger gets 404.
func TestApprovalListFollowsMessageRule(t *testing.T) {
	env := newTestEnv(t)
	a, b, c := env.newUser("own@example.com"), env.newUser("old@example.com"), env.newUser("new@example.com")
	stranger := env.newUser("who@example.com")
	ch := env.newChannel(a, "deploys")
	chID, token := ch["id"].(string), ch["webhook_token"].(string)
	rule := func(approvers ...string) {
		env.do(200, "PATCH", "/v1/channels/"+chID, map[string]any{"approval": map[string]any{
			"required_count": 1, "approvers": approvers, "window_seconds": 600}}, a.Token)
	}
	rule(b.ID)
	env.acceptInvitations(b)
	old := env.do(200, "POST", "/v1/send/"+token, map[string]string{"title": "old"}, "").Str("id")
	rule(c.ID)
	fresh := env.do(200, "POST", "/v1/send/"+token, map[string]string{"title": "new"}, "").Str("id")
	env.acceptInvitations(c)

	list := func(u *testUser) []string {
		r := env.do(200, "GET", "/v1/messages?channel_id="+chID, nil, u.Token)
		var ids []string
		for _, m := range r.Body["messages"].([]any) {
			ids = append(ids, m.(map[string]any)["id"].(string))
		}
		if int(r.Body["total"].(float64)) != len(ids) {
			t.Fatalf("total %v for %d listed", r.Body["total"], len(ids))
		}
		return ids
	}
	if got := list(b); len(got) != 1 || got[0] != old {
		t.Fatalf("removed approver lists %v, want only %s", got, old)
	}
	if got := list(c); len(got) != 1 || got[0] != fresh {
		t.Fatalf("new approver lists %v, want only %s", got, fresh)
	}
	if got := list(a); len(got) != 2 {
		t.Fatalf("owner lists %v, want both", got)
	}
	wantError(t, env.request("GET", "/v1/messages?channel_id="+chID, nil, stranger.Token), 404, "not_found")
}
