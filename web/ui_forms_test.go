package web_test

// Browser tests of the forms: a refusal of the API shown beside the field
// it names, in the words of the field's label; a form's answer in the
// form's own order; the change-password form for password managers.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// fieldError is what the page shows of an error beside an input.
type fieldError struct {
	Invalid bool   `json:"invalid"` // aria-invalid="true"
	Text    string `json:"text"`    // the error the input is described by
	Beside  bool   `json:"beside"`  // in the input's own .field, visible
	Focused bool   `json:"focused"` // the input has the focus
}

func (b *browser) fieldError(sel string) fieldError {
	b.t.Helper()
	return eval[fieldError](b, `((i) => {
		if (!i) return {text: "<no input>"};
		const ids = (i.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
		const err = ids.map((id) => document.getElementById(id)).find((e) => e && e.classList.contains("field-error"));
		return {invalid: i.getAttribute("aria-invalid") === "true", text: err ? err.textContent.trim() : "",
			beside: !!err && err.closest(".field") === i.closest(".field") && err.getClientRects().length > 0,
			focused: document.activeElement === i};
	})(document.querySelector(`+js(sel)+`))`)
}

// waitFieldError waits for an error beside the input sel and checks that
// it says want, beside the input, which has the focus, and that the page's
// banner stays empty.
func (b *browser) waitFieldError(sel, want string) {
	b.t.Helper()
	b.waitFor("an error beside "+sel, `document.querySelector(`+js(sel+`[aria-invalid="true"]`)+`) && `+loaded())
	if got := b.fieldError(sel); got != (fieldError{Invalid: true, Text: want, Beside: true, Focused: true}) {
		b.t.Errorf("beside %s: %+v, want %q beside it, focused", sel, got, want)
	}
	mustErrorEmpty(b)
}

// noFieldError checks that the input sel is not marked invalid.
func (b *browser) noFieldError(sel string) {
	b.t.Helper()
	if got := b.fieldError(sel); got.Invalid || got.Text != "" {
		b.t.Errorf("beside %s: %+v, want no error", sel, got)
	}
}

// TestUIFieldErrors: what the API refuses in a message's form, the approval
// editor and the create forms is said beside the field it names, by the
// field's label (not the API's key), with aria-invalid and
// aria-describedby; typing again takes it away; nothing is stored.
func TestUIFieldErrors(t *testing.T) {
	e, b, ada := setup(t)
	ctx := context.Background()
	if err := e.st.SetUserAdmin(ctx, ada.ID, true); err != nil {
		t.Fatal(err)
	}
	tok := e.token(adaEmail, adaPassword)
	chID, webhook := e.channel(tok, "Deploys")
	e.addUser("bob@example.com", "bob's password!")
	id := e.send(webhook, map[string]any{"title": "Why the rollback?", "callback_url": "https://hooks.example.com/x", "actions": []map[string]any{
		{"type": "form", "key": "explain", "label": "Send", "fields": []map[string]any{
			{"key": "note", "label": "Notes", "type": "textarea"},
			{"key": "reason", "label": "Reason", "type": "text", "required": true}}}}})

	// A message's form: the required field left empty.
	b.signIn(adaEmail, adaPassword)
	b.openView("messages")
	form := articleSel(id) + " form.message-form"
	b.waitFor("the form", shownJS(form))
	b.click(form + " button.message-form-submit")
	reason := form + ` [data-field-key="reason"]`
	b.waitFieldError(reason, "Reason is required.")
	b.noFieldError(form + ` [data-field-key="note"]`)
	if m := e.apiMessage(tok, id); m["status"] != "pending" || m["response"] != nil {
		t.Errorf("after the refused form the message is %v, want pending without a response", m)
	}
	b.fill(reason, "disk full")
	b.noFieldError(reason)
	b.click(form + " button.message-form-submit")
	b.waitFor("the form answered", statusJS(id, "submitted")+" && "+loaded())

	// The approval editor: too many approvals needed, an address that is not
	// one. (An address of nobody here is invited like any other, so that the
	// answer tells nothing about accounts.)
	b.openView("channels")
	row := `#channels tr[data-channel-id="` + chID + `"] `
	b.click(row + "button.channel-approval")
	b.waitFor("the editor", shownJS("#approval-editor")+" && "+loaded())
	b.fill("#approval-email", "bob@example.com")
	b.click("#approval-add")
	b.fill("#approval-email", "bob")
	b.click("#approval-add")
	b.waitFieldError("#approval-email", `"bob" is not an email address.`)
	b.fill("#approval-email", "")
	b.fill("#approval-required", "3")
	b.click("#approval-save")
	b.waitFieldError("#approval-required", "Approvals needed must be between 1 and the number of approvers (1).")
	b.noFieldError("#approval-email")
	b.fill("#approval-required", "1")
	b.noFieldError("#approval-required")
	b.fill("#approval-required", "9")
	b.click("#approval-save")
	b.waitFieldError("#approval-required", "Approvals needed must be between 1 and the number of approvers (1).")
	b.click("#approval-cancel")
	b.noFieldError("#approval-required")

	// The create forms: the name each needs.
	for _, f := range []struct{ view, input, submit string }{
		{"channels", "#channel-name", "#channel-create-submit"},
		{"folders", "#folder-name", "#folder-create-submit"},
		{"keys", "#key-name", "#key-create-submit"},
	} {
		b.openView(f.view)
		b.click(f.submit)
		b.waitFieldError(f.input, "Name is required.")
	}
	if n := len(e.list("/v1/folders", "folders", tok)); n != 0 {
		t.Errorf("%d folders after a refused create", n)
	}

	// A user with a short password; a password change with a wrong one.
	b.openView("users")
	b.fill("#user-email", "dan@example.com")
	b.fill("#user-password", "short")
	b.click("#user-create-submit")
	b.waitFieldError("#user-password", "Password must be 8 to 256 characters.")
	if _, err := e.st.UserByEmail(ctx, "dan@example.com"); err == nil {
		t.Error("a refused user was stored")
	}
	b.openView("account")
	b.fill("#password-current", "not my password")
	b.fill("#password-new", "an even better one")
	b.click("#password-submit")
	b.waitFieldError("#password-current", "This is not your current password.")
	b.noFieldError("#password-new")
	b.fill("#password-current", adaPassword)
	b.fill("#password-new", "short")
	b.click("#password-submit")
	b.waitFieldError("#password-new", "The new password must be 8 to 256 characters.")
	b.noFieldError("#password-current")
	if u, _ := e.st.UserByID(ctx, ada.ID); u.PasswordHash != ada.PasswordHash {
		t.Error("a refused change changed the password")
	}
}

