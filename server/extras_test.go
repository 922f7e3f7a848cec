package server

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/delivery"
	"github.com/heraldhq/herald/ntfy"
)

// TestSendExtras: the native send takes tags, click, icon and attachment
// URLs, markdown and a sequence id, stores them, and the message shows
// them; a plain message shows none of them.
func TestSendExtras(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("ops@example.com")
	_, token := msgChannel(e, u, "Backups")
	id := msgSend(e, token, map[string]any{"title": "Disk", "body": "**low**", "tags": []string{"warning", "💾"},
		"click_url": "mailto:ops@example.com", "icon_url": "https://example.com/i.png",
		"attach_url": "https://example.com/disk.jpg", "markdown": true, "sequence_id": "disk-1"})
	r := e.do(200, "GET", "/v1/messages/"+id, nil, u.Token)
	want := map[string]any{"tags": []any{"warning", "💾"}, "click_url": "mailto:ops@example.com",
		"icon_url": "https://example.com/i.png", "attach_url": "https://example.com/disk.jpg", "markdown": true,
		"sequence_id": "disk-1"}
	for k, v := range want {
		if !reflect.DeepEqual(r.Body[k], v) {
			t.Errorf("%s = %v, want %v", k, r.Body[k], v)
		}
	}
	plain := msgSend(e, token, map[string]any{"title": "Plain"})
	if m := msgStored(e, plain); m.Extras != nil || m.SequenceID != "" {
		t.Errorf("plain message stored extras %s, sequence %q; want none", m.Extras, m.SequenceID)
	}
	r = e.do(200, "GET", "/v1/messages/"+plain, nil, u.Token)
	for k := range want {
		if _, ok := r.Body[k]; ok {
			t.Errorf("plain message shows %s", k)
		}
	}
}

// TestSendExtrasRefused: each rule of the new fields refuses with 400 and
// stores nothing.
func TestSendExtrasRefused(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("ops@example.com")
	_, token := msgChannel(e, u, "Backups")
	now := e.clock.Now()
	for name, extra := range map[string]map[string]any{
		"eleven tags":         {"tags": strings.Split("a,b,c,d,e,f,g,h,i,j,k", ",")},
		"long tag":            {"tags": []string{strings.Repeat("x", 101)}},
		"control in tag":      {"tags": []string{"a\nb"}},
		"javascript click":    {"click_url": "javascript:alert(1)"},
		"relative icon":       {"icon_url": "/icon.png"},
		"ftp attach":          {"attach_url": "ftp://example.com/a.jpg"},
		"sequence with space": {"sequence_id": "a b"},
		"too soon":            {"deliver_at": now.Add(5 * time.Second).Format(time.RFC3339)},
		"too late":            {"deliver_at": now.Add(73 * time.Hour).Format(time.RFC3339)},
		"not a time":          {"deliver_at": "tomorrow"},
		"http GET with body":  {"actions": []any{map[string]any{"type": "http", "label": "Go", "value": "https://example.com/", "request": map[string]any{"method": "GET", "body": "x"}}}},
		"http bad method":     {"actions": []any{map[string]any{"type": "http", "label": "Go", "value": "https://example.com/", "request": map[string]any{"method": "TRACE"}}}},
		"http bad header":     {"actions": []any{map[string]any{"type": "http", "label": "Go", "value": "https://example.com/", "request": map[string]any{"headers": map[string]string{"Bad Name": "x"}}}}},
		"http no url":         {"actions": []any{map[string]any{"type": "http", "label": "Go"}}},
	} {
		body := map[string]any{"title": "t"}
		for k, v := range extra {
			body[k] = v
		}
		r := e.request("POST", "/v1/send/"+token, body, "")
		if r.Status != 400 {
			t.Errorf("%s: status %d, want 400; body %s", name, r.Status, r.Raw)
		}
	}
	if n := msgCount(e, u.ID); n != 0 {
		t.Errorf("%d messages stored, want 0", n)
	}
}

