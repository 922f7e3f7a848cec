package web_test

// Browser tests of the server-side filters: the messages' state filter and
// an approver's list of the approvals asked of them.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// countFetches makes the page record the paths of its GET /v1/messages
// requests in window.messageGets.
func (b *browser) countFetches() {
	b.t.Helper()
	eval[bool](b, `(() => {
		window.messageGets = [];
		if (!window.fetchCounted) {
			const f = window.fetch;
			window.fetch = (input, init) => {
				const url = String(input instanceof Request ? input.url : input);
				if (url.includes("/v1/messages?")) window.messageGets.push(url.slice(url.indexOf("/v1/")));
				return f(input, init);
			};
			window.fetchCounted = true;
		}
		return true;
	})()`)
}

// TestUIMessagesStateFilter: the state filter asks the server, so a
// message that is not on the first unfiltered page is found, with the
// filtered total; one request per change.
func TestUIMessagesStateFilter(t *testing.T) {
	e, b, _ := setup(t)
	tok := e.token(adaEmail, adaPassword)
	_, webhook := e.channel(tok, "Jobs")
	retry := []map[string]any{{"type": "button", "label": "Retry", "key": "retry"}}
	old := e.send(webhook, map[string]any{"title": "Old question", "actions": retry})
	const answered = 55
	for i := 1; i <= answered; i++ {
		id := e.send(webhook, map[string]any{"title": fmt.Sprintf("Job %d", i), "actions": retry})
		if status, body := e.api(http.MethodPost, "/v1/messages/"+id+"/respond", tok, map[string]any{"action": "retry"}); status != http.StatusOK {
			t.Fatalf("respond: %d %v", status, body)
		}
	}

	b.signIn(adaEmail, adaPassword)
	b.openView("messages")
	if ids := b.articleIDs(); len(ids) != 50 || b.shown(articleSel(old)) {
		t.Fatalf("unfiltered first page: %d articles, old question shown %v; want 50 without it", len(ids), b.shown(articleSel(old)))
	}

	b.countFetches()
	b.choose("#messages-state", "pending")
	b.waitFor("the old question", `document.querySelectorAll("#messages article.message").length === 1 && !!`+articleJS(old)+` && `+loaded())
	if got := b.text("#messages-count"); got != "Showing 1 of 1 message" {
		t.Errorf("#messages-count = %q", got)
	}
	if got := b.message(old); got.Status != "Waiting for an answer" || fmt.Sprint(got.Buttons) != "[[retry Retry]]" {
		t.Errorf("old question shows status %q buttons %q", got.Status, got.Buttons)
	}
	gets := eval[[]string](b, `window.messageGets`)
	if len(gets) != 1 || !strings.Contains(gets[0], "state=pending") {
		t.Errorf("choosing a state asked %q, want one GET /v1/messages with state=pending", gets)
	}

	b.countFetches()
	b.choose("#messages-state", "answered")
	b.waitFor("a page of answered ones", `document.querySelectorAll("#messages article.message").length === 50 && !`+articleJS(old)+` && `+loaded())
	if got := b.text("#messages-count"); got != fmt.Sprintf("Showing 50 of %d messages", answered) {
		t.Errorf("#messages-count = %q", got)
	}
	if !b.shown("button#messages-more") {
		t.Error("More is hidden with 5 answered messages left")
	}
	b.click("button#messages-more")
	b.waitFor("every answered one", `document.querySelectorAll("#messages article.message").length === 55 && `+loaded())
	if got := eval[[]string](b, `window.messageGets`); len(got) != 2 || !strings.Contains(got[0], "state=answered") || !strings.Contains(got[1], "state=answered") {
		t.Errorf("answered, then More, asked %q", got)
	}
	mustErrorEmpty(b)
}

