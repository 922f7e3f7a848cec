package server

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
)

// msgPoll polls message id with a webhook token.
func msgPoll(e *testEnv, token, id string) response {
	e.t.Helper()
	return e.request("GET", "/v1/callback/"+token+"/"+id, nil, "")
}

// msgWantStatus fails unless a poll answered 200 with exactly {"status": want}.
func msgWantStatus(t *testing.T, r response, want string) {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("poll: %d %s, want 200", r.Status, r.Raw)
	}
	msgSameJSON(t, "poll answer", r.Raw, `{"status": "`+want+`"}`)
}

// msgTapped sends a message with buttons yes/no and answers it with yes.
func msgTapped(e *testEnv, u *testUser, token string) string {
	e.t.Helper()
	id := msgSend(e, token, msgPayload("actions", msgActions(msgButton("yes"), msgButton("no"))))
	e.do(200, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "yes"}, u.Token)
	return id
}

func TestPollLifecycle(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	chID, token := msgChannel(env, u, "x")
	id := msgSend(env, token, msgPayload("actions", msgActions(msgButton("yes"), msgButton("no"))))

	r := msgPoll(env, token, id)
	msgWantStatus(t, r, "pending")
	if got := r.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", got)
	}
	msgWantStatus(t, msgPoll(env, token, id), "pending") // polling a pending message changes nothing

	env.clock.Advance(3 * time.Second)
	tapped := env.clock.Now()
	env.do(200, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "no"}, u.Token)
	env.clock.Advance(time.Minute)

	r = msgPoll(env, token, id)
	if r.Status != 200 {
		t.Fatalf("poll: %d %s", r.Status, r.Raw)
	}
	msgSameJSON(t, "submitted poll", r.Raw, `{"status": "submitted", "submitted_at": "`+ts(tapped)+`",
		"result": {"message_id": "`+id+`", "channel_id": "`+chID+`", "timestamp": "`+ts(tapped)+`",
		"triggered_by": "no", "responses": {}}}`)

	// Read once: the response is gone from the store.
	m := msgStored(env, id)
	if m.State != store.StateAlreadyRead || m.Response != nil {
		t.Fatalf("after the read: state %q response %s, want already_read and none", m.State, m.Response)
	}
	msgWantStatus(t, msgPoll(env, token, id), "already_read")
	// already_read does not turn into expired later.
	env.clock.Advance(time.Hour)
	msgWantStatus(t, msgPoll(env, token, id), "already_read")
	env.s.svc.Sweep(context.Background())
	msgWantStatus(t, msgPoll(env, token, id), "already_read")
}

func TestPollFormResult(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	_, token := msgChannel(env, u, "x")
	id := msgFormMessage(env, token)
	env.do(200, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "details",
		"responses": map[string]any{"reason": "r", "count": 7, "agree": true, "color": "red"}}, u.Token)

	r := msgPoll(env, token, id)
	if r.Str("status") != "submitted" {
		t.Fatalf("poll: %s, want submitted", r.Raw)
	}
	res, _ := r.Body["result"].(map[string]any)
	if res["triggered_by"] != "details" {
		t.Errorf("triggered_by = %v, want details", res["triggered_by"])
	}
	msgSameJSON(t, "result.responses", mustJSON(t, res["responses"]), `{"reason": "r", "count": 7, "agree": true, "color": "red"}`)
}

