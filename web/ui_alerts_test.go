package web_test

// Browser tests of urgent alerts: the message list's alert, its
// Acknowledge and Resolve buttons, and the channel's urgent policy editor.

import (
	"fmt"
	"net/http"
	"testing"
)

// urgentChannel makes a channel that takes urgent messages, with the
// policy given (nil: the defaults), and returns its id and webhook.
func (e *env) urgentChannel(token, name string, policy map[string]any) (string, string) {
	e.t.Helper()
	id, webhook := e.channel(token, name)
	if policy == nil {
		policy = map[string]any{}
	}
	if status, body := e.api(http.MethodPatch, "/v1/channels/"+id, token, map[string]any{"urgent": policy}); status != http.StatusOK {
		e.t.Fatalf("turn on urgent messages on %s: %d %v", name, status, body)
	}
	return id, webhook
}

func alertOf(m map[string]any) map[string]any {
	a, _ := m["alert"].(map[string]any)
	return a
}

// TestUIUrgentAlert: an urgent message is marked as such, and its alert
// shown: active, whom it alerted; the Acknowledge button acknowledges it
// (stored with who), after which the alert says who and the button goes;
// the owner's Resolve button cancels another's alert.
func TestUIUrgentAlert(t *testing.T) {
	e, b, ada := setup(t)
	tok := e.token(adaEmail, adaPassword)
	_, webhook := e.urgentChannel(tok, "Power", nil)
	first := e.send(webhook, map[string]any{"title": "UPS on battery", "body": "ups@nas: on battery", "priority": "urgent"})

	b.signIn(adaEmail, adaPassword)
	b.openView("messages")
	art := articleSel(first)
	b.waitFor("the urgent message", shownJS(art+` .message-alert[data-alert-state="active"]`))
	if !eval[bool](b, `document.querySelector(`+js(art)+`).classList.contains("priority-urgent")`) {
		t.Error("the urgent message's article is not marked priority-urgent")
	}
	if got := b.text(art + " .message-priority"); got != "urgent priority" {
		t.Errorf("priority label = %q, want urgent priority", got)
	}
	if got := b.text(art + " .alert-summary"); got != "urgent Alerting until acknowledged · repeated 0 times, every 5 minutes" {
		t.Errorf("alert summary = %q", got)
	}
	if !b.shown(art + " .alert-expires") {
		t.Error("the active alert does not say when it expires")
	}
	if !b.shown(art + ` button.message-alert-cancel`) {
		t.Error("the owner sees no Resolve button on an active alert")
	}

	if got := b.text(art + " .alert-alerted li.alerted .alerted-who"); got != "ada" {
		t.Errorf("alerted = %q, want ada", got)
	}
	b.click(art + ` button.message-action[data-key="acknowledge"]`)
	b.waitFor("acknowledged", shownJS(art+` .message-alert[data-alert-state="acknowledged"]`)+` && `+loaded())
	mustErrorEmpty(b)
	if got := b.text(art + " .alert-ack-by"); got != "ada" {
		t.Errorf("acknowledged by %q, want ada", got)
	}
	if got := b.text(art + " .alert-ack-device"); got != "from the web app" {
		t.Errorf("acknowledged %q, want from the web app", got)
	}
	if b.shown(art+` button.message-action[data-key="acknowledge"]`) || b.shown(art+` button.message-alert-cancel`) {
		t.Error("Acknowledge or Resolve still shown on an acknowledged alert")
	}
	if b.shown(art + " .message-status") {
		t.Errorf("an acknowledged alert with nothing else to answer says %q", b.text(art+" .message-status"))
	}
	a := alertOf(e.apiMessage(tok, first))
	if by, _ := a["acknowledged_by"].(map[string]any); a["state"] != "acknowledged" || by["id"] != ada.ID {
		t.Errorf("stored alert after Acknowledge = %v, want acknowledged by %s", a, ada.ID)
	}

	second := e.send(webhook, map[string]any{"title": "UPS battery low", "priority": "urgent"})
	art = articleSel(second)
	b.waitFor("the second alert", shownJS(art+` button.message-alert-cancel`))
	b.click(art + ` button.message-alert-cancel`)
	b.waitFor("resolved", shownJS(art+` .message-alert[data-alert-state="cancelled"]`)+` && `+loaded())
	if got := b.text(art + " .alert-resolved"); got == "" || got[:len("Resolved by the channel owner")] != "Resolved by the channel owner" {
		t.Errorf("resolved alert says %q", got)
	}
	if b.shown(art + ` button.message-action[data-key="acknowledge"]`) {
		t.Error("Acknowledge still shown on a resolved alert")
	}
	if a := alertOf(e.apiMessage(tok, second)); a["state"] != "cancelled" || a["cancelled_by"] != ada.ID {
		t.Errorf("stored alert after Resolve = %v, want cancelled by %s", a, ada.ID)
	}
}

