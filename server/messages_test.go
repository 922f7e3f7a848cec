package server

import (
	"context"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/store"
)

// msgList lists messages with query q and returns the ids in order and total.
func msgList(e *testEnv, token, q string) ([]string, int) {
	e.t.Helper()
	r := e.do(200, "GET", "/v1/messages"+q, nil, token)
	items := msgItems(e.t, r)
	ids := make([]string, len(items))
	for i, m := range items {
		ids[i], _ = m["id"].(string)
	}
	total, ok := r.Body["total"].(float64)
	if !ok {
		e.t.Fatalf("list %s has no numeric total", r.Raw)
	}
	return ids, int(total)
}

// msgItems returns the objects of a list's messages array.
func msgItems(t testing.TB, r response) []map[string]any {
	t.Helper()
	arr, ok := r.Body["messages"].([]any)
	if !ok {
		t.Fatalf("list %s has no messages array", r.Raw)
	}
	out := make([]map[string]any, len(arr))
	for i, v := range arr {
		if out[i], ok = v.(map[string]any); !ok {
			t.Fatalf("messages[%d] = %v, want an object", i, v)
		}
	}
	return out
}

// msgReversed returns ids newest first, given them oldest first.
func msgReversed(ids []string) []string {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}

// msgSendN sends n messages through token a second apart and returns their
// ids, oldest first.
func msgSendN(e *testEnv, token string, n int) []string {
	e.t.Helper()
	ids := make([]string, n)
	for i := range ids {
		e.clock.Advance(time.Second)
		ids[i] = msgSend(e, token, msgPayload("title", "m"+strconv.Itoa(i)))
	}
	return ids
}

func TestMessageList(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	other := env.newUser("bob@example.com")
	chA, tokA := msgChannel(env, u, "a")
	chB, tokB := msgChannel(env, u, "b")
	_, tokO := msgChannel(env, other, "o")

	a := msgSendN(env, tokA, 4)
	b := msgSendN(env, tokB, 3)
	msgSendN(env, tokO, 2)
	// Interleave: a0..a3 are older than b0..b2.
	all := msgReversed(append(slices.Clone(a), b...))

	ids, total := msgList(env, u.Token, "")
	if !reflect.DeepEqual(ids, all) || total != 7 {
		t.Fatalf("list = %v total %d, want %v total 7", ids, total, all)
	}
	tests := []struct {
		q     string
		want  []string
		total int
	}{
		{"?limit=3&offset=3", all[3:6], 7},
		{"?limit=3", all[:3], 7},
		{"?offset=5", all[5:], 7},
		{"?offset=7", []string{}, 7},
		{"?offset=100", []string{}, 7},
		{"?limit=0", []string{}, 7},
		{"?channel_id=" + chA, msgReversed(a), 4},
		{"?channel_id=" + chB, msgReversed(b), 3},
		{"?channel_id=" + chA + "&limit=2&offset=1", msgReversed(a)[1:3], 4},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			ids, total := msgList(msgSub(env, t), u.Token, tc.q)
			if !reflect.DeepEqual(ids, tc.want) || total != tc.total {
				t.Fatalf("list%s = %v total %d, want %v total %d", tc.q, ids, total, tc.want, tc.total)
			}
		})
	}

	// Bob sees only his own.
	if _, total := msgList(env, other.Token, ""); total != 2 {
		t.Fatalf("bob's total = %d, want 2", total)
	}
}

// TestMessageListSameMillisecond sends a burst within one clock tick: newest
// first must still mean the order they were sent in, reversed.
func TestMessageListSameMillisecond(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	_, token := msgChannel(env, u, "x")
	var sent []string
	for i := 0; i < 8; i++ {
		sent = append(sent, msgSend(env, token, msgPayload()))
	}
	ids, _ := msgList(env, u.Token, "")
	if want := msgReversed(sent); !reflect.DeepEqual(ids, want) {
		t.Fatalf("list = %v, want newest first %v", ids, want)
	}
	ids, _ = msgList(env, u.Token, "?limit=3&offset=2")
	if want := msgReversed(sent)[2:5]; !reflect.DeepEqual(ids, want) {
		t.Fatalf("page = %v, want %v", ids, want)
	}
}

func TestMessageListLimits(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	chID, _ := msgChannel(env, u, "x")
	ctx := context.Background()
	const n = 205
	for i := 0; i < n; i++ {
		env.clock.Advance(time.Millisecond)
		if err := env.st.CreateMessage(ctx, &store.Message{ChannelID: chID, Title: "m", Priority: "normal"}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		q    string
		want int
	}{
		{"", 50},
		{"?limit=200", 200},
		{"?limit=201", 200},
		{"?limit=100000", 200},
		{"?offset=200", 5},
		{"?limit=1000&offset=100", 105},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			ids, total := msgList(msgSub(env, t), u.Token, tc.q)
			if len(ids) != tc.want || total != n {
				t.Fatalf("list%s: %d messages total %d, want %d total %d", tc.q, len(ids), total, tc.want, n)
			}
		})
	}
	// Pages of the default size cover everything once, in order.
	var seen []string
	for off := 0; off < n; off += 50 {
		ids, _ := msgList(env, u.Token, "?offset="+strconv.Itoa(off))
		seen = append(seen, ids...)
	}
	all, _ := msgList(env, u.Token, "?limit=200")
	if len(seen) != n || !reflect.DeepEqual(seen[:200], all) {
		t.Fatalf("paged through %d messages, want %d in the order of one big page", len(seen), n)
	}
}

