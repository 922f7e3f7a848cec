package delivery

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/heraldhq/herald/push"
	"github.com/heraldhq/herald/store"
)

// webPayloads decodes what the fake Web Push service decrypted for key.
func (f *pwFakes) webPayloads(key string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, raw := range f.payloads[key] {
		var p map[string]any
		if err := json.Unmarshal(raw, &p); err != nil {
			f.t.Errorf("payload %q is not JSON: %v", raw, err)
		}
		out = append(out, p)
	}
	return out
}

// session starts a session of u, as a browser sign-in does.
func (e *pwEnv) session(u *store.User) string {
	e.t.Helper()
	access, refresh := make([]byte, 32), make([]byte, 32)
	_, _ = rand.Read(access)
	_, _ = rand.Read(refresh)
	s, err := e.st.CreateSession(context.Background(), u.ID, store.SessionTokens{AccessHash: access, RefreshHash: refresh,
		AccessExpiresAt: e.clock.Now().Add(time.Hour), RefreshExpiresAt: e.clock.Now().Add(24 * time.Hour)})
	if err != nil {
		e.t.Fatal(err)
	}
	return s.ID
}

// sessionWebDevice registers a web device of u from browser session sessionID.
func (e *pwEnv) sessionWebDevice(u *store.User, name, sessionID string) (*store.Device, string) {
	e.t.Helper()
	d := &store.Device{UserID: u.ID, Platform: "web", Name: name, PushToken: e.fakes.subscription("/push/" + name), SessionID: sessionID}
	if err := e.st.RegisterDevice(context.Background(), d); err != nil {
		e.t.Fatal(err)
	}
	return d, "web:/push/" + name
}

// TestPusherWebNotificationFollowsMessage: a browser's push decrypts to all
// its service worker needs (tag, channel, page, buttons, the credential
// bound to device, session and message); once the message is answered, the
// browsers get an update with the same tag and no credential, and phones
// get nothing more. A muted message's answer pushes nothing.
func TestPusherWebNotificationFollowsMessage(t *testing.T) {
	e := newPWEnv(t)
	key := []byte("0123456789abcdef0123456789abcdef")
	sess := e.session(e.ann)
	dev, web := e.sessionWebDevice(e.ann, "ann-chrome", sess)
	_, ios := e.device(e.ann, "ios", "ann-iphone")
	e.runWith(e.fakes.dispatcher(true, false, true), PushConfig{Workers: 2, AnswerKey: key})

	actions := `[{"type":"button","key":"restart","label":"Restart","style":"primary"},{"type":"url","label":"Logs","value":"https://example.com/logs"}]`
	id := e.message("Disk full", func(m *store.Message) { m.Priority, m.Actions = "high", json.RawMessage(actions) })
	e.waitIdle("the notification", func() bool { return len(e.fakes.webPayloads(web)) == 1 && len(e.fakes.pushes(ios)) == 1 })
	got := e.fakes.webPayloads(web)[0]
	want := map[string]any{"type": "message", "message_id": id, "channel_id": e.ch.ID, "channel": "ops", "title": "Disk full",
		"body": "Disk full happened", "priority": "high", "tag": "herald-" + id, "url": "/#/messages/" + id,
		"actions": []any{
			map[string]any{"type": "button", "key": "restart", "label": "Restart", "style": "primary"},
			map[string]any{"type": "url", "label": "Logs", "value": "https://example.com/logs"}},
		"answer": map[string]any{"device_id": dev.ID, "token": push.AnswerToken(key, dev.ID, sess, id),
			"url": "/v1/messages/" + id + "/notification-response"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("web payload = %v\nwant %v", got, want)
	}

	result := json.RawMessage(`{"triggered_by":"restart"}`)
	if err := e.st.Respond(context.Background(), id, result, e.clock.Now(), nil); err != nil {
		t.Fatal(err)
	}
	e.waitIdle("the update", func() bool { return len(e.fakes.webPayloads(web)) == 2 })
	update := e.fakes.webPayloads(web)[1]
	wantUpdate := map[string]any{"type": "update", "status": "answered", "message_id": id, "channel_id": e.ch.ID, "channel": "ops",
		"title": "Disk full", "body": "Disk full happened", "priority": "high", "tag": "herald-" + id, "url": "/#/messages/" + id}
	if !reflect.DeepEqual(update, wantUpdate) {
		t.Errorf("update payload = %v\nwant %v", update, wantUpdate)
	}
	e.wantPushes(ios, id) // phones: the first push only

	muted := e.message("quiet", func(m *store.Message) { m.Muted = true })
	if err := e.st.Respond(context.Background(), muted, result, e.clock.Now(), nil); err != nil {
		t.Fatal(err)
	}
	if at, pending := e.nextPush(); pending {
		t.Errorf("a push job due at %v after answering a muted message", at)
	}
}

// TestPusherWebUpdateOnApprovalExpiry: an approval that closes without an
// answer (its window passed) replaces the approvers' notifications too.
func TestPusherWebUpdateOnApprovalExpiry(t *testing.T) {
	e := newPWEnv(t)
	bob := e.user("bob@example.com")
	_, web := e.sessionWebDevice(bob, "bob-firefox", e.session(bob))
	e.runWith(e.fakes.dispatcher(false, false, true), PushConfig{Workers: 2, AnswerKey: []byte("k")})
	rule := e.approvers(bob)
	rule.WindowSeconds = 60
	id := e.message("deploy?", func(m *store.Message) {
		m.Approval = rule
		m.Actions = json.RawMessage(`[{"type":"button","key":"approve","label":"Approve"},{"type":"button","key":"reject","label":"Reject"}]`)
	})
	e.waitIdle("the approver's notification", func() bool { return len(e.fakes.webPayloads(web)) == 1 })
	e.clock.Advance(2 * time.Minute)
	if _, err := e.st.ExpireApprovals(context.Background(), e.clock.Now(), func(store.Resolution) (json.RawMessage, *store.NewDelivery, error) {
		return nil, nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	e.waitIdle("the update", func() bool { return len(e.fakes.webPayloads(web)) == 2 })
	if got := e.fakes.webPayloads(web)[1]; got["type"] != "update" || got["status"] != "expired" || got["tag"] != "herald-"+id || got["answer"] != nil {
		t.Errorf("update after expiry = %v, want an expired update with the message's tag and no credential", got)
	}
}