// chips is what a people list shows: entry → state.
func (b *browser) chips(list string) map[string]string {
	b.t.Helper()
	return eval[map[string]string](b, `Object.fromEntries(Array.from(document.querySelectorAll(`+js(list+" li.chip")+`)).map((c) =>
		[c.querySelector("span").textContent, c.dataset.state]))`)
}

// TestUIChannelUrgentPolicy: the channel's Urgent alerts card turns urgent
// messages on with its times and an escalation list, whose people are
// invited and shown as the approvers are (named once they accept); a
// repeat longer than the expiry is refused beside Repeat; turning urgent
// messages off stores null.
func TestUIChannelUrgentPolicy(t *testing.T) {
	e, b, _ := setup(t)
	tok := e.token(adaEmail, adaPassword)
	e.addUser("bob@example.com", "bob's password!")
	id, _ := e.channel(tok, "Power")
	row := `#channels tr[data-channel-id="` + id + `"]`

	b.signIn(adaEmail, adaPassword)
	b.openView("channels")
	b.click(row + " button.channel-urgent")
	b.waitFor("the urgent card", shownJS("#urgent-editor")+` && `+loaded())
	if eval[bool](b, `document.getElementById("urgent-allow").checked`) {
		t.Error("a channel without urgent messages shows them on")
	}
	b.click("#urgent-allow")
	b.choose("#urgent-repeat", "1800")
	b.choose("#urgent-expire", "300")
	b.click("#urgent-save")
	b.waitFieldError("#urgent-repeat", "Repeat (1800) must not exceed urgent.expire_seconds (300).")
	if ch := e.apiChannel(tok, id); ch["urgent"] != nil {
		t.Fatalf("after a refusal the channel's urgent = %v, want null", ch["urgent"])
	}

	b.choose("#urgent-repeat", "60")
	b.fill("#urgent-email", "bob@example.com")
	b.click("#urgent-add")
	b.fill("#urgent-email", "carol@example.com")
	b.click("#urgent-add")
	b.choose("#urgent-escalate", "120")
	b.click("#urgent-save")
	b.waitFor("saved", `document.getElementById("urgent-editor").hidden && `+loaded())
	mustErrorEmpty(b)
	want := map[string]any{"repeat_seconds": 60.0, "expire_seconds": 300.0, "escalate_after_seconds": 120.0,
		"escalation": []any{"bob@example.com", "carol@example.com"}}
	if got := e.apiChannel(tok, id)["urgent"]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("stored urgent policy = %v, want %v", got, want)
	}
	if got := b.text(row + " .urgent-badge"); got != "urgent" {
		t.Errorf("the channel's row marks urgent messages with %q", got)
	}

	// Bob accepts; the card names him, Carol (no account) stays invited.
	e.acceptInvitations("bob@example.com", "bob's password!")
	b.click(row + " button.channel-urgent")
	b.waitFor("the urgent card again", shownJS("#urgent-escalation li.chip")+` && `+loaded())
	if got := b.chips("#urgent-escalation"); fmt.Sprint(got) != fmt.Sprint(map[string]string{
		"bob@example.com (bob)": "accepted", "carol@example.com": "invited"}) {
		t.Errorf("escalation chips = %v", got)
	}
	if got := eval[string](b, `document.getElementById("urgent-repeat").value + "/" + document.getElementById("urgent-expire").value + "/" +
		document.getElementById("urgent-escalate").value`); got != "60/300/120" {
		t.Errorf("the card shows times %s, want 60/300/120", got)
	}

	b.click("#urgent-allow")
	b.click("#urgent-save")
	b.waitFor("saved off", `document.getElementById("urgent-editor").hidden && `+loaded())
	if ch := e.apiChannel(tok, id); ch["urgent"] != nil {
		t.Errorf("after turning urgent messages off the channel's urgent = %v, want null", ch["urgent"])
	}
	if b.shown(row + " .urgent-badge") {
		t.Error("the row still marks urgent messages")
	}
}

// apiChannel is GET /v1/channels/{id}.
func (e *env) apiChannel(token, id string) map[string]any {
	e.t.Helper()
	status, body := e.api(http.MethodGet, "/v1/channels/"+id, token, nil)
	if status != http.StatusOK {
		e.t.Fatalf("GET /v1/channels/%s: %d %v", id, status, body)
	}
	return body
}