func TestMessageListValidation(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	bob := env.newUser("bob@example.com")
	bobCh, bobTok := msgChannel(env, bob, "b")
	msgSend(env, bobTok, msgPayload())

	tests := []struct {
		q      string
		status int
		code   string
	}{
		{"?limit=-1", 400, "invalid_payload"},
		{"?limit=abc", 400, "invalid_payload"},
		{"?limit=1.5", 400, "invalid_payload"},
		{"?limit=1e3", 400, "invalid_payload"},
		{"?limit=99999999999999999999999", 400, "invalid_payload"},
		{"?offset=-5", 400, "invalid_payload"},
		{"?offset=x", 400, "invalid_payload"},
		{"?channel_id=" + bobCh, 404, "not_found"},
		{"?channel_id=ch_doesnotexist0000000000", 404, "not_found"},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			wantError(t, msgSub(env, t).request("GET", "/v1/messages"+tc.q, nil, u.Token), tc.status, tc.code)
		})
	}
	wantError(t, env.request("GET", "/v1/messages", nil, ""), 401, "invalid_token")
}

func TestMessageShape(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	chID, token := msgChannel(env, u, "x")
	id := msgSend(env, token, map[string]any{"title": "Disk", "body": "90% full", "priority": "low",
		"actions": msgActions(msgButton("ok"), msgURL("https://grafana.example.com"))})
	plain := msgSend(env, token, map[string]any{"title": "p", "callback_url": msgHook})

	fields := []string{"id", "channel_id", "title", "body", "priority", "actions", "callback_url", "muted",
		"status", "created_at", "response", "approval", "delivery", "outcome", "alert"}
	sort.Strings(fields)
	check := func(t *testing.T, m map[string]any, status string) {
		t.Helper()
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if !reflect.DeepEqual(keys, fields) {
			t.Fatalf("message fields = %v, want %v", keys, fields)
		}
		if m["id"] != id || m["channel_id"] != chID || m["title"] != "Disk" || m["body"] != "90% full" ||
			m["priority"] != "low" || m["muted"] != false || m["status"] != status {
			t.Errorf("message = %v", m)
		}
		msgSameJSON(t, "actions", mustJSON(t, m["actions"]),
			`[{"type": "button", "label": "Tap ok", "key": "ok"}, {"type": "url", "label": "Open", "value": "https://grafana.example.com"}]`)
		for _, k := range []string{"callback_url", "approval", "delivery", "alert"} {
			if m[k] != nil {
				t.Errorf("%s = %v, want null", k, m[k])
			}
		}
		// What answered the message stays once it is answered.
		if answered := m["outcome"] != nil; answered != (status != "pending") {
			t.Errorf("outcome = %v with status %s", m["outcome"], status)
		}
		created, err := time.Parse(time.RFC3339, m["created_at"].(string))
		if err != nil || !created.Equal(msgStored(env, id).CreatedAt) || created.Location() != time.UTC {
			t.Errorf("created_at = %v, want the stored time in UTC", m["created_at"])
		}
	}

	r := env.do(200, "GET", "/v1/messages/"+id, nil, u.Token)
	check(t, r.Body, "pending")
	if r.Body["response"] != nil {
		t.Errorf("pending message's response = %v, want null", r.Body["response"])
	}
	items := msgItems(t, env.do(200, "GET", "/v1/messages", nil, u.Token))
	if len(items) != 2 || items[0]["id"] != plain || items[0]["callback_url"] != msgHook {
		t.Fatalf("list = %v, want the message with callback_url first", items)
	}
	check(t, items[1], "pending")

	// After a tap the response shows; after the read it is gone.
	env.do(200, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "ok"}, u.Token)
	r = env.do(200, "GET", "/v1/messages/"+id, nil, u.Token)
	check(t, r.Body, "submitted")
	msgSameJSON(t, "response", mustJSON(t, r.Body["response"]), `{"message_id": "`+id+`", "channel_id": "`+chID+
		`", "timestamp": "`+ts(env.clock.Now())+`", "triggered_by": "ok", "responses": {}}`)
	check(t, msgItems(t, env.do(200, "GET", "/v1/messages", nil, u.Token))[1], "submitted")

	msgPoll(env, token, id)
	r = env.do(200, "GET", "/v1/messages/"+id, nil, u.Token)
	check(t, r.Body, "already_read")
	if r.Body["response"] != nil {
		t.Errorf("response after the read = %v, want null", r.Body["response"])
	}

	// A response to a message with a callback_url queues its delivery,
	// which the message then shows.
	hooked := msgSend(env, token, msgPayload("callback_url", msgHook, "actions", msgActions(msgButton("ok"))))
	if d := env.do(200, "GET", "/v1/messages/"+hooked, nil, u.Token).Body["delivery"]; d != nil {
		t.Fatalf("delivery before any response = %v, want null", d)
	}
	env.do(200, "POST", "/v1/messages/"+hooked+"/respond", map[string]any{"action": "ok"}, u.Token)
	r = env.do(200, "GET", "/v1/messages/"+hooked, nil, u.Token)
	msgSameJSON(t, "delivery", mustJSON(t, r.Body["delivery"]), `{"state": "pending", "attempts": 0,
		"last_status_code": null, "next_attempt_at": "`+ts(env.clock.Now())+`"}`)
}

