package web_test

import (
	"strings"
	"testing"
)

// TestUISetupHint: while no user exists, the sign-in page says how to make
// the first one; once one exists, it does not.
func TestUISetupHint(t *testing.T) {
	e := newEnv(t)
	b := newBrowser(t, e)
	b.navigate("/")
	b.waitView("signin")
	b.waitFor("the setup hint", `!document.getElementById("signin-setup").hidden`)
	if got := b.text("#signin-setup"); !strings.Contains(got, "herald user add EMAIL --password-stdin") ||
		!strings.Contains(got, "The first user is the server's administrator.") {
		t.Errorf("#signin-setup = %q, want the command that makes a user, and that the first is the administrator", got)
	}

	e.addUser(adaEmail, adaPassword)
	b.reload()
	b.waitView("signin")
	b.waitFor("the setup hint to go", `document.getElementById("signin-setup").hidden && `+loaded())
}