func TestPollExpiry(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	_, token := msgChannel(env, u, "x")
	key := env.apiKey(u) // outlives the session across the clock jumps
	early := msgTapped(env, u, token)
	late := msgTapped(env, u, token)
	pending := msgSend(env, token, msgPayload("actions", msgActions(msgButton("yes"))))

	// At 9m59s the response is still there, and the message says so.
	env.clock.Advance(10*time.Minute - time.Second)
	r := env.do(200, "GET", "/v1/messages/"+late, nil, key)
	if r.Str("status") != "submitted" || r.Body["response"] == nil {
		t.Fatalf("message at 9m59s: %s, want status submitted with its response", r.Raw)
	}
	if got := msgPoll(env, token, early); got.Str("status") != "submitted" || got.Body["result"] == nil {
		t.Fatalf("poll at 9m59s: %s, want submitted with result", got.Raw)
	}

	// At 10m01s it has expired, and stays so.
	env.clock.Advance(2 * time.Second)
	msgWantStatus(t, msgPoll(env, token, late), "expired")
	msgWantStatus(t, msgPoll(env, token, late), "expired")
	r = env.do(200, "GET", "/v1/messages/"+late, nil, key)
	if r.Str("status") != "expired" || r.Body["response"] != nil {
		t.Fatalf("expired message: %s, want status expired and response null", r.Raw)
	}
	env.clock.Advance(time.Hour)
	msgWantStatus(t, msgPoll(env, token, late), "expired")

	// The one that was read stays read; the one never answered stays pending.
	msgWantStatus(t, msgPoll(env, token, early), "already_read")
	msgWantStatus(t, msgPoll(env, token, pending), "pending")

	// A late tap on the pending one starts its own 10 minutes.
	env.do(200, "POST", "/v1/messages/"+pending+"/respond", map[string]any{"action": "yes"}, key)
	env.clock.Advance(5 * time.Minute)
	if got := msgPoll(env, token, pending); got.Str("status") != "submitted" {
		t.Fatalf("poll of a late answer: %s, want submitted", got.Raw)
	}
}

func TestPollExpiryBySweep(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	_, token := msgChannel(env, u, "x")
	old := msgTapped(env, u, token)
	read := msgTapped(env, u, token)
	msgPoll(env, token, read)
	pending := msgSend(env, token, msgPayload("actions", msgActions(msgButton("yes"))))
	env.clock.Advance(5 * time.Minute)
	young := msgTapped(env, u, token)

	// 9m59s after the young one's tap the old one is 14m59s old.
	env.clock.Advance(10*time.Minute - time.Second)
	ctx := context.Background()
	env.s.svc.Sweep(ctx)

	if m := msgStored(env, old); m.State != store.StateExpired || m.Response != nil {
		t.Fatalf("swept response: state %q response %s, want expired and NULL", m.State, m.Response)
	}
	if m := msgStored(env, young); m.State != store.StateSubmitted || m.Response == nil {
		t.Fatalf("response of 9m59s after the sweep: state %q response %s, want submitted with it", m.State, m.Response)
	}
	if m := msgStored(env, read); m.State != store.StateAlreadyRead {
		t.Fatalf("read response after the sweep: state %q, want already_read", m.State)
	}
	if m := msgStored(env, pending); m.State != store.StatePending {
		t.Fatalf("pending message after the sweep: state %q, want pending", m.State)
	}
	msgWantStatus(t, msgPoll(env, token, old), "expired")

	env.clock.Advance(2 * time.Second)
	env.s.svc.Sweep(ctx)
	if m := msgStored(env, young); m.State != store.StateExpired || m.Response != nil {
		t.Fatalf("swept response: state %q response %s, want expired and NULL", m.State, m.Response)
	}
	msgWantStatus(t, msgPoll(env, token, young), "expired")
	// An expired message still takes no second response.
	wantError(t, msgRespond(env, young, env.apiKey(u), map[string]any{"action": "no"}), 409, "already_responded")
}

func TestPollErrors(t *testing.T) {
	env := newTestEnv(t)
	ann := env.newUser("ann@example.com")
	bob := env.newUser("bob@example.com")
	chID, tokA := msgChannel(env, ann, "a")
	_, tokA2 := msgChannel(env, ann, "a2")
	_, tokB := msgChannel(env, bob, "b")
	id := msgTapped(env, ann, tokA)

	tests := []struct {
		name, token, id string
		status          int
		code            string
	}{
		{"unknown token", "nope", id, 401, "invalid_token"},
		{"token of another channel of the same user", tokA2, id, 404, "not_found"},
		{"token of another user's channel", tokB, id, 404, "not_found"},
		{"unknown message", tokA, "msg_doesnotexist00000000", 404, "not_found"},
		{"channel id as message id", tokA, "ch_x", 404, "not_found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, msgPoll(msgSub(env, t), tc.token, tc.id), tc.status, tc.code)
		})
	}
	// None of these consumed the response.
	if m := msgStored(env, id); m.State != store.StateSubmitted || m.Response == nil {
		t.Fatalf("after refused polls: state %q response %s, want submitted with it", m.State, m.Response)
	}
	if r := msgPoll(env, tokA, id); r.Str("status") != "submitted" {
		t.Fatalf("poll with the right token: %s, want submitted", r.Raw)
	}

	// A regenerated token polls; the old one is refused.
	newTok := env.do(200, "POST", "/v1/channels/"+chID+"/regenerate", nil, ann.Token).Str("webhook_token")
	wantError(t, msgPoll(env, tokA, id), 401, "invalid_token")
	msgWantStatus(t, msgPoll(env, newTok, id), "already_read")
}