func TestMessageGet(t *testing.T) {
	env := newTestEnv(t)
	ann := env.newUser("ann@example.com")
	bob := env.newUser("bob@example.com")
	_, token := msgChannel(env, ann, "x")
	id := msgSend(env, token, msgPayload())

	if r := env.do(200, "GET", "/v1/messages/"+id, nil, env.apiKey(ann)); r.Str("id") != id {
		t.Fatalf("get = %s, want message %s", r.Raw, id)
	}
	wantError(t, env.request("GET", "/v1/messages/"+id, nil, bob.Token), 404, "not_found")
	wantError(t, env.request("GET", "/v1/messages/msg_doesnotexist00000000", nil, ann.Token), 404, "not_found")
	wantError(t, env.request("GET", "/v1/messages/"+id, nil, ""), 401, "invalid_token")
}

func TestMessageDelete(t *testing.T) {
	env := newTestEnv(t)
	ann := env.newUser("ann@example.com")
	bob := env.newUser("bob@example.com")
	_, token := msgChannel(env, ann, "x")
	id := msgTapped(env, ann, token)
	keep := msgSend(env, token, msgPayload())
	// A message whose callback is queued goes with its delivery job.
	hooked := msgSend(env, token, msgPayload("callback_url", msgHook, "actions", msgActions(msgButton("ok"))))
	env.do(200, "POST", "/v1/messages/"+hooked+"/respond", map[string]any{"action": "ok"}, ann.Token)
	msgSameJSON(t, "delete answer", env.do(200, "DELETE", "/v1/messages/"+hooked, nil, ann.Token).Raw, `{"ok": true}`)
	msgGone(env, hooked)

	// Bob cannot delete it, nor learn that it exists.
	wantError(t, env.request("DELETE", "/v1/messages/"+id, nil, bob.Token), 404, "not_found")
	msgStored(env, id)

	r := env.do(200, "DELETE", "/v1/messages/"+id, nil, ann.Token)
	msgSameJSON(t, "delete answer", r.Raw, `{"ok": true}`)
	msgGone(env, id)
	wantError(t, msgPoll(env, token, id), 404, "not_found")
	wantError(t, env.request("GET", "/v1/messages/"+id, nil, ann.Token), 404, "not_found")
	wantError(t, env.request("DELETE", "/v1/messages/"+id, nil, ann.Token), 404, "not_found")
	wantError(t, msgRespond(env, id, ann.Token, map[string]any{"action": "yes"}), 404, "not_found")
	if ids, total := msgList(env, ann.Token, ""); !reflect.DeepEqual(ids, []string{keep}) || total != 1 {
		t.Fatalf("list after delete = %v total %d, want only %s", ids, total, keep)
	}
}

func TestMessageRetention(t *testing.T) {
	env := newTestEnv(t, func(cfg *config.Config) { cfg.Retention.Messages = config.Duration{Duration: time.Hour} })
	u := env.newUser("ann@example.com")
	_, token := msgChannel(env, u, "x")
	ctx := context.Background()

	old := msgSend(env, token, msgPayload("callback_url", msgHook, "actions", msgActions(msgButton("ok"))))
	env.do(200, "POST", "/v1/messages/"+old+"/respond", map[string]any{"action": "ok"}, u.Token) // queues a delivery
	env.clock.Advance(30 * time.Minute)
	young := msgSend(env, token, msgPayload())

	env.clock.Advance(30 * time.Minute) // old is exactly an hour old: kept
	env.s.svc.Sweep(ctx)
	msgStored(env, old)

	env.clock.Advance(time.Second)
	env.s.svc.Sweep(ctx)
	msgGone(env, old)
	msgStored(env, young)
	wantError(t, msgPoll(env, token, old), 404, "not_found")

	env.clock.Advance(30 * time.Minute)
	env.s.svc.Sweep(ctx)
	msgGone(env, young)
}
