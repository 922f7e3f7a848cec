package web_test

// Browser test of the channel's "Use with ntfy and Gotify" card.

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/heraldhq/herald/ntfy"
)

// TestUICompatCard: the card shows the server URL, the channel's webhook
// token as ntfy topic and Gotify token, the ntfy app's subscribe link (the
// one the server's QR code holds) with the QR code loaded, and snippets
// that send to this channel; a new webhook URL changes them all.
func TestUICompatCard(t *testing.T) {
	e, b, ada := setup(t)
	ctx := context.Background()
	tok := e.token(adaEmail, adaPassword)
	name := "Disk (RAID)!"
	chID, webhook := e.channel(tok, name)
	e.channel(tok, "Other")
	token := strings.TrimPrefix(webhook, e.base+"/v1/send/")
	row := `tr[data-channel-id="` + chID + `"] `

	b.signIn(adaEmail, adaPassword)
	if b.shown("#compat-card") {
		t.Fatal("#compat-card is shown before it is asked for")
	}
	b.click(row + "button.channel-compat")
	b.waitFor("the card", shownJS("#compat-card"))
	check := func(token string) {
		t.Helper()
		if got, want := b.text("#compat-title"), "Use "+name+" with ntfy and Gotify"; got != want {
			t.Errorf("#compat-title = %q, want %q", got, want)
		}
		for sel, want := range map[string]string{"#compat-server": e.base, "#compat-topic": token, "#compat-gotify-token": token} {
			if got := b.text(sel); got != want {
				t.Errorf("%s = %q, want %q", sel, got, want)
			}
		}
		link, err := ntfy.SubscribeLink(e.base, token, name)
		if err != nil {
			t.Fatal(err)
		}
		if got := eval[string](b, `document.getElementById("compat-ntfy-link").getAttribute("href")`); got != link {
			t.Errorf("the ntfy app link is %q, want the server's %q", got, link)
		}
		// The QR code is the server's PNG, loaded with the session cookie.
		b.waitFor("the QR code", `(() => { const i = document.getElementById("compat-qr"); return i.complete && i.naturalWidth === 256; })()`)
		if got := eval[string](b, `document.getElementById("compat-qr").getAttribute("src")`); got != "/v1/channels/"+chID+"/qr.png?for=ntfy" {
			t.Errorf("the QR code's src is %q", got)
		}
		host := strings.TrimPrefix(e.base, "http://")
		if got, want := b.text("#compat-apprise"), "ntfy://"+host+"/"+token; got != want {
			t.Errorf("#compat-apprise = %q, want %q", got, want)
		}
		ntfyCurl, gotifyCurl := b.text("#compat-curl-ntfy"), b.text("#compat-curl-gotify")
		if !strings.HasPrefix(ntfyCurl, "curl ") || !strings.HasSuffix(ntfyCurl, " "+e.base+"/"+token) {
			t.Errorf("#compat-curl-ntfy = %q, want a curl that ends in %s/%s", ntfyCurl, e.base, token)
		}
		if !strings.Contains(gotifyCurl, "X-Gotify-Key: "+token) || !strings.HasSuffix(gotifyCurl, " "+e.base+"/message") {
			t.Errorf("#compat-curl-gotify = %q, want a curl to %s/message with the token", gotifyCurl, e.base)
		}
		copies := eval[[]string](b, `Array.from(document.querySelectorAll("#compat-card button[data-copy]")).map(b => b.dataset.copy)`)
		if want := []string{e.base, token, token, ntfyCurl, gotifyCurl, "ntfy://" + host + "/" + token}; strings.Join(copies, "\n") != strings.Join(want, "\n") {
			t.Errorf("the copy buttons hold %q, want %q", copies, want)
		}
	}
	check(token)

	// The QR code is not another user's to see.
	u, err := url.Parse(e.base + "/v1/channels/" + chID + "/qr.png?for=ntfy")
	if err != nil {
		t.Fatal(err)
	}
	e.addUser("mallory@example.com", "mallory's password")
	if status, _ := e.api("GET", u.RequestURI(), e.token("mallory@example.com", "mallory's password"), nil); status != 404 {
		t.Errorf("another user's GET of the QR code: %d, want 404", status)
	}

	// A new webhook URL: the card follows it.
	b.click(row + "button.channel-regenerate")
	b.waitFor("the new token", `document.getElementById("compat-topic").textContent !== `+js(token)+` && `+loaded())
	mustErrorEmpty(b)
	c, err := e.st.Channel(ctx, ada.ID, chID)
	if err != nil {
		t.Fatal(err)
	}
	check(c.WebhookToken)

	b.click("#compat-close")
	b.waitFor("the card closed", `document.getElementById("compat-card").hidden`)
	if !eval[bool](b, `document.activeElement === document.querySelector(`+js(row+"button.channel-compat")+`)`) {
		t.Error("the focus did not go back to the channel's button")
	}
}
