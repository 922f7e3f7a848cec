package web_test

// Browser tests of approvals: the rule editor, by email, and voting.

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestUIApprovalEditor: the owner names approvers by email, an address
// with an account or without alike; the rule stores the addresses as
// typed (lower-cased); the editor shows them again with where each
// invitation stands, the owner's own as accepted; the rule can be removed
// (after a question).
func TestUIApprovalEditor(t *testing.T) {
	e, b, ada := setup(t)
	ctx := context.Background()
	e.addUser("bob@example.com", "bob's password!") // an account behind an address changes nothing
	tok := e.token(adaEmail, adaPassword)
	chID, _ := e.channel(tok, "Deploys")
	row := `tr[data-channel-id="` + chID + `"] `

	b.signIn(adaEmail, adaPassword)
	if got := b.text(row + "button.channel-approval"); got != "Add approval" {
		t.Errorf("button.channel-approval = %q, want Add approval", got)
	}
	b.click(row + "button.channel-approval")
	b.waitFor("the editor", shownJS("#approval-editor")+" && "+loaded())
	if !eval[bool](b, `document.activeElement === document.getElementById("approval-email")`) {
		t.Error("the editor opened without the focus on the email field")
	}

	// An address with no account is added like any other, and removed.
	b.fill("#approval-email", "nobody@example.com")
	b.click("#approval-add")
	b.waitFor("nobody's chip", `document.querySelectorAll("#approval-approvers li.chip").length === 1`)
	b.click(`#approval-approvers button[data-entry="nobody@example.com"]`)

	// Bob by email (in capitals) and Ada herself, two needed, within a day.
	b.fill("#approval-email", "BOB@example.com")
	b.click("#approval-add")
	b.waitFor("Bob's chip", `document.querySelectorAll("#approval-approvers li.chip").length === 1 && document.getElementById("approval-email").value === ""`)
	b.fill("#approval-email", adaEmail)
	b.click("#approval-add")
	chips := eval[[]string](b, `Array.from(document.querySelectorAll("#approval-approvers li.chip")).map(li => li.dataset.entry + " " + li.dataset.state)`)
	if fmt.Sprint(chips) != "[bob@example.com new ada@example.com new]" {
		t.Errorf("approver chips = %q", chips)
	}
	b.choose("#approval-required", "2")
	b.choose("#approval-window", "86400")
	b.click("#approval-save")
	b.waitFor("the editor closed", `document.getElementById("approval-editor").hidden && `+loaded())
	mustErrorEmpty(b)
	c, err := e.st.Channel(ctx, ada.ID, chID)
	if err != nil || c.Approval == nil {
		t.Fatalf("no rule stored: %v", err)
	}
	if fmt.Sprint(c.Approval.Approvers) != "[bob@example.com "+adaEmail+"]" || c.Approval.RequiredCount != 2 || c.Approval.WindowSeconds != 86400 {
		t.Errorf("stored rule %+v, want [bob@example.com %s], 2, 86400", c.Approval, adaEmail)
	}
	if got := b.text(row + ".rule-badge"); got != "needs 2 of 2" {
		t.Errorf("the row's rule badge = %q", got)
	}
	if !eval[bool](b, `document.activeElement === document.querySelector(`+js(row+"button.channel-approval")+`)`) {
		t.Error("after saving, the focus is not back on the row's Approval button")
	}

	// Opened again, it shows the addresses the rule names and where each
	// stands: Bob has not answered; Ada named herself.
	b.click(row + "button.channel-approval")
	b.waitFor("the editor", shownJS("#approval-editor")+" && "+loaded())
	chips = eval[[]string](b, `Array.from(document.querySelectorAll("#approval-approvers li.chip")).map(li => li.dataset.entry + " " + li.dataset.state)`)
	if fmt.Sprint(chips) != "[bob@example.com invited ada@example.com accepted]" || b.text("#approval-required") != "" && eval[string](b, `document.getElementById("approval-required").value`) != "2" {
		t.Errorf("reopened editor: chips %q, required %s", chips, eval[string](b, `document.getElementById("approval-required").value`))
	}

	// Remove: asked first.
	b.dismissNext()
	b.click("#approval-remove")
	b.waitFor("the question", loaded())
	if c, _ := e.st.Channel(ctx, ada.ID, chID); c.Approval == nil {
		t.Error("a cancelled Remove removed the rule")
	}
	b.click("#approval-remove")
	b.waitFor("the editor closed", `document.getElementById("approval-editor").hidden && `+loaded())
	if !strings.Contains(b.lastDialog(), "Remove the approval rule") {
		t.Errorf("Remove asked %q", b.lastDialog())
	}
	if c, _ := e.st.Channel(ctx, ada.ID, chID); c.Approval != nil {
		t.Errorf("rule still stored after Remove: %+v", c.Approval)
	}
	mustErrorEmpty(b)
}

