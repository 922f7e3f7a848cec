package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/delivery"
)

// urgentOn turns urgent messages on for channel chID with policy.
func urgentOn(e *testEnv, u *testUser, chID string, policy map[string]any) map[string]any {
	e.t.Helper()
	return e.do(200, "PATCH", "/v1/channels/"+chID, map[string]any{"urgent": policy}, u.Token).Body
}

func TestUrgentPolicy(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, e *testEnv) {
		ann, bob := e.newUser("ann@example.com"), e.newUser("bob@example.com")
		chID, _ := msgChannel(e, ann, "Disks")
		if got := e.do(200, "GET", "/v1/channels/"+chID, nil, ann.Token).Body["urgent"]; got != nil {
			t.Fatalf("a new channel's urgent = %v, want null", got)
		}
		ch := urgentOn(e, ann, chID, map[string]any{})
		if got, _ := json.Marshal(ch["urgent"]); string(got) != `{"escalate_after_seconds":0,"escalation":[],"expire_seconds":3600,"repeat_seconds":300}` {
			t.Fatalf("urgent {} = %s, want the defaults", got)
		}
		for _, tt := range []struct {
			name   string
			policy any
		}{
			{"repeat under 30 s", map[string]any{"repeat_seconds": 29}},
			{"expire over 3 h", map[string]any{"expire_seconds": 10801}},
			{"repeat over expire", map[string]any{"repeat_seconds": 600, "expire_seconds": 300}},
			{"escalate_after without anyone", map[string]any{"escalate_after_seconds": 60}},
			{"escalate_after under 30 s", map[string]any{"escalate_after_seconds": 10, "escalation": []string{bob.Email}}},
			{"bad entry", map[string]any{"escalation": []string{"bob"}}},
			{"twice", map[string]any{"escalation": []string{bob.Email, "BOB@example.com"}}},
			{"too many", map[string]any{"escalation": strings.Split("a@x,b@x,c@x,d@x,e@x,f@x,g@x,h@x,i@x,j@x,k@x", ",")}},
			{"unknown field", map[string]any{"repeat": 60}},
			{"not an object", "on"},
		} {
			r := e.request("PATCH", "/v1/channels/"+chID, map[string]any{"urgent": tt.policy}, ann.Token)
			wantError(t, r, 400, "invalid_payload")
		}
		if got, _ := json.Marshal(e.do(200, "GET", "/v1/channels/"+chID, nil, ann.Token).Body["urgent"]); !strings.Contains(string(got), `"repeat_seconds":300`) {
			t.Fatalf("refused patches changed the policy: %s", got)
		}

		ch = urgentOn(e, ann, chID, map[string]any{"repeat_seconds": 60, "escalation": []string{" Bob@Example.com ", "carol@example.com"}})
		if got, _ := json.Marshal(ch["urgent"]); string(got) != `{"escalate_after_seconds":60,"escalation":["bob@example.com","carol@example.com"],"expire_seconds":3600,"repeat_seconds":60}` {
			t.Fatalf("urgent = %s", got)
		}
		esc := e.do(200, "GET", "/v1/channels/"+chID+"/escalations", nil, ann.Token).Body["escalations"].([]any)
		if len(esc) != 2 || esc[0].(map[string]any)["state"] != "invited" || esc[0].(map[string]any)["id"] != nil {
			t.Fatalf("escalations = %v: want two invitations, nobody shown", esc)
		}
		wantError(t, e.request("GET", "/v1/channels/"+chID+"/escalations", nil, bob.Token), 404, "not_found")

		// bob's address is not verified: he is asked by his id only.
		urgentOn(e, ann, chID, map[string]any{"repeat_seconds": 60, "escalation": []string{bob.ID}})
		invs := e.do(200, "GET", "/v1/approvals/invitations", nil, bob.Token).Body["invitations"].([]any)
		if len(invs) != 1 || invs[0].(map[string]any)["role"] != "escalation" || !strings.HasPrefix(invs[0].(map[string]any)["id"].(string), "esc_") {
			t.Fatalf("bob's invitations = %v", invs)
		}
		e.do(200, "POST", "/v1/approvals/invitations/"+invs[0].(map[string]any)["id"].(string)+"/accept", nil, bob.Token)
		esc = e.do(200, "GET", "/v1/channels/"+chID+"/escalations", nil, ann.Token).Body["escalations"].([]any)
		if got := esc[0].(map[string]any); got["state"] != "accepted" || got["id"] != bob.ID {
			t.Fatalf("escalation after bob accepted = %v", got)
		}
		if got := urgentOn(e, ann, chID, nil)["urgent"]; got != nil {
			t.Fatalf("urgent null = %v", got)
		}
		if esc := e.do(200, "GET", "/v1/channels/"+chID+"/escalations", nil, ann.Token).Body["escalations"].([]any); len(esc) != 0 {
			t.Fatalf("escalations after urgent null = %v", esc)
		}
	})
}

