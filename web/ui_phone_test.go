package web_test

// Browser tests on a phone's screen, 390 pixels wide: the menu that holds
// every link, and pages that fit the width.

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// navLink is one link of the main navigation as the phone shows it.
type navLink struct {
	ID        string `json:"id"`
	Shown     bool   `json:"shown"`     // takes up space
	OnScreen  bool   `json:"onScreen"`  // wholly within the 390 px
	Reachable bool   `json:"reachable"` // what a tap at its centre hits
}

const navLinksJS = `Array.from(document.querySelectorAll("#nav .nav-links li:not([hidden]) a")).map((a) => {
	const r = a.getBoundingClientRect();
	const hit = r.width > 0 ? document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) : null;
	return {id: a.id, shown: a.getClientRects().length > 0 && r.width > 0,
		onScreen: r.left >= 0 && r.right <= window.innerWidth && r.top >= 0 && r.bottom <= window.innerHeight,
		reachable: !!hit && a.contains(hit)};
})`

// TestUIPhoneMenu: on a 390 px phone the header is one short row with a
// Menu button; the menu shows every link (the administrator's too) in full,
// each reachable by a tap, with Sign out; a link, Escape or the button
// closes it. At 1280 px there is no Menu and every link is in the header.
func TestUIPhoneMenu(t *testing.T) {
	e, b, ada := setup(t)
	if err := e.st.SetUserAdmin(context.Background(), ada.ID, true); err != nil {
		t.Fatal(err)
	}
	b.viewport(390, 844)
	b.signIn(adaEmail, adaPassword)
	want := []string{"nav-channels", "nav-messages", "nav-approvals", "nav-devices", "nav-folders", "nav-keys", "nav-account", "nav-users", "nav-server"}
	expanded := func() string {
		return eval[string](b, `document.getElementById("nav-toggle").getAttribute("aria-expanded")`)
	}

	if !b.shown("#nav-toggle") || expanded() != "false" {
		t.Fatalf("on a phone: Menu shown %v, aria-expanded %q; want a closed Menu", b.shown("#nav-toggle"), expanded())
	}
	if got := eval[string](b, `document.getElementById("nav-toggle").textContent.trim() + " " + document.getElementById("nav-toggle").getAttribute("aria-controls")`); got != "☰ Menu nav" {
		t.Errorf("the Menu button reads and controls %q", got)
	}
	if h := eval[float64](b, `document.querySelector("header.topbar").getBoundingClientRect().height`); h > 844/12 {
		t.Errorf("the closed header is %.0f px high, want one short row", h)
	}
	for _, l := range eval[[]navLink](b, navLinksJS) {
		if l.Shown {
			t.Errorf("with the menu closed, %s is shown", l.ID)
		}
	}

	open := func() {
		t.Helper()
		b.click("#nav-toggle")
		b.waitFor("the menu open", `document.getElementById("nav-toggle").getAttribute("aria-expanded") === "true"`)
	}
	closed := func(how string) {
		t.Helper()
		b.waitFor("the menu closed "+how, `document.getElementById("nav-toggle").getAttribute("aria-expanded") === "false" && !`+shownJS("#nav-messages"))
	}
	open()
	links := eval[[]navLink](b, navLinksJS)
	var ids []string
	for _, l := range links {
		ids = append(ids, l.ID)
		if !l.Shown || !l.OnScreen || !l.Reachable {
			t.Errorf("in the open menu, %s: %+v; want it shown in full and reachable", l.ID, l)
		}
	}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("the menu's links = %q, want %q", ids, want)
	}
	if !b.shown("#signout") || b.text("#whoami") != adaEmail || !b.shown("#whoami") {
		t.Error("the open menu does not show who is signed in and Sign out")
	}
	if w := eval[float64](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("with the menu open the page is %.0f px wide", w)
	}

	// A link goes there and closes the menu.
	b.click("#nav-server")
	b.waitView("server")
	closed("by a link")
	if got := eval[string](b, `document.getElementById("nav-server").getAttribute("aria-current")`); got != "page" {
		t.Errorf("#nav-server aria-current = %q, want page", got)
	}

	// Escape closes it and gives the focus back to Menu.
	open()
	b.do("Escape", chromedp.KeyEvent(kb.Escape))
	closed("by Escape")
	if !eval[bool](b, `document.activeElement === document.getElementById("nav-toggle")`) {
		t.Error("after Escape the focus is not on Menu")
	}
	// So does the button itself.
	open()
	b.click("#nav-toggle")
	closed("by Menu")

	// A wide screen: no Menu, every link in the header.
	b.viewport(1280, 900)
	b.waitFor("the wide header", `!`+shownJS("#nav-toggle"))
	for _, l := range eval[[]navLink](b, navLinksJS) {
		if !l.Shown || !l.OnScreen || !l.Reachable {
			t.Errorf("at 1280 px, %s: %+v", l.ID, l)
		}
	}
}

// TestUIPhoneChannels: at 390 px the channel page's curl example wraps
// inside the page, one option a line: nothing runs off to the side.
func TestUIPhoneChannels(t *testing.T) {
	e, b, _ := setup(t)
	tok := e.token(adaEmail, adaPassword)
	chID, _ := e.channel(tok, "Nightly backups of the file server")
	b.viewport(390, 844)
	b.signIn(adaEmail, adaPassword)
	row := `#channels tr[data-channel-id="` + chID + `"] `
	b.click(row + "details.channel-curl summary")
	b.waitFor("the curl example", shownJS(row+"details.channel-curl pre"))
	type box struct {
		Right       float64 `json:"right"`
		ScrollWidth float64 `json:"scrollWidth"`
		ClientWidth float64 `json:"clientWidth"`
		Lines       float64 `json:"lines"`
	}
	got := eval[box](b, `((p) => { const r = p.getBoundingClientRect();
		return {right: r.right, scrollWidth: p.scrollWidth, clientWidth: p.clientWidth,
			lines: Math.round(r.height / parseFloat(getComputedStyle(p).lineHeight))}; })(document.querySelector(`+js(row+"details.channel-curl pre")+`))`)
	if got.Right > 390 || got.ScrollWidth > got.ClientWidth || got.Lines < 2 {
		t.Errorf("the curl example at 390 px: %+v; want it wrapped within the screen", got)
	}
	if w := eval[float64](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the channels page is %.0f px wide on a 390 px phone", w)
	}
	// One option a line, as a shell reads it; the Copy button copies that.
	pre := eval[string](b, `document.querySelector(`+js(row+"details.channel-curl pre")+`).textContent`)
	webhook := e.list("/v1/channels", "channels", tok)[0]["webhook_url"].(string)
	if want := "curl -H 'Content-Type: application/json' \\\n" +
		`  -d '{"title":"Backup done","body":"**42 GB** in 3 min"}' \` + "\n  " + webhook; pre != want {
		t.Errorf("the curl example reads\n%s\nwant\n%s", pre, want)
	}
	if got := eval[string](b, `document.querySelector(`+js(row+"button.copy-curl")+`).dataset.copy`); got != pre || !b.shown(row+"button.copy-curl") {
		t.Errorf("the curl example's Copy button holds %q", got)
	}
}
