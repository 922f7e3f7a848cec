package web_test

// Browser tests of the messages view: live updates over the stream,
// answering actions and forms, links, deletion and paging.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/delivery"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/store"
)

// ---------------------------------------------------------------------------
// Messages

// channel creates a channel through the API and returns its id and webhook
// URL.
func (e *env) channel(token, name string) (id, webhook string) {
	e.t.Helper()
	status, body := e.api(http.MethodPost, "/v1/channels", token, map[string]string{"name": name})
	if status != http.StatusCreated {
		e.t.Fatalf("create channel %s: %d %v", name, status, body)
	}
	id, _ = body["id"].(string)
	webhook, _ = body["webhook_url"].(string)
	if id == "" || !strings.HasPrefix(webhook, e.base+"/v1/send/") {
		e.t.Fatalf("create channel %s: id %q webhook_url %q", name, id, webhook)
	}
	return id, webhook
}

// send posts a payload to a webhook URL, as a script's curl would, and
// returns the new message's id.
func (e *env) send(webhook string, payload map[string]any) string {
	e.t.Helper()
	status, body := e.api(http.MethodPost, webhook, "", payload)
	if status != http.StatusOK || body["ok"] != true {
		e.t.Fatalf("POST %s: %d %v", webhook, status, body)
	}
	id, _ := body["id"].(string)
	if !strings.HasPrefix(id, "msg_") {
		e.t.Fatalf("POST %s: id %q", webhook, id)
	}
	return id
}

// poll is the sender's GET /v1/callback/{token}/{message_id}, with the token
// taken from the webhook URL.
func (e *env) poll(webhook, id string) (int, map[string]any) {
	e.t.Helper()
	return e.api(http.MethodGet, "/v1/callback/"+strings.TrimPrefix(webhook, e.base+"/v1/send/")+"/"+id, "", nil)
}

func articleSel(id string) string { return `#messages article.message[data-message-id="` + id + `"]` }

func articleJS(id string) string { return `document.querySelector(` + js(articleSel(id)) + `)` }

// statusJS is a condition: message id is on the page with polling status
// status (the article's data-status; the badge says it in words).
func statusJS(id, status string) string {
	return `((a) => !!a && a.dataset.status === ` + js(status) + `)(` + articleJS(id) + `)`
}

const streamOpen = `document.body.dataset.stream === "open"`

// articleIDs are the data-message-id of the articles shown, in order.
func (b *browser) articleIDs() []string {
	b.t.Helper()
	return eval[[]string](b, `Array.from(document.querySelectorAll("#messages article.message")).map(a => a.dataset.messageId)`)
}

// shownMessage is what one article shows.
type shownMessage struct {
	Title     string     `json:"title"`
	Body      string     `json:"body"`      // textContent, untrimmed
	BodyLines string     `json:"bodyLines"` // innerText: as rendered
	WhiteSp   string     `json:"whiteSpace"`
	Channel   string     `json:"channel"`
	Priority  string     `json:"priority"`
	Time      string     `json:"time"`
	Datetime  string     `json:"datetime"`
	Status    string     `json:"status"`
	Delete    string     `json:"delete"`
	Buttons   [][]string `json:"buttons"` // [data-key, label] of button.message-action
	Links     int        `json:"links"`   // a.message-link
	Forms     int        `json:"forms"`   // form.message-form
	Markup    int        `json:"markup"`  // elements inside the title and body
}

func (b *browser) message(id string) shownMessage {
	b.t.Helper()
	return eval[shownMessage](b, `((a) => {
		const q = (s) => a.querySelector(s);
		const text = (s) => q(s) ? q(s).textContent.trim() : "<missing>";
		const body = q("div.message-body");
		return {
			title: text("h3.message-title"),
			body: body ? body.textContent : "<missing>",
			bodyLines: body ? body.innerText : "",
			whiteSpace: body ? getComputedStyle(body).whiteSpace : "",
			channel: text("span.message-channel"),
			priority: text("span.message-priority"),
			time: text("time.message-time"),
			datetime: q("time.message-time") ? q("time.message-time").getAttribute("datetime") : "",
			status: text("span.message-status"),
			delete: text("button.message-delete"),
			buttons: Array.from(a.querySelectorAll("button.message-action")).map(b => [b.dataset.key, b.textContent.trim()]),
			links: a.querySelectorAll("a.message-link").length,
			forms: a.querySelectorAll("form.message-form").length,
			markup: a.querySelectorAll("h3.message-title *, div.message-body *").length,
		};
	})(`+articleJS(id)+`)`)
}