// TestUIApprovalVotes: an approver named by email is asked on their
// Approvals page, where accepting lists the channel's messages for them;
// each approver sees Approve and Reject until they vote, then who voted
// what; the owner sees the votes with names.
func TestUIApprovalVotes(t *testing.T) {
	e, b, ada := setup(t)
	bob := e.addUser("bob@example.com", "bob's password!")
	tok := e.token(adaEmail, adaPassword)
	chID, webhook := e.channel(tok, "Deploys")
	if status, body := e.api("PATCH", "/v1/channels/"+chID, tok, map[string]any{"approval": map[string]any{
		"approvers": []string{adaEmail, "bob@example.com"}, "required_count": 2, "window_seconds": 3600}}); status != 200 {
		t.Fatalf("set rule: %d %v", status, body)
	}
	id := e.send(webhook, map[string]any{"title": "Deploy v2?"})

	b.signIn(adaEmail, adaPassword)
	b.openView("messages")
	b.waitFor("the message", shownJS(articleSel(id))+" && "+loaded())
	if got := b.message(id); fmt.Sprint(got.Buttons) != "[[approve Approve] [reject Reject]]" || got.Status != "Waiting for approval" {
		t.Errorf("before voting: buttons %q status %q", got.Buttons, got.Status)
	}
	if got := b.text(articleSel(id) + " .approval-summary"); !strings.HasPrefix(got, "0 of 2 approvals needed · rule: 2 of 2 approvers · closes ") {
		t.Errorf("approval summary = %q", got)
	}
	b.click(articleSel(id) + ` button.message-action[data-key="approve"]`)
	b.waitFor("Ada's vote", `!!document.querySelector(`+js(articleSel(id)+` li.vote[data-user-id="`+ada.ID+`"]`)+`) && `+loaded())
	if got := b.message(id); len(got.Buttons) != 0 {
		t.Errorf("after voting the buttons stay: %q", got.Buttons)
	}
	if got := b.text(articleSel(id) + " .voted"); got != "You have voted." {
		t.Errorf(".voted = %q", got)
	}

	// Bob, in his own browser: his Approvals page asks him first, and lists
	// nothing of Ada's channel until he accepts.
	other := b.isolatedTab()
	other.signIn("bob@example.com", "bob's password!")
	other.openView("approvals")
	inv := `#invitations-list li.invitation[data-state="invited"]`
	other.waitFor("the invitation", shownJS(inv)+" && "+loaded())
	if got, from := other.text(inv+" .invitation-channel"), other.text(inv+" .invitation-owner"); got != "Deploys" || from != "ada (ada@example.com)" {
		t.Errorf("invitation to %q from %q, want Deploys from ada (ada@example.com)", got, from)
	}
	if other.shown(articleSel(id)) || !other.shown("#approvals-empty") {
		t.Error("before accepting, Bob's approvals list the message")
	}
	other.click(inv + " button.invitation-accept")
	other.waitFor("the message listed", shownJS(`#approvals article.message[data-message-id="`+id+`"]`)+" && "+loaded())
	if got := other.text(`#invitations-list li.invitation[data-state="accepted"] .invitation-state`); got != "you approve" {
		t.Errorf("accepted invitation says %q", got)
	}
	if invs := e.list("/v1/approvals/invitations", "invitations", e.token("bob@example.com", "bob's password!")); len(invs) != 1 || invs[0]["state"] != "accepted" {
		t.Errorf("invitations after accepting: %v", invs)
	}

	// In his messages he finds it too, sees his buttons and votes reject.
	other.openView("messages")
	// An approver's list is the messages of the channels they approve on,
	// found by choosing nothing: the search covers them.
	other.fill("#messages-q", "Deploy")
	other.press("#messages-q", "\r")
	other.waitFor("the message for Bob", shownJS(articleSel(id))+" && "+loaded())
	if got := other.message(id); fmt.Sprint(got.Buttons) != "[[approve Approve] [reject Reject]]" || got.Delete != "<missing>" {
		t.Errorf("Bob sees buttons %q delete %q, want both votes and no Delete", got.Buttons, got.Delete)
	}
	other.click(articleSel(id) + ` button.message-action[data-key="reject"]`)
	other.waitFor("resolved", `document.querySelector(`+js(articleSel(id)+" span.message-status")+`).textContent === "Rejected" && `+loaded())

	// Ada's page follows live: who voted what.
	b.waitFor("Bob's vote on Ada's page", `!!document.querySelector(`+js(articleSel(id)+` li.vote[data-user-id="`+bob.ID+`"]`)+`) && `+loaded())
	votes := eval[[]string](b, `Array.from(document.querySelectorAll(`+js(articleSel(id)+" li.vote")+`)).map(li => li.querySelector(".vote-who").textContent + " " + li.querySelector(".vote-action").textContent)`)
	if fmt.Sprint(votes) != "[ada approved bob rejected]" {
		t.Errorf("votes shown %q", votes)
	}
	if got := b.text(articleSel(id) + " span.message-status"); got != "Rejected" {
		t.Errorf("status = %q, want Rejected", got)
	}
	m := e.apiMessage(tok, id)
	a, _ := m["approval"].(map[string]any)
	if a["status"] != "rejected" || a["approvals_received"] != 1.0 || a["rejections_received"] != 1.0 {
		t.Errorf("stored approval %v", a)
	}
}

// acceptInvitations accepts, over the API, every approval invitation
// addressed to the user who signs in with email and password.
func (e *env) acceptInvitations(email, password string) {
	e.t.Helper()
	tok := e.token(email, password)
	for _, in := range e.list("/v1/approvals/invitations", "invitations", tok) {
		if status, body := e.api("POST", "/v1/approvals/invitations/"+in["id"].(string)+"/accept", tok, nil); status != 200 {
			e.t.Fatalf("accept invitation: %d %v", status, body)
		}
	}
}
