package web_test

// Browser tests of the account page and the administrators' pages.

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald/auth"
)

// TestUIAdminUsers: an administrator creates a user with a password, sets
// the plan, grants and revokes the role, resets the password and deletes
// the user (after a question); each checked in the store.
func TestUIAdminUsers(t *testing.T) {
	e, b, ada := setup(t)
	ctx := context.Background()
	if err := e.st.SetUserAdmin(ctx, ada.ID, true); err != nil {
		t.Fatal(err)
	}
	b.signIn(adaEmail, adaPassword)
	if !b.shown("a#nav-users") || !b.shown("a#nav-server") {
		t.Fatal("an administrator does not see Users and Server")
	}
	b.openView("users")
	row := func(email string) string { return `table#users tbody tr[data-email="` + email + `"] ` }
	// Ada herself: no Delete and no Revoke on her own row.
	if b.shown(row(adaEmail)+"button.user-delete") || b.shown(row(adaEmail)+"button.user-admin") {
		t.Error("the administrator's own row offers Delete or Revoke admin")
	}

	b.fill("#user-email", "carol@example.com")
	b.fill("#user-name", "Carol")
	b.fill("#user-password", "carol's password")
	b.choose("#user-plan", "pro")
	b.click("#user-create-submit")
	b.waitFor("Carol's row", `!!document.querySelector(`+js(row("carol@example.com"))+`) && `+loaded())
	mustErrorEmpty(b)
	carol, err := e.st.UserByEmail(ctx, "carol@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if carol.Name != "Carol" || carol.Plan != "pro" || carol.IsAdmin {
		t.Errorf("stored %+v", carol)
	}
	if ok, _ := auth.CheckPassword(ctx, carol.PasswordHash, "carol's password"); !ok {
		t.Error("the stored password is not the one typed")
	}
	if v := eval[string](b, `document.getElementById("user-password").value`); v != "" {
		t.Error("the password stays in the form after creating the user")
	}

	// A short password: the API's message, nothing stored.
	b.fill("#user-email", "dan@example.com")
	b.fill("#user-password", "short")
	b.click("#user-create-submit")
	b.waitFieldError("#user-password", "Password must be 8 to 256 characters.")
	if _, err := e.st.UserByEmail(ctx, "dan@example.com"); err == nil {
		t.Error("a refused user was stored")
	}

	// Plan back to free.
	b.choose(row("carol@example.com")+"select.user-plan", "free")
	b.waitFor("saved", loaded())
	mustErrorEmpty(b)
	if u, _ := e.st.UserByID(ctx, carol.ID); u.Plan != "free" {
		t.Errorf("plan stored %q, want free", u.Plan)
	}

	// Make admin (asked), then revoke.
	b.click(row("carol@example.com") + "button.user-admin")
	b.waitFor("Carol admin", `document.querySelector(`+js(row("carol@example.com")+"td.user-role")+`).textContent === "Administrator" && `+loaded())
	if !strings.Contains(b.lastDialog(), "Make carol@example.com an administrator?") {
		t.Errorf("grant asked %q", b.lastDialog())
	}
	if u, _ := e.st.UserByID(ctx, carol.ID); !u.IsAdmin {
		t.Error("admin not stored")
	}
	b.click(row("carol@example.com") + "button.user-admin")
	b.waitFor("Carol user", `document.querySelector(`+js(row("carol@example.com")+"td.user-role")+`).textContent === "User" && `+loaded())
	if u, _ := e.st.UserByID(ctx, carol.ID); u.IsAdmin {
		t.Error("revoke not stored")
	}

	// Reset the password.
	b.click(row("carol@example.com") + "button.user-password")
	b.waitFor("the password form", shownJS(row("carol@example.com")+"input.user-password-input"))
	b.fill(row("carol@example.com")+"input.user-password-input", "a fresh password")
	b.click(row("carol@example.com") + "button.user-password-save")
	b.waitFor("reset", `document.querySelector(`+js(row("carol@example.com"))+`).dataset.passwordReset === "true" && `+loaded())
	mustErrorEmpty(b)
	if status, _ := e.api(http.MethodPost, "/v1/auth/local", "", map[string]string{"email": "carol@example.com", "password": "a fresh password"}); status != 200 {
		t.Errorf("sign-in with the reset password: %d", status)
	}

	// Delete: cancelled first, then done.
	b.dismissNext()
	b.click(row("carol@example.com") + "button.user-delete")
	b.waitFor("the question", loaded())
	if _, err := e.st.UserByID(ctx, carol.ID); err != nil {
		t.Error("a cancelled Delete deleted the user")
	}
	b.click(row("carol@example.com") + "button.user-delete")
	b.waitFor("Carol gone", `!document.querySelector(`+js(row("carol@example.com"))+`) && `+loaded())
	if !strings.Contains(b.lastDialog(), "Delete carol@example.com and everything they own") {
		t.Errorf("Delete asked %q", b.lastDialog())
	}
	if _, err := e.st.UserByID(ctx, carol.ID); err == nil {
		t.Error("the user is still stored after Delete")
	}

	// The server page.
	b.openView("server")
	facts := eval[map[string]string](b, `Object.fromEntries(Array.from(document.querySelectorAll("dd[data-fact]")).map(d => [d.dataset.fact, d.textContent]))`)
	if facts["version"] != "test" || facts["users"] != "1" || facts["queue"] != "0" || facts["dead"] != "0" ||
		!strings.HasPrefix(facts["apns"], "not configured") || !strings.HasPrefix(facts["fcm"], "not configured") || !strings.HasPrefix(facts["webpush"], "on") {
		t.Errorf("server facts %v", facts)
	}
	mustErrorEmpty(b)
}