// TestUIApprovalsList: an approver (who accepted the channel's invitation)
// opens Approvals and finds the messages
// of someone else's channel that wait for their vote, without the owner's
// controls; votes there, and the vote is stored. Someone who approves
// nothing finds nothing.
func TestUIApprovalsList(t *testing.T) {
	e, b, _ := setup(t)
	bob := e.addUser("bob@example.com", "bob's password!")
	e.addUser("cy@example.com", "cy's password!!")
	tok := e.token(adaEmail, adaPassword)
	chID, webhook := e.channel(tok, "Deploys")
	if status, body := e.api("PATCH", "/v1/channels/"+chID, tok, map[string]any{"approval": map[string]any{
		"approvers": []string{"bob@example.com"}, "required_count": 1, "window_seconds": 3600}}); status != 200 {
		t.Fatalf("set rule: %d %v", status, body)
	}
	first := e.send(webhook, map[string]any{"title": "Deploy v1?", "callback_url": "https://user:hunter2@hooks.example.com/x"})
	second := e.send(webhook, map[string]any{"title": "Deploy v2?"})
	sel := func(id string) string { return `#approvals article.message[data-message-id="` + id + `"]` }
	e.acceptInvitations("bob@example.com", "bob's password!")

	b.signIn("bob@example.com", "bob's password!")
	b.openView("approvals")
	ids := eval[[]string](b, `Array.from(document.querySelectorAll("#approvals article.message")).map(a => a.dataset.messageId)`)
	if fmt.Sprint(ids) != fmt.Sprint([]string{second, first}) {
		t.Fatalf("approvals listed %q, want [%s %s]", ids, second, first)
	}
	if got := b.text("#approvals-count"); got != "Showing 2 of 2 approvals" {
		t.Errorf("#approvals-count = %q", got)
	}
	buttons := eval[[]string](b, `Array.from(document.querySelectorAll(`+js(sel(first)+" button.message-action")+`)).map(b => b.dataset.key)`)
	if fmt.Sprint(buttons) != "[approve reject]" {
		t.Errorf("vote buttons %q", buttons)
	}
	if b.shown(sel(first)+" button.message-delete") || strings.Contains(eval[string](b, `document.getElementById("approvals").textContent`), "hunter2") {
		t.Error("the approver sees the owner's Delete or callback_url")
	}
	if got := b.text(sel(first) + " span.message-channel"); got != "Someone else's channel" {
		t.Errorf("channel shown as %q", got)
	}

	b.click(sel(first) + ` button.message-action[data-key="approve"]`)
	b.waitFor("the vote shown", `!!document.querySelector(`+js(sel(first)+` li.vote[data-user-id="`+bob.ID+`"]`)+`) && `+loaded())
	mustErrorEmpty(b)
	m := e.apiMessage(tok, first)
	a, _ := m["approval"].(map[string]any)
	votes, _ := a["votes"].([]any)
	if a["status"] != "approved" || len(votes) != 1 || votes[0].(map[string]any)["user_id"] != bob.ID || votes[0].(map[string]any)["action"] != "approve" {
		t.Errorf("stored approval %v", a)
	}
	if got := b.text(sel(first) + " span.message-status"); got != "Approved" {
		t.Errorf("status after the vote = %q", got)
	}

	// Open ones only: the one left.
	b.choose("#approvals-state", "pending")
	b.waitFor("the open one", `document.querySelectorAll("#approvals article.message").length === 1 && !!document.querySelector(`+js(sel(second))+`) && `+loaded())

	// Cy approves nothing.
	other := b.isolatedTab()
	other.signIn("cy@example.com", "cy's password!!")
	other.openView("approvals")
	if n := eval[int](other, `document.querySelectorAll("#approvals article.message").length`); n != 0 || !other.shown("#approvals-empty") {
		t.Errorf("cy sees %d approvals, empty note shown %v", n, other.shown("#approvals-empty"))
	}
	if got := other.text("#approvals-empty"); !strings.HasPrefix(got, "No approval has been asked of you.") {
		t.Errorf("#approvals-empty = %q", got)
	}
}