func TestSendUrgent(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, e *testEnv) {
		ann := e.newUser("ann@example.com")
		chID, token := msgChannel(e, ann, "Disks")
		send := func(body map[string]any) response { return e.request("POST", "/v1/send/"+token, body, "") }
		r := send(map[string]any{"title": "disk failing", "priority": "urgent"})
		wantError(t, r, 400, "invalid_payload")
		if !strings.Contains(r.Str("message"), "urgent") || !strings.Contains(r.Str("message"), "PATCH /v1/channels/{id}") {
			t.Errorf("refusal %q does not name the channel's urgent setting", r.Str("message"))
		}
		urgentOn(e, ann, chID, map[string]any{"repeat_seconds": 60, "expire_seconds": 600})
		btn := func(key string) map[string]any { return map[string]any{"type": "button", "label": key, "key": key} }
		for name, body := range map[string]map[string]any{
			"urgent without priority urgent": {"title": "t", "priority": "high", "urgent": map[string]any{"repeat_seconds": 60}},
			"unknown urgent field":           {"title": "t", "priority": "urgent", "urgent": map[string]any{"retry": 60}},
			"repeat under 30 s":              {"title": "t", "priority": "urgent", "urgent": map[string]any{"repeat_seconds": 29}},
			"expire over 3 h":                {"title": "t", "priority": "urgent", "urgent": map[string]any{"expire_seconds": 10801}},
			"repeat over expire":             {"title": "t", "priority": "urgent", "urgent": map[string]any{"repeat_seconds": 900}},
			"no room for the button": {"title": "t", "priority": "urgent",
				"actions": []any{btn("a"), btn("b"), btn("c"), btn("d"), btn("e")}},
			"acknowledge on a url": {"title": "t", "priority": "urgent", "callback_url": "https://example.com/h", "actions": []any{
				map[string]any{"type": "form", "label": "x", "key": "acknowledge", "fields": []any{map[string]any{"key": "f", "label": "f", "type": "text"}}}}},
			"unknown priority": {"title": "t", "priority": "emergency"},
		} {
			if r := send(body); r.Status != 400 {
				t.Errorf("%s: status %d, want 400: %s", name, r.Status, r.Raw)
			}
		}
		if n := len(e.do(200, "GET", "/v1/messages", nil, ann.Token).Body["messages"].([]any)); n != 0 {
			t.Fatalf("refused sends stored %d messages", n)
		}

		id := e.do(200, "POST", "/v1/send/"+token, map[string]any{"title": "disk failing", "priority": "urgent",
			"urgent": map[string]any{"repeat_seconds": 30}, "actions": []any{btn("failover")}}, "").Str("id")
		m := e.do(200, "GET", "/v1/messages/"+id, nil, ann.Token).Body
		acts, _ := json.Marshal(m["actions"])
		if m["priority"] != "urgent" || string(acts) != `[{"key":"failover","label":"failover","type":"button"},{"key":"acknowledge","label":"Acknowledge","style":"primary","type":"button"}]` {
			t.Fatalf("message priority %v, actions %s", m["priority"], acts)
		}
		a, _ := m["alert"].(map[string]any)
		if a == nil || a["state"] != "active" || cbNum(a["repeat_seconds"]) != 30 || cbNum(a["repeats"]) != 0 ||
			a["acknowledged_by"] != nil || len(a["alerted"].([]any)) != 1 {
			t.Fatalf("alert = %v", m["alert"])
		}
		if exp := cbTime(t, a["expires_at"]); !exp.Equal(cbTime(t, m["created_at"]).Add(10 * time.Minute)) {
			t.Errorf("expires_at %v, want created_at + 600 s", exp)
		}
		plain := e.do(200, "POST", "/v1/send/"+token, map[string]any{"title": "fine"}, "").Str("id")
		if body := e.do(200, "GET", "/v1/messages/"+plain, nil, ann.Token).Body; body["alert"] != nil {
			t.Fatalf("a plain message's alert = %v", body["alert"])
		}
		// The poll reports the alert while the message is pending.
		p := e.do(200, "GET", "/v1/callback/"+token+"/"+id, nil, "").Body
		if p["status"] != "pending" || p["alert"].(map[string]any)["state"] != "active" {
			t.Fatalf("poll = %v", p)
		}
	})
}