// apiMessage reads a message through the API.
func (e *env) apiMessage(token, id string) map[string]any {
	e.t.Helper()
	status, body := e.api(http.MethodGet, "/v1/messages/"+id, token, nil)
	if status != http.StatusOK {
		e.t.Fatalf("GET /v1/messages/%s: %d %v", id, status, body)
	}
	return body
}

// TestUIMessagesLive: with the messages view open, a message sent to a
// channel's webhook appears without a reload, newest first, its title and
// body as text (line breaks kept, no markup); a message deleted elsewhere
// goes away; signing out closes the stream.
func TestUIMessagesLive(t *testing.T) {
	e, b, _ := setup(t)
	tok := e.token(adaEmail, adaPassword)
	chID, webhook := e.channel(tok, "Deploys")

	b.signIn(adaEmail, adaPassword)
	nav := eval[[]string](b, `Array.from(document.querySelectorAll("nav#nav .nav-links a")).filter(a => a.getClientRects().length > 0).map(a => a.id)`)
	if want := []string{"nav-channels", "nav-messages", "nav-approvals", "nav-devices", "nav-folders", "nav-keys", "nav-account"}; fmt.Sprint(nav) != fmt.Sprint(want) {
		t.Errorf("nav links = %q, want %q", nav, want)
	}
	b.openView("messages")
	b.waitFor("the live stream open", streamOpen)
	mustErrorEmpty(b)
	if got := eval[string](b, `document.title`); got != "Messages · Herald" {
		t.Errorf("document.title = %q, want Messages · Herald", got)
	}
	if !b.shown("#messages-empty") {
		t.Error("#messages-empty is not visible with no messages")
	} else if got := b.text("#messages-empty"); got != "No messages yet. Send one with curl to a channel's webhook URL: the Channels page has a ready example." {
		t.Errorf("#messages-empty = %q", got)
	}
	if b.shown("button#messages-more") {
		t.Error("button#messages-more is visible with no messages")
	}
	opts := eval[[][]string](b, `Array.from(document.querySelectorAll("select#messages-channel option")).map(o => [o.value, o.textContent.trim()])`)
	if len(opts) != 2 || opts[0][0] != "" || opts[1][0] != chID || opts[1][1] != "Deploys" {
		t.Errorf("select#messages-channel options = %q, want all channels then [%s Deploys]", opts, chID)
	}

	// Sent with curl-like HTTP while the page is open: no reload, no click.
	eval[bool](b, `window.heraldNoReload = true`)
	const title = `Deploy <i>finished</i>`
	const body = "<b>x</b> is not bold\nsecond line"
	id := e.send(webhook, map[string]any{"title": title, "body": body, "priority": "high",
		"actions": []map[string]any{{"type": "button", "key": "ack", "label": "Acknowledge"}}})
	b.waitFor("the new message", shownJS(articleSel(id))+" && "+loaded())
	if !eval[bool](b, `window.heraldNoReload === true`) {
		t.Error("the page was reloaded to show the new message")
	}
	mustErrorEmpty(b)
	if b.shown("#messages-empty") {
		t.Error("#messages-empty is still visible with a message")
	}
	m := b.message(id)
	if m.Title != title {
		t.Errorf("h3.message-title = %q, want %q", m.Title, title)
	}
	// The body is Markdown with raw HTML off: the tags show as text, the
	// line break stays.
	if m.BodyLines != "<b>x</b> is not bold\nsecond line" {
		t.Errorf("div.message-body renders as %q, want the tags as text and the line break kept", m.BodyLines)
	}
	if eval[int](b, `document.querySelectorAll("#messages b, #messages i, h3.message-title *").length`) != 0 {
		t.Error("the title or body's HTML became markup")
	}
	if m.Channel != "Deploys" || m.Priority != "high priority" || m.Status != "Waiting for an answer" || m.Delete != "Delete" {
		t.Errorf("article shows channel %q priority %q status %q delete %q; want Deploys, high priority, Waiting for an answer, Delete",
			m.Channel, m.Priority, m.Status, m.Delete)
	}
	if len(m.Buttons) != 1 || m.Buttons[0][0] != "ack" || m.Buttons[0][1] != "Acknowledge" {
		t.Errorf("button.message-action = %q, want [ack Acknowledge]", m.Buttons)
	}
	stored := e.apiMessage(tok, id)
	if stored["title"] != title || stored["body"] != body || stored["priority"] != "high" || stored["status"] != "pending" ||
		stored["channel_id"] != chID || stored["response"] != nil {
		t.Errorf("GET /v1/messages/%s = %v", id, stored)
	}
	if m.Datetime != stored["created_at"] || m.Time == "" {
		t.Errorf("time.message-time datetime %q text %q, want created_at %v", m.Datetime, m.Time, stored["created_at"])
	}

	// A second one comes first.
	id2 := e.send(webhook, map[string]any{"title": "Second"})
	b.waitFor("the second message", shownJS(articleSel(id2))+" && "+loaded())
	if ids := b.articleIDs(); len(ids) != 2 || ids[0] != id2 || ids[1] != id {
		t.Errorf("articles = %q, want [%s %s] (newest first)", ids, id2, id)
	}
	// Normal priority goes without saying, and with nothing to answer there
	// is no "waiting" badge.
	if got := b.message(id2); got.Priority != "<missing>" || got.Body != "" || len(got.Buttons) != 0 || got.Status != "<missing>" {
		t.Errorf("second message shows %+v, want no priority, no body, no actions, no status badge", got)
	}
	msgs := e.list("/v1/messages", "messages", tok)
	if len(msgs) != 2 || msgs[0]["id"] != id2 || msgs[1]["id"] != id {
		t.Errorf("GET /v1/messages = %v, want %s then %s", msgs, id2, id)
	}

	// Deleted by another client: gone from the page.
	if status, body := e.api(http.MethodDelete, "/v1/messages/"+id2, tok, nil); status != http.StatusOK {
		t.Fatalf("DELETE /v1/messages/%s: %d %v", id2, status, body)
	}
	b.waitFor("the deleted message gone", `!`+articleJS(id2)+` && !!`+articleJS(id)+` && `+loaded())
	if !eval[bool](b, `window.heraldNoReload === true`) {
		t.Error("the page was reloaded")
	}
	mustErrorEmpty(b)

	// Signing out closes the stream.
	b.click("button#signout")
	b.waitView("signin")
	if got := eval[string](b, `document.body.dataset.stream || ""`); got != "closed" {
		t.Errorf("body.dataset.stream after sign-out = %q, want closed", got)
	}
	mustErrorEmpty(b)
}