func TestPollConcurrent(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	_, token := msgChannel(env, u, "x")
	id := msgTapped(env, u, token)

	const n = 32
	type result struct {
		status int
		body   map[string]any
		err    error
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			st, body, err := msgRaw(env, "GET", "/v1/callback/"+token+"/"+id, nil, "")
			results[i] = result{st, body, err}
		}(i)
	}
	close(start)
	wg.Wait()

	submitted, read := 0, 0
	for i, r := range results {
		if r.err != nil || r.status != 200 {
			t.Fatalf("poll %d: %d %v %v", i, r.status, r.body, r.err)
		}
		switch r.body["status"] {
		case "submitted":
			submitted++
			res, _ := r.body["result"].(map[string]any)
			if res["message_id"] != id || res["triggered_by"] != "yes" {
				t.Errorf("poll %d: result %v", i, r.body["result"])
			}
		case "already_read":
			read++
			if len(r.body) != 1 {
				t.Errorf("poll %d: already_read with extra fields %v", i, r.body)
			}
		default:
			t.Fatalf("poll %d: %v", i, r.body)
		}
	}
	if submitted != 1 || read != n-1 {
		t.Fatalf("%d submitted and %d already_read, want 1 and %d", submitted, read, n-1)
	}
	if m := msgStored(env, id); m.State != store.StateAlreadyRead || m.Response != nil {
		t.Fatalf("after the polls: state %q response %s", m.State, m.Response)
	}
}

// TestPollSaysUnanswerable: a pending message that nothing can answer (no
// button, no form, no approval rule) polls as pending with answerable
// false, so that a sender stops waiting; anything answerable polls as
// before, exactly {"status": "pending"}.
func TestPollSaysUnanswerable(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("unanswerable@example.com")
	_, token := msgChannel(env, u, "x")
	apprID, apprToken := msgChannel(env, u, "approvals")
	env.do(200, "PATCH", "/v1/channels/"+apprID, map[string]any{"approval": map[string]any{
		"required_count": 1, "approvers": []string{u.ID}, "window_seconds": 600}}, u.Token)

	for _, c := range []struct {
		name, token string
		payload     map[string]any
		answerable  bool
	}{
		{"no actions", token, msgPayload(), false},
		{"links only", token, msgPayload("actions", msgActions(msgURL("https://example.com/run/1"))), false},
		{"a button", token, msgPayload("actions", msgActions(msgURL("https://example.com"), msgButton("ok"))), true},
		{"a form", token, msgPayload("callback_url", "https://hooks.example.com/x", "actions", msgActions(map[string]any{
			"type": "form", "key": "f", "label": "F", "fields": []any{msgField("why", "text")}})), true},
		{"an approval without actions", apprToken, msgPayload(), true},
		{"an approval with links only", apprToken, msgPayload("actions", msgActions(msgURL("https://example.com"))), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := msgSub(env, t)
			id := msgSend(e, c.token, c.payload)
			r := msgPoll(e, c.token, id)
			if c.answerable {
				msgWantStatus(t, r, "pending")
				return
			}
			if r.Status != 200 {
				t.Fatalf("poll: %d %s", r.Status, r.Raw)
			}
			msgSameJSON(t, "poll answer", r.Raw, `{"status": "pending", "answerable": false}`)
		})
	}
}