// TestUIFormAnswerOrder: a form's answer lists its values in the form's
// order, by the fields' labels, though the API gives them sorted by key.
func TestUIFormAnswerOrder(t *testing.T) {
	e, b, _ := setup(t)
	tok := e.token(adaEmail, adaPassword)
	_, webhook := e.channel(tok, "Disks")
	id := e.send(webhook, map[string]any{"title": "Disk almost full", "callback_url": "https://hooks.example.com/x", "actions": []map[string]any{
		{"type": "form", "key": "ack", "label": "Acknowledge", "fields": []map[string]any{
			{"key": "who", "label": "Who looks at it", "type": "text"},
			{"key": "eta", "label": "Minutes until fixed", "type": "number"},
			{"key": "call", "label": "Call the vendor", "type": "checkbox"}}}}})
	if status, body := e.api(http.MethodPost, "/v1/messages/"+id+"/respond", tok, map[string]any{"action": "ack",
		"responses": map[string]any{"call": true, "eta": 30, "who": "Ada"}}); status != http.StatusOK {
		t.Fatalf("respond: %d %v", status, body)
	}
	b.signIn(adaEmail, adaPassword)
	b.openView("messages")
	b.waitFor("the answer", shownJS(articleSel(id)+" .message-outcome dl"))
	got := eval[[]string](b, `Array.from(document.querySelectorAll(`+js(articleSel(id)+" .outcome-values > *")+`)).map((n) => n.textContent)`)
	want := []string{"Who looks at it", "Ada", "Minutes until fixed", "30", "Call the vendor", "yes"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the answer's values = %q, want %q (the form's order)", got, want)
	}
}

// TestUIPasswordFormUsername: the change-password form carries the
// account's email as a hidden username field, so that a password manager
// knows whose password changes; it is neither shown nor reached by Tab.
func TestUIPasswordFormUsername(t *testing.T) {
	_, b, _ := setup(t)
	b.signIn(adaEmail, adaPassword)
	b.openView("account")
	sel := `#password-form input[autocomplete="username"]`
	got := eval[[]string](b, `((i) => i ? [i.value, i.name, String(i.form && i.form.id), String(i.tabIndex)] : [])(document.querySelector(`+js(sel)+`))`)
	if want := []string{adaEmail, "username", "password-form", "-1"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: value, name, form, tabindex = %q, want %q", sel, got, want)
	}
	if b.shown(sel) {
		t.Errorf("%s is shown", sel)
	}
	// It comes before the password fields, as password managers look for it.
	if !eval[bool](b, `!!(document.querySelector(`+js(sel)+`).compareDocumentPosition(document.getElementById("password-new")) & Node.DOCUMENT_POSITION_FOLLOWING)`) {
		t.Error("the username field is not before the new password")
	}
	if got := eval[string](b, `document.getElementById("password-new").autocomplete + " " + document.getElementById("password-current").autocomplete`); !strings.Contains(got, "new-password") || !strings.Contains(got, "current-password") {
		t.Errorf("the password fields' autocomplete = %q", got)
	}
}