// TestUIMessagesRespond: a button answers the message (the sender's poll
// reads it, the page follows); a form's required field is the API's to
// enforce, and a filled form's values reach the poll and the callback.
func TestUIMessagesRespond(t *testing.T) {
	e, b, _ := setup(t)
	tok := e.token(adaEmail, adaPassword)
	var mu sync.Mutex
	var callbacks []map[string]any
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		_ = json.NewDecoder(r.Body).Decode(&ev)
		mu.Lock()
		callbacks = append(callbacks, ev)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	// newEnv runs no callback queue; this test starts one, as serve does.
	queue := delivery.New(e.st, delivery.Config{Workers: 1, Timeout: 5 * time.Second, BackoffBase: time.Second,
		BackoffMax: time.Minute, MaxAttempts: 8, UserAgent: "Herald-Webhooks/test",
		Guard: netguard.Policy{AllowLoopback: true}},
		delivery.Options{Logger: slog.New(slog.DiscardHandler)})
	qctx, stopQueue := context.WithCancel(context.Background())
	queueDone := make(chan struct{})
	go func() { defer close(queueDone); _ = queue.Run(qctx) }()
	t.Cleanup(func() { stopQueue(); <-queueDone })
	_, webhook := e.channel(tok, "Deploys")
	btnID := e.send(webhook, map[string]any{"title": "Deploy to production?", "actions": []map[string]any{
		{"type": "button", "key": "approve", "label": "Approve", "style": "primary"},
		{"type": "button", "key": "later", "label": "Later"},
	}})
	formID := e.send(webhook, map[string]any{"title": "Why did it fail?", "callback_url": rcv.URL + "/hook",
		"actions": []map[string]any{{"type": "form", "key": "explain", "label": "Send reason", "fields": []map[string]any{
			{"key": "reason", "label": "Reason", "type": "text", "required": true, "placeholder": "What happened"},
			{"key": "notes", "label": "Notes", "type": "textarea"},
			{"key": "count", "label": "Retries", "type": "number"},
			{"key": "env", "label": "Environment", "type": "select", "options": []string{"staging", "production"}},
			{"key": "page", "label": "Page the on-call", "type": "checkbox"},
		}}}})

	b.signIn(adaEmail, adaPassword)
	b.openView("messages")
	b.waitFor("both messages", shownJS(articleSel(btnID))+" && "+shownJS(articleSel(formID))+" && "+loaded())

	// A button.
	btnSel := articleSel(btnID)
	if got := b.message(btnID); fmt.Sprint(got.Buttons) != "[[approve Approve] [later Later]]" || got.Status != "Waiting for an answer" {
		t.Errorf("buttons %q status %q, want [[approve Approve] [later Later]] and pending", got.Buttons, got.Status)
	}
	b.click(btnSel + ` button.message-action[data-key="approve"]`)
	b.waitFor("status submitted", statusJS(btnID, "submitted")+" && "+loaded())
	mustErrorEmpty(b)
	if got := b.message(btnID); len(got.Buttons) != 0 || got.Forms != 0 || got.Links != 0 {
		t.Errorf("after the answer the article still has actions: %+v", got)
	}
	m := e.apiMessage(tok, btnID)
	if resp, _ := m["response"].(map[string]any); m["status"] != "submitted" || resp == nil || resp["triggered_by"] != "approve" {
		t.Errorf("GET /v1/messages/%s after the tap = %v, want submitted by approve", btnID, m)
	}
	status, poll := e.poll(webhook, btnID)
	result, _ := poll["result"].(map[string]any)
	if status != http.StatusOK || poll["status"] != "submitted" || result == nil {
		t.Fatalf("poll %s: %d %v, want submitted with a result", btnID, status, poll)
	}
	if responses, ok := result["responses"].(map[string]any); result["triggered_by"] != "approve" || result["message_id"] != btnID || !ok || len(responses) != 0 {
		t.Errorf("poll result = %v, want triggered_by approve, no responses", result)
	}
	// The poll read it once; the page follows live.
	b.waitFor("status already_read", statusJS(btnID, "already_read")+" && "+loaded())
	if got := b.message(btnID); len(got.Buttons) != 0 {
		t.Errorf("buttons back after the poll: %q", got.Buttons)
	}
	if status, poll := e.poll(webhook, btnID); status != http.StatusOK || poll["status"] != "already_read" {
		t.Errorf("second poll: %d %v, want already_read", status, poll)
	}
	if status, body := e.api(http.MethodPost, "/v1/messages/"+btnID+"/respond", tok, map[string]string{"action": "later"}); status != http.StatusConflict {
		t.Errorf("a second answer through the API: %d %v, want 409", status, body)
	}

	// A form.
	formSel := articleSel(formID) + ` form.message-form[data-key="explain"]`
	type field struct {
		Key      string   `json:"key"`
		Tag      string   `json:"tag"`
		Type     string   `json:"type"`
		Label    string   `json:"label"`
		Required bool     `json:"required"`
		Options  []string `json:"options"`
	}
	fields := eval[[]field](b, `Array.from(document.querySelectorAll(`+js(formSel+" [data-field-key]")+`)).map(i => ({
		key: i.dataset.fieldKey, tag: i.tagName.toLowerCase(), type: i.type || "",
		label: Array.from(i.labels || []).map(l => l.textContent).join(" ").trim(), required: i.required,
		options: i.tagName === "SELECT" ? Array.from(i.options).map(o => o.value) : [],
	}))`)
	want := []field{
		{"reason", "input", "text", "Reason (required)", true, []string{}},
		{"notes", "textarea", "textarea", "Notes", false, []string{}},
		{"count", "input", "number", "Retries", false, []string{}},
		{"env", "select", "select-one", "Environment", false, []string{"", "staging", "production"}},
		{"page", "input", "checkbox", "Page the on-call", false, []string{}},
	}
	if fmt.Sprintf("%+v", fields) != fmt.Sprintf("%+v", want) {
		t.Errorf("form fields = %+v\nwant %+v", fields, want)
	}
	if got := b.text(formSel + " button.message-form-submit"); got != "Send reason" {
		t.Errorf("button.message-form-submit = %q, want Send reason", got)
	}

	// Empty: the API's error beside the field, nothing stored, the form stays.
	b.click(formSel + " button.message-form-submit")
	b.waitFieldError(formSel+` [data-field-key="reason"]`, "Reason is required.")
	if m := e.apiMessage(tok, formID); m["status"] != "pending" || m["response"] != nil {
		t.Errorf("GET /v1/messages/%s after the empty form = %v, want pending without a response", formID, m)
	}
	if status, poll := e.poll(webhook, formID); status != http.StatusOK || poll["status"] != "pending" {
		t.Errorf("poll after the empty form: %d %v, want pending", status, poll)
	}
	if !b.shown(formSel) || b.text(articleSel(formID)+" span.message-status") != "Waiting for an answer" {
		t.Error("the form is gone after the API refused it")
	}

	// Filled: stored, polled, called back.
	b.fill(formSel+` [data-field-key="reason"]`, "disk full")
	b.fill(formSel+` [data-field-key="notes"]`, "line one\nline two")
	b.fill(formSel+` [data-field-key="count"]`, "3")
	b.choose(formSel+` [data-field-key="env"]`, "production")
	b.click(formSel + ` [data-field-key="page"]`)
	b.click(formSel + " button.message-form-submit")
	b.waitFor("the form answered", statusJS(formID, "submitted")+" && !document.querySelector("+js(formSel)+") && "+loaded())
	mustErrorEmpty(b)
	wantResponses := map[string]any{"reason": "disk full", "notes": "line one\nline two", "count": 3.0, "env": "production", "page": true}
	status, poll = e.poll(webhook, formID)
	result, _ = poll["result"].(map[string]any)
	if status != http.StatusOK || poll["status"] != "submitted" || result == nil || result["triggered_by"] != "explain" {
		t.Fatalf("poll %s: %d %v, want submitted by explain", formID, status, poll)
	}
	if got := fmt.Sprint(result["responses"]); got != fmt.Sprint(wantResponses) {
		t.Errorf("poll result.responses = %s, want %s", got, fmt.Sprint(wantResponses))
	}
	var cb map[string]any
	testkit.Eventually(t, waitTimeout, func() error {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range callbacks {
			if c["message_id"] == formID {
				cb = c
			}
		}
		if cb == nil {
			return errors.New("no callback for the form's answer")
		}
		return nil
	})
	if cb["event"] != "response.received" || cb["triggered_by"] != "explain" || fmt.Sprint(cb["responses"]) != fmt.Sprint(wantResponses) {
		t.Errorf("callback = %v, want response.received by explain with %v", cb, wantResponses)
	}
	b.waitFor("status already_read", statusJS(formID, "already_read")+" && "+loaded())
	mustErrorEmpty(b)

	// After the sender collected the answers, the page still says what
	// answered each message, with whom and the form's values by label.
	if got := b.text(articleSel(btnID) + " span.message-status"); got != "Answered · the sender has the answer" {
		t.Errorf("status badge after the poll = %q, want Answered · the sender has the answer", got)
	}
	type outcome struct {
		Label  string            `json:"label"`
		By     string            `json:"by"`
		At     string            `json:"at"`
		Values map[string]string `json:"values"`
	}
	outcomeOf := func(id string) outcome {
		return eval[outcome](b, `((a) => { const o = a.querySelector(".message-outcome"); if (!o) return {label: "<missing>"};
			const values = {}; for (const dd of o.querySelectorAll("dd[data-field-key]")) values[dd.previousElementSibling.textContent] = dd.textContent;
			return {label: o.querySelector(".outcome-label").textContent, by: (o.querySelector(".outcome-by") || {}).textContent || "",
				at: (o.querySelector("time") || {dateTime: ""}).getAttribute("datetime") || "", values}; })(`+articleJS(id)+`)`)
	}
	if got := outcomeOf(btnID); got.Label != "Approve" || got.By != " · by ada (ada@example.com)" || got.At == "" {
		t.Errorf("button outcome = %+v, want Approve by ada with a time", got)
	}
	got := outcomeOf(formID)
	wantValues := map[string]string{"Reason": "disk full", "Notes": "line one\nline two", "Retries": "3", "Environment": "production", "Page the on-call": "yes"}
	if got.Label != "Send reason" || fmt.Sprint(got.Values) != fmt.Sprint(wantValues) {
		t.Errorf("form outcome = %+v, want Send reason with %v", got, wantValues)
	}
	stored, _ := e.apiMessage(tok, formID)["outcome"].(map[string]any)
	if stored == nil || stored["action"] != "explain" || fmt.Sprint(stored["responses"]) != fmt.Sprint(wantResponses) || stored["at"] != got.At {
		t.Errorf("stored outcome = %v, want explain with %v at %s", stored, wantResponses, got.At)
	}
}