// TestUIAdminRefused: a user who is not an administrator sees no admin
// links, is sent away from the pages, and the API refuses them (403).
func TestUIAdminRefused(t *testing.T) {
	e, b, _ := setup(t)
	b.signIn(adaEmail, adaPassword)
	if b.shown("a#nav-users") || b.shown("a#nav-server") {
		t.Error("a non-administrator sees the Users or Server link")
	}
	for _, page := range []string{"users", "server"} {
		b.navigate("/#/" + page)
		b.waitView("channels")
		if got := b.text("#error"); got != "That page is for administrators." {
			t.Errorf("#/%s: #error = %q", page, got)
		}
		if n := eval[int](b, `document.querySelectorAll("#users tbody tr, #server-facts dd").length`); n != 0 {
			t.Errorf("#/%s: %d admin rows on the page", page, n)
		}
	}
	for _, path := range []string{"/v1/admin/users", "/v1/admin/server"} {
		got := awaitJS[int](b, `fetch(`+js(path)+`, {credentials: "same-origin"}).then(r => r.status)`)
		if got != http.StatusForbidden {
			t.Errorf("GET %s from the page: %d, want 403", path, got)
		}
	}
	_ = e
}

// TestUIAccount: the account page changes the password (the current one
// is required), lists identities and signs out everywhere.
func TestUIAccount(t *testing.T) {
	e, b, ada := setup(t)
	ctx := context.Background()
	elsewhere := e.token(adaEmail, adaPassword) // a session on another device
	b.signIn(adaEmail, adaPassword)
	b.openView("account")
	if got := b.text("#account-email"); got != adaEmail {
		t.Errorf("#account-email = %q", got)
	}
	if !b.shown("#identities-empty") {
		t.Error("no identities, but #identities-empty is hidden")
	}

	b.fill("#password-current", "not my password")
	b.fill("#password-new", "an even better one")
	b.click("#password-submit")
	b.waitFieldError("#password-current", "This is not your current password.")
	if u, _ := e.st.UserByID(ctx, ada.ID); u.PasswordHash != ada.PasswordHash {
		t.Error("a refused change changed the password")
	}
	b.fill("#password-current", adaPassword)
	b.fill("#password-new", "an even better one")
	b.click("#password-submit")
	b.waitFor("changed", shownJS("#password-done")+" && "+loaded())
	mustErrorEmpty(b)
	if u, _ := e.st.UserByID(ctx, ada.ID); u.PasswordHash == ada.PasswordHash {
		t.Error("the password was not stored")
	}
	if status, _ := e.api(http.MethodGet, "/v1/auth/me", elsewhere, nil); status != http.StatusUnauthorized {
		t.Errorf("the other session after a password change: %d, want 401", status)
	}
	// This browser stays signed in.
	b.openView("channels")
	b.openView("account")

	// Sign out everywhere: asked, then every session ends, this one too.
	other := e.token(adaEmail, "an even better one")
	b.dismissNext()
	b.click("#signout-all")
	b.waitFor("the question", loaded())
	if status, _ := e.api(http.MethodGet, "/v1/auth/me", other, nil); status != http.StatusOK {
		t.Error("a cancelled Sign out everywhere signed out")
	}
	b.click("#signout-all")
	b.waitView("signin")
	if status, _ := e.api(http.MethodGet, "/v1/auth/me", other, nil); status != http.StatusUnauthorized {
		t.Errorf("another session after Sign out everywhere: %d, want 401", status)
	}
	b.reload()
	b.waitView("signin")
}