// TestSendHTTPAction: an http action is stored with its request, a key
// of its own and POST by default, and tapping it answers the message.
func TestSendHTTPAction(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("ops@example.com")
	_, token := msgChannel(e, u, "Lights")
	id := msgSend(e, token, map[string]any{"title": "Lights on?", "actions": []any{
		map[string]any{"type": "http", "label": "Turn off", "value": "https://home.example.com/off",
			"request": map[string]any{"headers": map[string]string{"X-Auth": "k"}, "body": `{"on":false}`}}}})
	var acts []map[string]any
	if err := json.Unmarshal(msgStored(e, id).Actions, &acts); err != nil {
		t.Fatal(err)
	}
	if len(acts) != 1 || acts[0]["key"] != "http" || acts[0]["request"].(map[string]any)["method"] != "POST" {
		t.Fatalf("stored actions %v, want key http and method POST", acts)
	}
	r := e.do(200, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "http"}, u.Token)
	if got := r.Str("status"); got != "submitted" {
		t.Errorf("respond: status %q, want submitted", got)
	}
}

// TestScheduledMessage: a scheduled message is listed as scheduled with
// its deliver_at, cancelled by DELETE before it is due, and one left
// alone is delivered when due: no longer scheduled.
func TestScheduledMessage(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("ops@example.com")
	_, token := msgChannel(e, u, "Cron")
	at := e.clock.Now().Add(time.Minute).UTC().Truncate(time.Millisecond)
	cancelled := msgSend(e, token, map[string]any{"title": "Later", "deliver_at": at.Format(time.RFC3339Nano)})
	kept := msgSend(e, token, map[string]any{"title": "Later too", "deliver_at": at.Format(time.RFC3339Nano)})
	r := e.do(200, "GET", "/v1/messages?state=scheduled", nil, u.Token)
	msgs, _ := r.Body["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("scheduled list has %d messages, want 2: %s", len(msgs), r.Raw)
	}
	if got := msgs[0].(map[string]any)["deliver_at"]; got != ts(at) {
		t.Errorf("deliver_at = %v, want %s", got, ts(at))
	}
	e.do(200, "DELETE", "/v1/messages/"+cancelled, nil, u.Token)
	msgGone(e, cancelled)

	e.clock.Advance(time.Minute)
	if _, err := e.s.svc.ReleaseScheduled(t.Context()); err != nil {
		t.Fatal(err)
	}
	r = e.do(200, "GET", "/v1/messages/"+kept, nil, u.Token)
	if _, ok := r.Body["deliver_at"]; ok {
		t.Errorf("delivered message still shows deliver_at: %s", r.Raw)
	}
	r = e.do(200, "GET", "/v1/messages?state=scheduled", nil, u.Token)
	if msgs, _ := r.Body["messages"].([]any); len(msgs) != 0 {
		t.Errorf("scheduled list after delivery: %s", r.Raw)
	}
}

// TestNtfyDeleteAndClear: DELETE /<token>/<seq> deletes the sequence's
// messages and PUT /<token>/<seq>/clear answers message_clear, in ntfy's
// shapes; an unknown token is ntfy's 404.
func TestNtfyDeleteAndClear(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("ops@example.com")
	_, token := msgChannel(e, u, "Backups")
	a := msgSend(e, token, map[string]any{"title": "Backup running", "sequence_id": "nightly"})
	b := msgSend(e, token, map[string]any{"title": "Backup done", "sequence_id": "nightly"})
	other := msgSend(e, token, map[string]any{"title": "Other"})

	var m ntfy.Message
	r := ntfyCall(e, "PUT", "/"+token+"/nightly/clear")
	if r.Status != 200 || json.Unmarshal(r.Raw, &m) != nil || m.Event != ntfy.EventMessageClear || m.SequenceID != "nightly" ||
		len(m.ID) != 12 {
		t.Fatalf("clear: %d %s", r.Status, r.Raw)
	}
	r = ntfyCall(e, "DELETE", "/"+token+"/nightly")
	if r.Status != 200 || json.Unmarshal(r.Raw, &m) != nil || m.Event != ntfy.EventMessageDelete || m.Topic != token {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	msgGone(e, a)
	msgGone(e, b)
	msgStored(e, other)

	var ne ntfy.Error
	r = ntfyCall(e, "DELETE", "/tk_unknownTopic123/nightly")
	if r.Status != 404 || json.Unmarshal(r.Raw, &ne) != nil || ne.HTTP != 404 || ne.Code/100 != 404 {
		t.Fatalf("unknown token: %d %s", r.Status, r.Raw)
	}
}

// ntfyCall makes an ntfy request outside the OpenAPI contract check: the
// ntfy routes are ntfy's wire format, described with the other ntfy
// routes, not as operations of Herald's API.
func ntfyCall(e *testEnv, method, path string) response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{Status: res.StatusCode, Header: res.Header, Raw: raw}
}