// TestUIMessagesLinksAndDelete: a url action is a safe link and only an
// http(s) one; the channel filter shows one channel's messages, live too;
// Delete removes the message for the API as well.
func TestUIMessagesLinksAndDelete(t *testing.T) {
	e, b, _ := setup(t)
	ctx := context.Background()
	tok := e.token(adaEmail, adaPassword)
	deploysID, deploys := e.channel(tok, "Deploys")
	backupsID, backups := e.channel(tok, "Backups")
	const runURL = "https://ci.example.com/runs/42?tab=logs&step=2"
	linkID := e.send(deploys, map[string]any{"title": "Build 42 passed", "actions": []map[string]any{
		{"type": "url", "label": "Open run", "value": runURL},
		{"type": "button", "key": "ack", "label": "OK"},
	}})

	// The send API refuses a javascript: link...
	status, refused := e.api(http.MethodPost, deploys, "", map[string]any{"title": "Evil", "actions": []map[string]any{
		{"type": "url", "label": "Evil", "value": "javascript:window.pwned=1"}}})
	if status != http.StatusBadRequest || refused["error"] != "invalid_payload" {
		t.Errorf("send with a javascript: url action: %d %v, want 400 invalid_payload", status, refused)
	}
	// ...so one is planted in the store, as stored data the page must not trust.
	planted := &store.Message{ChannelID: deploysID, Title: "Planted", Priority: "normal", Actions: json.RawMessage(`[
		{"type": "url", "label": "Evil", "value": "javascript:window.pwned=1"},
		{"type": "url", "label": "Data", "value": "data:text/html,<script>window.pwned=1</script>"},
		{"type": "url", "label": "Spaced", "value": " javascript:window.pwned=1"}]`)}
	if err := e.st.CreateMessage(ctx, planted); err != nil {
		t.Fatal(err)
	}
	backupID := e.send(backups, map[string]any{"title": "Backup done"})

	b.signIn(adaEmail, adaPassword)
	b.openView("messages")
	b.waitFor("three messages", `document.querySelectorAll("#messages article.message").length === 3 && `+loaded())
	if ids := b.articleIDs(); fmt.Sprint(ids) != fmt.Sprint([]string{backupID, planted.ID, linkID}) {
		t.Errorf("articles = %q, want [%s %s %s]", ids, backupID, planted.ID, linkID)
	}

	type link struct {
		Href, Rel, Target, Text string
		HasKey                  bool
	}
	links := eval[[]link](b, `Array.from(document.querySelectorAll(`+js(articleSel(linkID)+" a.message-link")+`)).map(a => ({
		Href: a.getAttribute("href"), Rel: a.getAttribute("rel"), Target: a.getAttribute("target"),
		Text: a.textContent.trim(), HasKey: a.hasAttribute("data-key")}))`)
	if len(links) != 1 || links[0].Href != runURL || links[0].Rel != "noopener noreferrer" || links[0].Target != "_blank" || links[0].Text != "Open run" {
		t.Errorf("a.message-link = %+v, want one to %s with rel noopener noreferrer, target _blank", links, runURL)
	}
	if got := b.message(linkID); len(got.Buttons) != 1 || got.Buttons[0][0] != "ack" {
		t.Errorf("the link's message buttons = %q, want [ack OK]", got.Buttons)
	}
	if got := b.message(planted.ID); got.Links != 0 {
		t.Errorf("the planted message has %d a.message-link, want none", got.Links)
	}
	if n := eval[int](b, `document.querySelectorAll(`+js(articleSel(planted.ID)+" a, #messages [href^='javascript:' i], #messages [href^='data:' i], #messages [href*='javascript:' i]")+`).length`); n != 0 {
		t.Errorf("%d links from non-http(s) url actions", n)
	}
	// They are shown as inert text, so the person knows there was something.
	blocked := eval[[]string](b, `Array.from(document.querySelectorAll(`+js(articleSel(planted.ID)+" .message-link-blocked")+`)).map(e => e.textContent.trim())`)
	if fmt.Sprint(blocked) != "[Evil Data Spaced]" {
		t.Errorf("the planted url actions are shown as %q, want inert [Evil Data Spaced]", blocked)
	}
	b.click(articleSel(planted.ID) + " .message-actions .message-link-blocked")
	if pwned := eval[string](b, `typeof window.pwned`); pwned != "undefined" {
		t.Errorf("window.pwned is %s: a javascript: action ran", pwned)
	}
	mustErrorEmpty(b)

	// The channel filter.
	b.choose("#messages-channel", backupsID)
	b.waitFor("only Backups", `document.querySelectorAll("#messages article.message").length === 1 && !!`+articleJS(backupID)+` && `+loaded())
	if got := b.message(backupID); got.Channel != "Backups" {
		t.Errorf("span.message-channel = %q, want Backups", got.Channel)
	}
	if got := e.list("/v1/messages?channel_id="+backupsID, "messages", tok); len(got) != 1 || got[0]["id"] != backupID {
		t.Errorf("GET /v1/messages?channel_id=%s = %v, want only %s", backupsID, got, backupID)
	}
	// Live, still filtered: a message to Deploys stays out, one to Backups comes in.
	b.waitFor("the live stream open", streamOpen)
	otherID := e.send(deploys, map[string]any{"title": "Not for this filter"})
	backup2ID := e.send(backups, map[string]any{"title": "Backup two"})
	b.waitFor("the second backup", shownJS(articleSel(backup2ID))+" && "+loaded())
	if ids := b.articleIDs(); fmt.Sprint(ids) != fmt.Sprint([]string{backup2ID, backupID}) {
		t.Errorf("filtered articles = %q, want [%s %s] (not %s)", ids, backup2ID, backupID, otherID)
	}
	if got := eval[string](b, `document.getElementById("messages-channel").value`); got != backupsID {
		t.Errorf("the filter changed to %q by a live update", got)
	}
	b.choose("#messages-channel", deploysID)
	b.waitFor("only Deploys", `document.querySelectorAll("#messages article.message").length === 3 && !!`+articleJS(linkID)+` && `+loaded())
	if ids := b.articleIDs(); fmt.Sprint(ids) != fmt.Sprint([]string{otherID, planted.ID, linkID}) {
		t.Errorf("Deploys articles = %q, want [%s %s %s]", ids, otherID, planted.ID, linkID)
	}
	b.choose("#messages-channel", "")
	b.waitFor("all five", `document.querySelectorAll("#messages article.message").length === 5 && `+loaded())
	mustErrorEmpty(b)

	// Delete.
	sel := articleSel(linkID)
	if got := b.text(sel + " button.message-delete"); got != "Delete" {
		t.Errorf("button.message-delete = %q, want Delete", got)
	}
	b.click(sel + " button.message-delete")
	b.waitFor("the article gone", `!`+articleJS(linkID)+` && `+loaded())
	mustErrorEmpty(b)
	if status, body := e.api(http.MethodGet, "/v1/messages/"+linkID, tok, nil); status != http.StatusNotFound {
		t.Errorf("GET /v1/messages/%s after Delete: %d %v, want 404", linkID, status, body)
	}
	if status, body := e.poll(deploys, linkID); status != http.StatusNotFound {
		t.Errorf("poll %s after Delete: %d %v, want 404", linkID, status, body)
	}
	if got := e.list("/v1/messages", "messages", tok); len(got) != 4 {
		t.Errorf("GET /v1/messages after Delete holds %d messages, want 4", len(got))
	}
	if n := len(b.articleIDs()); n != 4 {
		t.Errorf("%d articles after Delete, want 4", n)
	}
	if !eval[bool](b, `!!document.activeElement && document.activeElement.matches("article.message")`) {
		t.Error("after Delete the focus is not on a neighbouring message")
	}
}