// TestUrgentAcknowledgeAndCancel: over HTTP, with the sender's signed
// callbacks on the real clock.
func TestUrgentAcknowledgeAndCancel(t *testing.T) {
	e := cbEnv(t)
	f := cbSetup(e, "ann@example.com")
	rc := cbNewReceiver(t, cbStatus(200))
	cbStartQueue(t, e.st, cbQueueConfig(), delivery.Options{})
	urgentOn(e, f.user, f.chID, map[string]any{"repeat_seconds": 60})
	dev := e.do(201, "POST", "/v1/devices", map[string]any{"platform": "ios", "name": "ann's phone", "push_token": "abc123"}, f.token).Str("id")
	send := func() string {
		return e.do(200, "POST", "/v1/send/"+f.hook, map[string]any{"title": "disk failing", "priority": "urgent",
			"callback_url": rc.URL + "/alerts", "actions": []any{cbButton("failover")}}, "").Str("id")
	}
	id := send()

	wantError(t, e.request("POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "acknowledge", "device_id": "dev_nope"}, f.token),
		400, "invalid_payload")
	r := e.do(200, "POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "acknowledge", "device_id": dev}, f.token)
	if r.Str("status") != "pending" || r.Str("alert_state") != "acknowledged" {
		t.Fatalf("acknowledge answered %s", r.Raw)
	}
	hit := rc.waitHits(t, 1, 5*time.Second)[0]
	if err := cbVerify(hit, f.secret); err != nil {
		t.Fatalf("alert callback signature: %v", err)
	}
	var ev struct {
		Event string `json:"event"`
		Alert struct {
			State          string
			Device         string
			AcknowledgedBy struct{ ID string } `json:"acknowledged_by"`
		}
	}
	if err := json.Unmarshal(hit.Body, &ev); err != nil || ev.Event != "alert.acknowledged" || hit.Header.Get("X-Service-Event") != "alert.acknowledged" ||
		ev.Alert.State != "acknowledged" || ev.Alert.AcknowledgedBy.ID != f.user.ID || ev.Alert.Device != dev {
		t.Fatalf("callback %s %s (%v)", hit.Header.Get("X-Service-Event"), hit.Body, err)
	}
	wantError(t, e.request("POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "acknowledge"}, f.token), 409, "alert_closed")
	wantError(t, e.request("POST", "/v1/callback/"+f.hook+"/"+id+"/alert/cancel", nil, ""), 409, "alert_closed")
	p := f.poll(id).Body
	if p["status"] != "pending" || p["alert"].(map[string]any)["device"] != dev {
		t.Fatalf("poll after acknowledgement = %v", p)
	}
	// The message's own button still answers it.
	f.tap(id, "failover")
	if hits := rc.waitHits(t, 2, 5*time.Second); !strings.Contains(string(hits[1].Body), `"response.received"`) {
		t.Fatalf("second callback %s, want response.received", hits[1].Body)
	}

	// The sender cancels with the webhook token; the owner cancels from the API.
	byOwner, bySender := send(), send()
	wantError(t, e.request("POST", "/v1/callback/nope/"+bySender+"/alert/cancel", nil, ""), 401, "invalid_token")
	other := cbSetup(e, "eve@example.com")
	wantError(t, e.request("POST", "/v1/callback/"+other.hook+"/"+bySender+"/alert/cancel", nil, ""), 404, "not_found")
	wantError(t, e.request("POST", "/v1/messages/"+byOwner+"/alert/cancel", nil, other.token), 404, "not_found")
	if a := e.do(200, "POST", "/v1/callback/"+f.hook+"/"+bySender+"/alert/cancel", nil, "").Body["alert"].(map[string]any); a["state"] != "cancelled" || a["cancelled_by"] != "sender" {
		t.Fatalf("sender's cancel = %v", a)
	}
	if a := e.do(200, "POST", "/v1/messages/"+byOwner+"/alert/cancel", nil, f.token).Body["alert"].(map[string]any); a["cancelled_by"] != f.user.ID {
		t.Fatalf("owner's cancel = %v", a)
	}
	events := map[string]int{}
	for _, h := range rc.waitHits(t, 4, 5*time.Second) {
		events[h.Header.Get("X-Service-Event")]++
	}
	if events["alert.cancelled"] != 2 {
		t.Fatalf("callbacks = %v, want two alert.cancelled", events)
	}
}

// TestUrgentSweepOverHTTP: the server's jobs and the API on the test clock:
// the alert repeats, and the message shows it.
func TestUrgentSweepOverHTTP(t *testing.T) {
	e := newTestEnv(t)
	ann := e.newUser("ann@example.com")
	chID, token := msgChannel(e, ann, "Disks")
	urgentOn(e, ann, chID, map[string]any{"repeat_seconds": 60, "expire_seconds": 120})
	id := e.do(200, "POST", "/v1/send/"+token, map[string]any{"title": "disk failing", "priority": "urgent"}, "").Str("id")
	sweep := func(d time.Duration) {
		t.Helper()
		e.clock.Advance(d)
		if _, err := e.s.svc.SweepAlerts(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	sweep(time.Minute)
	a := e.do(200, "GET", "/v1/messages/"+id, nil, ann.Token).Body["alert"].(map[string]any)
	if cbNum(a["repeats"]) != 1 || a["state"] != "active" {
		t.Fatalf("alert after a minute = %v", a)
	}
	sweep(time.Minute)
	a = e.do(200, "GET", "/v1/messages/"+id, nil, ann.Token).Body["alert"].(map[string]any)
	if a["state"] != "expired" || a["next_repeat_at"] != nil || a["resolved_at"] == nil {
		t.Fatalf("alert after two minutes = %v", a)
	}
	wantError(t, e.request("POST", "/v1/messages/"+id+"/respond", map[string]any{"action": "acknowledge"}, ann.Token), 409, "alert_closed")
}

func TestCompatPriorityUrgent(t *testing.T) {
	e := newTestEnv(t)
	ann := e.newUser("ann@example.com")
	chID, token := msgChannel(e, ann, "NAS")
	prio := func(id string) string { m, _ := storedExtras(t, e, id); return m.Priority }
	m, _ := ntfyPublish(t, e, 200, "POST", "/"+token, []byte("disk failing"), "Priority", "5")
	if got := prio(m.ID); got != "high" {
		t.Fatalf("ntfy priority 5 to a channel without urgent: %q, want high", got)
	}
	urgentOn(e, ann, chID, map[string]any{})
	m, _ = ntfyPublish(t, e, 200, "POST", "/"+token, []byte("disk failing"), "Priority", "5")
	if got := prio(m.ID); got != "urgent" {
		t.Fatalf("ntfy priority 5 to a channel with urgent: %q, want urgent", got)
	}
	m, _ = ntfyPublish(t, e, 200, "POST", "/"+token, []byte("disk failing"), "Priority", "4")
	if got := prio(m.ID); got != "high" {
		t.Fatalf("ntfy priority 4: %q, want high", got)
	}
	m, _ = ntfyPublish(t, e, 200, "POST", "/"+token, []byte("disk failing"), "Priority", "5", "Cache", "no")
	if got := prio(m.ID); got != "high" {
		t.Fatalf("ntfy priority 5 with cache=no: %q, want high (nothing kept to alert with)", got)
	}
	gotifyPost(t, e, 200, "/message?token="+token, `{"message":"disk failing","priority":10}`, "Content-Type", "application/json")
	page := e.do(200, "GET", "/v1/messages?channel_id="+chID+"&limit=1", nil, ann.Token).Body["messages"].([]any)
	if got := page[0].(map[string]any)["priority"]; got != "urgent" {
		t.Fatalf("gotify priority 10: %q, want urgent", got)
	}
}

// TestUrgentEscalationDeclinedLosesAccess: a contact reached by an
// escalation reads and acknowledges the alert; once they decline (or
// withdraw) their acceptance, they no longer may, as an approver who
// declines no longer may open or vote.
func TestUrgentEscalationDeclinedLosesAccess(t *testing.T) {
	e := newTestEnv(t)
	ann, bob := e.newUser("ann@example.com"), e.newUser("bob@example.com")
	chID, token := msgChannel(e, ann, "UPS")
	urgentOn(e, ann, chID, map[string]any{"repeat_seconds": 60, "escalate_after_seconds": 60, "escalation": []string{bob.ID}})
	inv := e.do(200, "GET", "/v1/approvals/invitations", nil, bob.Token).Body["invitations"].([]any)[0].(map[string]any)["id"].(string)
	e.do(200, "POST", "/v1/approvals/invitations/"+inv+"/accept", nil, bob.Token)
	first := e.do(200, "POST", "/v1/send/"+token, map[string]any{"title": "on battery", "priority": "urgent"}, "").Str("id")
	second := e.do(200, "POST", "/v1/send/"+token, map[string]any{"title": "still on battery", "priority": "urgent"}, "").Str("id")
	e.clock.Advance(time.Minute)
	if _, err := e.s.svc.SweepAlerts(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{first, second} {
		if lvl := cbNum(e.do(200, "GET", "/v1/messages/"+id, nil, bob.Token).Body["alert"].(map[string]any)["level"]); lvl != 1 {
			t.Fatalf("alert level %v, want 1: escalated to bob", lvl)
		}
	}
	e.do(200, "POST", "/v1/messages/"+first+"/respond", map[string]any{"action": "acknowledge"}, bob.Token)
	listed := func() int {
		return len(e.do(200, "GET", "/v1/messages?approver=me", nil, bob.Token).Body["messages"].([]any))
	}
	if n := listed(); n != 2 {
		t.Fatalf("bob's approvals list holds %d messages, want the 2 alerts that reached him", n)
	}

	e.do(200, "POST", "/v1/approvals/invitations/"+inv+"/decline", nil, bob.Token)
	if n := listed(); n != 0 {
		t.Fatalf("bob's approvals list holds %d messages after he declined, want none", n)
	}
	for _, id := range []string{first, second} {
		wantError(t, e.request("GET", "/v1/messages/"+id, nil, bob.Token), 404, "not_found")
		wantError(t, e.request("GET", "/v1/messages/"+id+"/alert", nil, bob.Token), 404, "not_found")
	}
	wantError(t, e.request("POST", "/v1/messages/"+second+"/respond", map[string]any{"action": "acknowledge"}, bob.Token), 404, "not_found")
	if a := e.do(200, "GET", "/v1/messages/"+second, nil, ann.Token).Body["alert"].(map[string]any); a["state"] != "active" {
		t.Fatalf("ann's alert after bob's refused acknowledgement = %v", a)
	}
}