// TestHTTPActionRequest: tapping an http action answers the message and
// makes the request its sender described (method, headers, body, not
// signed) through the delivery queue, retried, in the delivery log beside
// the callback, which still goes out.
func TestHTTPActionRequest(t *testing.T) {
	e, _ := openTestEnv(t, t.TempDir(), nil) // the real clock: retries are due when the queue says

	f := cbSetup(e, "ops@example.com")
	lights := cbNewReceiver(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable) // the first attempt fails: retried
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	hook := cbNewReceiver(t, cbStatus(200))
	cbStartQueue(t, e.st, cbQueueConfig(), delivery.Options{})
	id := f.send(hook.URL+"/cb", map[string]any{"type": "http", "label": "Turn off", "value": lights.URL + "/off?room=1",
		"request": map[string]any{"method": "PUT", "headers": map[string]string{"X-Auth": "k1"}, "body": `{"on":false}`}})
	f.tap(id, "http")
	hits := lights.waitHits(t, 2, 10*time.Second)
	for _, h := range hits {
		if h.Method != "PUT" || h.URI != "/off?room=1" || h.Header.Get("X-Auth") != "k1" || string(h.Body) != `{"on":false}` ||
			h.Header.Get("X-Service-Signature") != "" {
			t.Errorf("action request %s %s %v %s", h.Method, h.URI, h.Header, h.Body)
		}
	}
	cb := hook.waitHits(t, 1, 10*time.Second)
	if cb[0].Header.Get("X-Service-Signature") == "" {
		t.Error("the callback is not signed")
	}
	_, attempts := f.waitLog(id, 10*time.Second, "three attempts", func(_ map[string]any, a []map[string]any) bool { return len(a) == 3 })
	events := map[any]int{}
	for _, a := range attempts {
		events[a["event"]]++
	}
	if events["action.http"] != 2 || events["response.received"] != 1 {
		t.Errorf("delivery log %v: attempts by event %v, want 2 action.http and 1 response.received", attempts, events)
	}
	if got := f.poll(id).Str("status"); got != "submitted" {
		t.Errorf("poll: %q, want submitted", got)
	}
}

// TestHTTPActionRefusedHost: an http action to an address the callback
// guard refuses is refused at send time, as a callback_url is.
func TestHTTPActionRefusedHost(t *testing.T) {
	e := newTestEnv(t, func(c *config.Config) { c.Delivery.AllowLoopback = false })
	u := e.newUser("ops@example.com")
	_, token := msgChannel(e, u, "Lights")
	r := e.request("POST", "/v1/send/"+token, map[string]any{"title": "t", "actions": []any{
		map[string]any{"type": "http", "label": "Go", "value": "http://127.0.0.1:9/x"}}}, "")
	if r.Status != 400 || !strings.Contains(string(r.Raw), "actions[0].value") {
		t.Errorf("status %d %s, want 400 naming actions[0].value", r.Status, r.Raw)
	}
}