// TestUIMessagesMore: the first 50 are shown; More shows the rest.
func TestUIMessagesMore(t *testing.T) {
	e, b, _ := setup(t)
	tok := e.token(adaEmail, adaPassword)
	_, webhook := e.channel(tok, "Bulk")
	const n = 53
	for i := 1; i <= n; i++ {
		e.send(webhook, map[string]any{"title": fmt.Sprintf("Message %d", i)})
	}
	titles := func() []string {
		return eval[[]string](b, `Array.from(document.querySelectorAll("#messages article.message h3.message-title")).map(h => h.textContent.trim())`)
	}

	b.signIn(adaEmail, adaPassword)
	b.openView("messages")
	got := titles()
	if len(got) != 50 || got[0] != "Message 53" || got[49] != "Message 4" {
		t.Fatalf("%d articles from %q to %q, want 50 from Message 53 to Message 4", len(got), got[0], got[len(got)-1])
	}
	if !b.shown("button#messages-more") || b.text("button#messages-more") != "More" {
		t.Error("button#messages-more is not shown with 53 messages")
	}
	if status, body := e.api(http.MethodGet, "/v1/messages?limit=1", tok, nil); status != http.StatusOK || body["total"] != float64(n) {
		t.Errorf("GET /v1/messages total = %v, want %d", body["total"], n)
	}

	b.click("button#messages-more")
	b.waitFor("all 53", `document.querySelectorAll("#messages article.message").length === 53 && `+loaded())
	got = titles()
	if got[50] != "Message 3" || got[52] != "Message 1" {
		t.Errorf("after More the last articles are %q, want Message 3 to Message 1", got[50:])
	}
	if b.shown("button#messages-more") {
		t.Error("button#messages-more is still shown with everything on the page")
	}
	if !eval[bool](b, `document.activeElement === document.querySelectorAll("#messages article.message")[50]`) {
		t.Error("after More the focus is not on the first new message")
	}
	mustErrorEmpty(b)

	// A live one keeps everything shown.
	b.waitFor("the live stream open", streamOpen)
	e.send(webhook, map[string]any{"title": "Message 54"})
	b.waitFor("54 messages", `document.querySelectorAll("#messages article.message").length === 54 && `+loaded())
	if got := titles(); got[0] != "Message 54" {
		t.Errorf("first article %q, want Message 54", got[0])
	}
}
