package web_test

// Browser tests of sign-in and of each resource view (harness in
// ui_harness_test.go).

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp/kb"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/store"
)

// ---------------------------------------------------------------------------
// Tests

// TestUISignIn: a wrong password shows the API's message and signs nobody in;
// the right one opens the channels view with the user's email; the cookie
// session survives a reload; signing out ends the session on the server too.
func TestUISignIn(t *testing.T) {
	e, b, _ := setup(t, func(c *config.Config) {
		// A provider that never answers: the sign-in page must still offer it.
		c.Auth.Providers = []config.Provider{{Name: "acme", Issuer: "http://127.0.0.1:1", ClientID: "herald"}}
	})

	b.navigate("/")
	b.waitView("signin")
	mustErrorEmpty(b)
	if b.shown("nav#nav") {
		t.Error("nav#nav is visible while signed out")
	}
	sel := `#providers a.provider-login[data-provider="acme"]`
	if href := eval[string](b, `(document.querySelector(`+js(sel)+`) || {}).href || ""`); href != e.base+"/auth/acme/login" {
		t.Errorf("%s href = %q, want %q", sel, href, e.base+"/auth/acme/login")
	}

	// Wrong password.
	b.fill("#signin-email", adaEmail)
	b.fill("#signin-password", "wrong password")
	b.click("#signin-submit")
	b.waitFor("a sign-in error in #error", `document.getElementById("error").textContent.trim() !== "" && `+loaded())
	if msg := b.text("#error"); !strings.Contains(msg, "wrong email or password") {
		t.Errorf("#error after a wrong password = %q, want the API's message %q", msg, "wrong email or password")
	}
	if v := eval[string](b, `document.body.dataset.view || ""`); v != "signin" {
		t.Errorf("after a wrong password body.dataset.view = %q, want signin", v)
	}
	if !b.shown("#view-signin") || b.shown("#view-channels") || b.shown("nav#nav") {
		t.Errorf("after a wrong password: sign-in shown %v, channels shown %v, nav shown %v; want true, false, false",
			b.shown("#view-signin"), b.shown("#view-channels"), b.shown("nav#nav"))
	}
	if _, ok := b.cookie("herald_session"); ok {
		t.Error("a herald_session cookie was set by a failed sign-in")
	}

	// Right password.
	b.fill("#signin-email", adaEmail)
	b.fill("#signin-password", adaPassword)
	b.click("#signin-submit")
	b.waitView("channels")
	mustErrorEmpty(b)
	if got := b.text("#whoami"); got != adaEmail {
		t.Errorf("#whoami = %q, want %q", got, adaEmail)
	}
	if !b.shown("nav#nav") {
		t.Error("nav#nav is not visible after sign-in")
	}
	for _, v := range []string{"channels", "messages", "keys", "devices", "folders"} {
		sel := `nav#nav a#nav-` + v + `[href="#/` + v + `"]`
		if !b.shown(sel) {
			t.Errorf("nav link %s missing or not visible", sel)
		}
	}
	if !b.shown("nav#nav button#signout") {
		t.Error("button#signout missing or not visible")
	}
	session, ok := b.cookie("herald_session")
	if !ok {
		t.Fatal("no herald_session cookie after sign-in")
	}
	if _, ok := b.cookie("herald_csrf"); !ok {
		t.Error("no herald_csrf cookie after sign-in")
	}
	// The cookie is a live server session.
	if status, body := e.api(http.MethodGet, "/v1/auth/me", session, nil); status != http.StatusOK || body["email"] != adaEmail {
		t.Errorf("GET /v1/auth/me with the session cookie's token: %d %v", status, body)
	}

	// A reload keeps the session.
	b.reload()
	b.waitView("channels")
	if got := b.text("#whoami"); got != adaEmail {
		t.Errorf("after reload #whoami = %q, want %q", got, adaEmail)
	}
	if !b.shown("nav#nav") {
		t.Error("after reload nav#nav is not visible")
	}

	// Sign out.
	b.click("button#signout")
	b.waitView("signin")
	mustErrorEmpty(b)
	if b.shown("nav#nav") {
		t.Error("nav#nav is visible after sign-out")
	}
	if _, ok := b.cookie("herald_session"); ok {
		t.Error("herald_session cookie still set after sign-out")
	}
	if status, _ := e.api(http.MethodGet, "/v1/auth/me", session, nil); status != http.StatusUnauthorized {
		t.Errorf("the signed-out session still works: GET /v1/auth/me answered %d, want 401", status)
	}

	// A reload stays signed out.
	b.reload()
	b.waitView("signin")
	if b.shown("nav#nav") || b.shown("#view-channels") {
		t.Error("after sign-out and reload the page shows signed-in parts")
	}
}

// TestUIChannels: create (with folder and colour), the webhook URL works, pin
// (pinned first), mute for an hour, new URL (old one dies), delete.
func TestUIChannels(t *testing.T) {
	e, b, u := setup(t)
	ctx := context.Background()
	tok := e.token(adaEmail, adaPassword)
	folderID := e.folder(tok, "Ops")

	b.signIn(adaEmail, adaPassword)
	if !b.shown("#channels-empty") {
		t.Error("#channels-empty is not visible with no channels")
	}
	if n := len(b.rows("table#channels", "data-channel-id")); n != 0 {
		t.Errorf("%d channel rows with no channels", n)
	}
	opts := eval[[]string](b, `Array.from(document.querySelectorAll("select#channel-folder option")).map(o => o.value)`)
	if len(opts) != 2 || opts[0] != "" || opts[1] != folderID {
		t.Errorf("select#channel-folder option values = %q, want [\"\" %q]", opts, folderID)
	}

	// Create "Deploys" in folder Ops with a colour.
	b.fill("#channel-name", "Deploys")
	b.choose("#channel-color", "#1e90ff")
	b.choose("#channel-folder", folderID)
	b.click("#channel-create-submit")
	cells := []string{"td.channel-name", "td.channel-webhook code.webhook-url", "td.channel-folder", "button.channel-pin", "select.channel-mute option:first-child"}
	b.waitFor("row Deploys", rowWithJS("table#channels", "data-channel-id", "td.channel-name", "Deploys")+" && "+loaded())
	mustErrorEmpty(b)
	if b.shown("#channels-empty") {
		t.Error("#channels-empty is still visible with a channel")
	}
	chs, err := e.st.ListChannels(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(chs) != 1 {
		t.Fatalf("store holds %d channels after one create, want 1", len(chs))
	}
	deploys := chs[0]
	if deploys.Name != "Deploys" || deploys.Color != "#1E90FF" || deploys.FolderID == nil || *deploys.FolderID != folderID {
		t.Errorf("stored channel: name %q colour %q folder %v; want Deploys, #1E90FF, %s", deploys.Name, deploys.Color, deploys.FolderID, folderID)
	}
	r, ok := findRow(b.rows("table#channels", "data-channel-id", cells...), "td.channel-name", "Deploys")
	if !ok {
		t.Fatal("row Deploys vanished")
	}
	if r.ID != deploys.ID {
		t.Errorf("row data-channel-id = %q, want %q", r.ID, deploys.ID)
	}
	webhook := r.Cells["td.channel-webhook code.webhook-url"]
	if want := e.base + "/v1/send/" + deploys.WebhookToken; webhook != want {
		t.Errorf("td.channel-webhook code = %q, want %q", webhook, want)
	}
	// The copy buttons hold the URL and a curl line that sends to it.
	copies := eval[[]string](b, `Array.from(document.querySelectorAll(`+js(`tr[data-channel-id="`+deploys.ID+`"] button[data-copy]`)+`)).map(b => b.dataset.copy)`)
	if len(copies) != 2 || copies[0] != webhook || !strings.HasPrefix(copies[1], "curl ") || !strings.HasSuffix(copies[1], " "+webhook) {
		t.Errorf("copy buttons hold %q, want the webhook URL and a curl example ending in it", copies)
	}
	b.click(`tr[data-channel-id="` + deploys.ID + `"] button.copy-url`)
	b.waitFor("Copied", `document.querySelector(`+js(`tr[data-channel-id="`+deploys.ID+`"] button.copy-url`)+`).dataset.copied === "true"`)
	if got := b.text(`tr[data-channel-id="` + deploys.ID + `"] button.copy-url`); got != "Copied" {
		t.Errorf("the copy button says %q after a copy, want Copied", got)
	}
	if got := r.Cells["td.channel-folder"]; got != "Ops" {
		t.Errorf("td.channel-folder = %q, want the folder's name %q", got, "Ops")
	}
	if got := r.Cells["button.channel-pin"]; got != "Pin" {
		t.Errorf("button.channel-pin = %q, want Pin", got)
	}
	if got := r.Cells["select.channel-mute option:first-child"]; got != "Mute…" {
		t.Errorf("select.channel-mute = %q, want Mute…", got)
	}
	if got := eval[[]string](b, `Array.from(document.querySelectorAll("select.channel-mute")[0].options).map(o => o.textContent)`); fmt.Sprint(got) != "[Mute… Mute for 1 hour Mute for 8 hours Mute for 1 day Mute until turned off]" {
		t.Errorf("mute choices %q", got)
	}
	// The URL on the page really works.
	if status, body := e.api(http.MethodPost, webhook, "", map[string]string{"title": "hi"}); status != http.StatusOK {
		t.Errorf("POST to the displayed webhook URL: %d %v, want 200", status, body)
	}

	// A second channel, no folder.
	b.fill("#channel-name", "Backups")
	b.choose("#channel-folder", "")
	b.click("#channel-create-submit")
	b.waitFor("row Backups", rowWithJS("table#channels", "data-channel-id", "td.channel-name", "Backups")+" && "+loaded())
	backups, ok := findRow(b.rows("table#channels", "data-channel-id", cells...), "td.channel-name", "Backups")
	if !ok {
		t.Fatal("row Backups vanished")
	}
	if c, err := e.st.Channel(ctx, u.ID, backups.ID); err != nil || c.FolderID != nil {
		t.Errorf("stored Backups: %+v, %v; want it with no folder", c, err)
	}

	// Pin Backups (made second): it moves first.
	rowSel := func(id string) string { return `table#channels tbody tr[data-channel-id="` + id + `"] ` }
	b.click(rowSel(backups.ID) + "button.channel-pin")
	b.waitFor("Backups pinned", `document.querySelector(`+js(rowSel(backups.ID)+"button.channel-pin")+`).textContent.trim() === "Unpin" && `+loaded())
	pins, err := e.st.ListPins(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(pins) != 1 || pins[0].ChannelID != backups.ID {
		t.Errorf("stored pins = %+v, want only %s", pins, backups.ID)
	}
	if rows := b.rows("table#channels", "data-channel-id", "td.channel-name"); len(rows) != 2 || rows[0].ID != backups.ID {
		t.Errorf("rows after pinning Backups = %+v, want Backups first", rows)
	}
	// And unpin.
	b.click(rowSel(backups.ID) + "button.channel-pin")
	b.waitFor("Backups unpinned", `document.querySelector(`+js(rowSel(backups.ID)+"button.channel-pin")+`).textContent.trim() === "Pin" && `+loaded())
	if pins, err := e.st.ListPins(ctx, u.ID); err != nil || len(pins) != 0 {
		t.Errorf("stored pins after unpin = %+v, %v; want none", pins, err)
	}

	// Mute Deploys for an hour, then unmute.
	before := time.Now()
	b.choose(rowSel(deploys.ID)+"select.channel-mute", "3600")
	b.waitFor("Deploys muted", `!!document.querySelector(`+js(rowSel(deploys.ID)+"button.channel-unmute")+`) && `+loaded())
	c, err := e.st.Channel(ctx, u.ID, deploys.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.MutedUntil == nil {
		t.Error("muted_until not set after Mute 1h")
	} else if lo, hi := before.Add(55*time.Minute), time.Now().Add(65*time.Minute); c.MutedUntil.Before(lo) || c.MutedUntil.After(hi) {
		t.Errorf("muted_until = %s, want about an hour from %s", c.MutedUntil.Format(time.RFC3339), before.Format(time.RFC3339))
	}
	ch := e.list("/v1/channels", "channels", tok)
	for _, m := range ch {
		if m["id"] == deploys.ID && m["muted_until"] == nil {
			t.Error("GET /v1/channels shows Deploys with muted_until null after Mute 1h")
		}
	}
	b.click(rowSel(deploys.ID) + "button.channel-unmute")
	b.waitFor("Deploys unmuted", `!!document.querySelector(`+js(rowSel(deploys.ID)+"select.channel-mute")+`) && `+loaded())
	if c, err := e.st.Channel(ctx, u.ID, deploys.ID); err != nil || c.MutedUntil != nil && c.MutedUntil.After(time.Now()) {
		t.Errorf("after Unmute the stored channel is %+v, %v; want it not muted", c, err)
	}
	// 8 hours, a day, and until turned off.
	for _, m := range []struct {
		value string
		want  time.Duration
	}{{"28800", 8 * time.Hour}, {"86400", 24 * time.Hour}, {"forever", 0}} {
		b.choose(rowSel(deploys.ID)+"select.channel-mute", m.value)
		b.waitFor("Deploys muted "+m.value, `!!document.querySelector(`+js(rowSel(deploys.ID)+"button.channel-unmute")+`) && `+loaded())
		c, err := e.st.Channel(ctx, u.ID, deploys.ID)
		switch {
		case err != nil || c.MutedUntil == nil:
			t.Errorf("mute %s: stored %+v, %v", m.value, c, err)
		case m.want == 0 && c.MutedUntil.Year() != 9999:
			t.Errorf("mute until turned off: muted_until %s, want the year 9999", c.MutedUntil)
		case m.want != 0 && (c.MutedUntil.Before(time.Now().Add(m.want-5*time.Minute)) || c.MutedUntil.After(time.Now().Add(m.want+5*time.Minute))):
			t.Errorf("mute %s: muted_until %s, want about %s from now", m.value, c.MutedUntil, m.want)
		}
		b.click(rowSel(deploys.ID) + "button.channel-unmute")
		b.waitFor("Deploys unmuted", `!!document.querySelector(`+js(rowSel(deploys.ID)+"select.channel-mute")+`) && `+loaded())
	}

	// New URL: the displayed URL changes, the old one stops working.
	if got := b.text(rowSel(deploys.ID) + "button.channel-regenerate"); got != "New URL" {
		t.Errorf("button.channel-regenerate = %q, want New URL", got)
	}
	// Asked first: Cancel keeps the URL.
	dialogs := b.dialogCount()
	b.dismissNext()
	b.click(rowSel(deploys.ID) + "button.channel-regenerate")
	b.waitFor("the question", loaded())
	if b.dialogCount() != dialogs+1 || !strings.Contains(b.lastDialog(), "stops working") {
		t.Errorf("New URL asked %d question(s), last %q; want one that says the old URL stops working", b.dialogCount()-dialogs, b.lastDialog())
	}
	if c, _ := e.st.Channel(ctx, u.ID, deploys.ID); e.base+"/v1/send/"+c.WebhookToken != webhook {
		t.Error("New URL changed the URL though the question was cancelled")
	}
	b.click(rowSel(deploys.ID) + "button.channel-regenerate")
	webhookSel := rowSel(deploys.ID) + "td.channel-webhook code.webhook-url"
	b.waitFor("a new webhook URL", `document.querySelector(`+js(webhookSel)+`).textContent.trim() !== `+js(webhook)+` && `+loaded())
	newWebhook := b.text(webhookSel)
	c, err = e.st.Channel(ctx, u.ID, deploys.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := e.base + "/v1/send/" + c.WebhookToken; newWebhook != want {
		t.Errorf("displayed webhook URL after New URL = %q, stored %q", newWebhook, want)
	}
	if status, body := e.api(http.MethodPost, webhook, "", map[string]string{"title": "hi"}); status != http.StatusUnauthorized {
		t.Errorf("POST to the old webhook URL: %d %v, want 401", status, body)
	}
	if status, body := e.api(http.MethodPost, newWebhook, "", map[string]string{"title": "hi"}); status != http.StatusOK {
		t.Errorf("POST to the new webhook URL: %d %v, want 200", status, body)
	}

	// Delete both.
	if got := b.text(rowSel(deploys.ID) + "button.channel-delete"); got != "Delete" {
		t.Errorf("button.channel-delete = %q, want Delete", got)
	}
	b.dismissNext()
	b.click(rowSel(deploys.ID) + "button.channel-delete")
	b.waitFor("the question", loaded())
	if !strings.Contains(b.lastDialog(), `Delete the channel "Deploys"`) {
		t.Errorf("Delete asked %q", b.lastDialog())
	}
	if got := e.list("/v1/channels", "channels", tok); len(got) != 2 {
		t.Errorf("a cancelled Delete left %d channels, want 2", len(got))
	}
	b.click(rowSel(deploys.ID) + "button.channel-delete")
	b.waitFor("row Deploys gone", `!document.querySelector(`+js(rowSel(deploys.ID))+`) && `+loaded())
	if got := e.list("/v1/channels", "channels", tok); len(got) != 1 || got[0]["id"] != backups.ID {
		t.Errorf("GET /v1/channels after deleting Deploys = %v, want only Backups", got)
	}
	b.click(rowSel(backups.ID) + "button.channel-delete")
	b.waitFor("row Backups gone", `!document.querySelector(`+js(rowSel(backups.ID))+`) && `+loaded())
	if got := e.list("/v1/channels", "channels", tok); len(got) != 0 {
		t.Errorf("GET /v1/channels after deleting both = %v, want none", got)
	}
	b.waitFor("#channels-empty visible", shownJS("#channels-empty"))
	mustErrorEmpty(b)
}

// TestUIKeys: a created key is shown once, works as a bearer token, shows
// its use, and stops working when revoked.
func TestUIKeys(t *testing.T) {
	e, b, u := setup(t)
	ctx := context.Background()
	b.signIn(adaEmail, adaPassword)
	b.openView("keys")
	if b.shown("div#key-created") {
		t.Error("div#key-created is visible before a key was created")
	}

	b.fill("#key-name", "ci")
	b.click("#key-create-submit")
	b.waitFor("the new key shown", shownJS("div#key-created")+` && document.querySelector("code#key-secret").textContent.trim() !== "" && `+
		rowWithJS("table#keys", "data-key-id", "td.key-name", "ci")+" && "+loaded())
	mustErrorEmpty(b)
	secret := b.text("code#key-secret")
	if !strings.HasPrefix(secret, "pk_live_") || len(secret) != len("pk_live_")+32 {
		t.Errorf("code#key-secret = %q, want a full pk_live_ key", secret)
	}
	keys, err := e.st.ListAPIKeys(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0].Name != "ci" || !strings.HasPrefix(secret, keys[0].Prefix) {
		t.Fatalf("stored keys = %+v, want one named ci with the shown key's prefix", keys)
	}
	r, ok := findRow(b.rows("table#keys", "data-key-id", "td.key-name", "td.key-last-used", "button.key-revoke"), "td.key-name", "ci")
	if !ok || r.ID != keys[0].ID {
		t.Fatalf("key row = %+v (found %v), want data-key-id %s", r, ok, keys[0].ID)
	}
	if got := r.Cells["button.key-revoke"]; got != "Revoke" {
		t.Errorf("button.key-revoke = %q, want Revoke", got)
	}
	unused := r.Cells["td.key-last-used"]

	// The shown key works.
	if status, body := e.api(http.MethodGet, "/v1/channels", secret, nil); status != http.StatusOK {
		t.Errorf("GET /v1/channels with the shown key: %d %v, want 200", status, body)
	}
	// And the list shows the use after a reload.
	b.reload()
	b.waitView("keys")
	r, ok = findRow(b.rows("table#keys", "data-key-id", "td.key-name", "td.key-last-used"), "td.key-name", "ci")
	if !ok {
		t.Fatal("key row gone after reload")
	}
	if r.Cells["td.key-last-used"] == unused {
		t.Errorf("td.key-last-used still %q after the key was used", unused)
	}
	if b.shown("div#key-created") && strings.Contains(b.text("div#key-created"), secret) {
		t.Error("the full key is still shown after a reload")
	}

	// Revoke.
	sel := `table#keys tbody tr[data-key-id="` + keys[0].ID + `"]`
	b.click(sel + " button.key-revoke")
	b.waitFor("key row gone", `!document.querySelector(`+js(sel)+`) && `+loaded())
	mustErrorEmpty(b)
	if keys, err := e.st.ListAPIKeys(ctx, u.ID); err != nil || len(keys) != 0 {
		t.Errorf("stored active keys after revoke = %+v, %v; want none", keys, err)
	}
	if status, _ := e.api(http.MethodGet, "/v1/channels", secret, nil); status != http.StatusUnauthorized {
		t.Errorf("GET /v1/channels with the revoked key: %d, want 401", status)
	}
}

// TestUIDevices: a device registered through the API is listed; Remove
// deletes it.
func TestUIDevices(t *testing.T) {
	e, b, _ := setup(t)
	tok := e.token(adaEmail, adaPassword)
	b.signIn(adaEmail, adaPassword)
	b.openView("devices")
	if !b.shown("p#devices-empty") {
		t.Error("p#devices-empty is not visible with no devices")
	}

	status, dev := e.api(http.MethodPost, "/v1/devices", tok, map[string]string{
		"platform": "ios", "push_token": "apns-token-0123456789abcdef", "name": "Ada's iPhone"})
	if status != http.StatusCreated {
		t.Fatalf("register device: %d %v", status, dev)
	}
	devID, _ := dev["id"].(string)
	b.reload()
	b.waitView("devices")
	rows := b.rows("table#devices", "data-device-id", "td.device-name", "td.device-platform", "button.device-delete")
	if len(rows) != 1 || rows[0].ID != devID {
		t.Fatalf("device rows = %+v, want one with data-device-id %s", rows, devID)
	}
	if got := rows[0].Cells["td.device-name"]; got != "Ada's iPhone" {
		t.Errorf("td.device-name = %q, want %q", got, "Ada's iPhone")
	}
	if got := rows[0].Cells["td.device-platform"]; !strings.EqualFold(got, "ios") {
		t.Errorf("td.device-platform = %q, want ios", got)
	}
	if got := rows[0].Cells["button.device-delete"]; got != "Remove" {
		t.Errorf("button.device-delete = %q, want Remove", got)
	}
	if b.shown("p#devices-empty") {
		t.Error("p#devices-empty is visible with a device")
	}

	sel := `table#devices tbody tr[data-device-id="` + devID + `"]`
	b.click(sel + " button.device-delete")
	b.waitFor("device row gone", `!document.querySelector(`+js(sel)+`) && `+loaded())
	mustErrorEmpty(b)
	if got := e.list("/v1/devices", "devices", tok); len(got) != 0 {
		t.Errorf("GET /v1/devices after Remove = %v, want none", got)
	}
	b.waitFor("p#devices-empty visible", shownJS("p#devices-empty"))
}

// TestUIFolders: a created folder is listed and offered on the channel form;
// deleting it removes it from both.
func TestUIFolders(t *testing.T) {
	e, b, _ := setup(t)
	tok := e.token(adaEmail, adaPassword)
	b.signIn(adaEmail, adaPassword)
	b.openView("folders")

	b.fill("#folder-name", "Work")
	b.click("#folder-create-submit")
	b.waitFor("row Work", rowWithJS("table#folders", "data-folder-id", "td.folder-name", "Work")+" && "+loaded())
	mustErrorEmpty(b)
	folders := e.list("/v1/folders", "folders", tok)
	if len(folders) != 1 || folders[0]["name"] != "Work" {
		t.Fatalf("GET /v1/folders = %v, want one named Work", folders)
	}
	id, _ := folders[0]["id"].(string)
	r, _ := findRow(b.rows("table#folders", "data-folder-id", "td.folder-name", "button.folder-delete"), "td.folder-name", "Work")
	if r.ID != id {
		t.Errorf("folder row data-folder-id = %q, want %q", r.ID, id)
	}
	if got := r.Cells["button.folder-delete"]; got != "Delete" {
		t.Errorf("button.folder-delete = %q, want Delete", got)
	}

	optionJS := `Array.from(document.querySelectorAll("select#channel-folder option")).map(o => [o.value, o.textContent.trim()])`
	b.openView("channels")
	opts := eval[[][]string](b, optionJS)
	if len(opts) != 2 || opts[0][0] != "" || opts[1][0] != id || opts[1][1] != "Work" {
		t.Errorf("select#channel-folder options = %q, want none and [%s Work]", opts, id)
	}

	b.openView("folders")
	sel := `table#folders tbody tr[data-folder-id="` + id + `"]`
	b.click(sel + " button.folder-delete")
	b.waitFor("folder row gone", `!document.querySelector(`+js(sel)+`) && `+loaded())
	mustErrorEmpty(b)
	if got := e.list("/v1/folders", "folders", tok); len(got) != 0 {
		t.Errorf("GET /v1/folders after delete = %v, want none", got)
	}
	b.openView("channels")
	if opts := eval[[][]string](b, optionJS); len(opts) != 1 || opts[0][0] != "" {
		t.Errorf("select#channel-folder options after the folder was deleted = %q, want only none", opts)
	}
}

// TestUIRename: a channel and a folder are renamed in place. The webhook URL
// stays and works; Cancel and Escape send nothing; an API error keeps the form
// open with what was typed; a name with markup is shown as text; a folder's
// new name reaches the channels view.
func TestUIRename(t *testing.T) {
	e, b, u := setup(t)
	ctx := context.Background()
	tok := e.token(adaEmail, adaPassword)
	folderID := e.folder(tok, "Ops")
	status, created := e.api(http.MethodPost, "/v1/channels", tok, map[string]string{"name": "Deploys", "color": "#1E90FF"})
	if status != http.StatusCreated {
		t.Fatalf("create channel: %d %v", status, created)
	}
	chID, _ := created["id"].(string)
	if status, body := e.api(http.MethodPatch, "/v1/channels/"+chID, tok, map[string]string{"folder_id": folderID}); status != http.StatusOK {
		t.Fatalf("put the channel in the folder: %d %v", status, body)
	}
	stored := func() *store.Channel {
		t.Helper()
		c, err := e.st.Channel(ctx, u.ID, chID)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	orig := stored()

	b.signIn(adaEmail, adaPassword)
	row := `table#channels tbody tr[data-channel-id="` + chID + `"]`
	nameSel := row + " td.channel-name"
	inputSel := row + " input.channel-rename-input"
	formOpen := `!!document.querySelector(` + js(inputSel) + `)`
	nameIs := func(name string) string {
		return `((el) => !!el && el.textContent.trim() === ` + js(name) + `)(document.querySelector(` + js(nameSel) + `))`
	}
	webhook := b.text(row + " td.channel-webhook code")
	if want := e.base + "/v1/send/" + orig.WebhookToken; webhook != want {
		t.Fatalf("td.channel-webhook code = %q, want %q", webhook, want)
	}
	buttons := eval[[]string](b, `Array.from(document.querySelectorAll(`+js(row+" td.actions button")+`)).map(b => b.textContent.trim())`)
	if len(buttons) == 0 || buttons[0] != "Rename" {
		t.Errorf("row buttons = %q, want Rename first", buttons)
	}
	if got := b.text(row + " td.actions button.channel-rename"); got != "Rename" {
		t.Errorf("button.channel-rename = %q, want Rename", got)
	}
	unchanged := func(when string) {
		t.Helper()
		if c := stored(); c.Name != orig.Name || !c.UpdatedAt.Equal(orig.UpdatedAt) {
			t.Errorf("%s: stored channel %q updated %s, want %q updated %s (no PATCH)",
				when, c.Name, c.UpdatedAt.Format(time.RFC3339Nano), orig.Name, orig.UpdatedAt.Format(time.RFC3339Nano))
		}
	}
	// The row as it was: name, swatch, folder, no form, ready.
	restored := func(when string) {
		t.Helper()
		b.waitFor(when+": the row back as it was", `!(`+formOpen+`) && `+nameIs("Deploys")+` && `+loaded())
		if !b.shown(nameSel + " span.swatch") {
			t.Errorf("%s: the colour swatch is gone from td.channel-name", when)
		}
		if v := eval[string](b, `document.body.dataset.view || ""`); v != "channels" {
			t.Errorf("%s: body.dataset.view = %q, want channels", when, v)
		}
		mustErrorEmpty(b)
		unchanged(when)
	}

	// Cancel.
	b.openRename(row, "channel", "Deploys")
	b.fill(inputSel, "Not this")
	b.click(row + " button.channel-rename-cancel")
	restored("after Cancel")
	if !eval[bool](b, `document.activeElement === document.querySelector(`+js(row+" button.channel-rename")+`)`) {
		t.Error("after Cancel the focus is not back on button.channel-rename")
	}

	// Escape; the form opens again with the stored name, not what was typed.
	b.openRename(row, "channel", "Deploys")
	b.fill(inputSel, "Nor this")
	b.press(inputSel, kb.Escape)
	restored("after Escape")
	b.openRename(row, "channel", "Deploys")
	b.press(inputSel, kb.Escape)
	restored("after a second Escape")

	// An empty name: the API's error, the form stays open with it.
	b.openRename(row, "channel", "Deploys")
	b.fill(inputSel, "")
	b.click(row + " button.channel-rename-save")
	b.waitFor("an error in #error", `document.getElementById("error").textContent.trim() !== "" && `+loaded())
	if msg := b.text("#error"); !strings.Contains(msg, "name is required") {
		t.Errorf("#error after an empty name = %q, want the API's message %q", msg, "name is required")
	}
	if !b.shown(inputSel) || eval[string](b, `document.querySelector(`+js(inputSel)+`).value`) != "" {
		t.Errorf("after the error the rename form is gone or changed (open %v)", b.shown(inputSel))
	}
	unchanged("after an empty name")
	// Too long: the API's message, what was typed stays.
	long := strings.Repeat("x", 101)
	b.fill(inputSel, long)
	b.click(row + " button.channel-rename-save")
	b.waitFor("the too-long error in #error", `document.getElementById("error").textContent.includes("longer than 100") && `+loaded())
	if got := eval[string](b, `(document.querySelector(`+js(inputSel)+`) || {}).value`); got != long {
		t.Errorf("after the too-long error the input holds %q, want what was typed", got)
	}
	unchanged("after a too-long name")

	// Enter saves the trimmed name: the row shows it, the error is gone.
	b.fill(inputSel, "  Releases  ")
	b.press(inputSel, kb.Enter)
	b.waitFor("row Releases", `!(`+formOpen+`) && `+nameIs("Releases")+` && `+loaded())
	mustErrorEmpty(b)
	c := stored()
	if c.Name != "Releases" || !c.UpdatedAt.After(orig.UpdatedAt) {
		t.Errorf("stored channel after the rename: %q updated %s, want Releases updated after %s",
			c.Name, c.UpdatedAt.Format(time.RFC3339Nano), orig.UpdatedAt.Format(time.RFC3339Nano))
	}
	if c.WebhookToken != orig.WebhookToken || c.Color != orig.Color || c.FolderID == nil || *c.FolderID != folderID {
		t.Errorf("the rename changed more than the name: %+v, was %+v", c, orig)
	}
	r, ok := findRow(b.rows("table#channels", "data-channel-id", "td.channel-name", "td.channel-webhook code", "td.channel-folder"), "td.channel-name", "Releases")
	if !ok || r.ID != chID {
		t.Fatalf("no row Releases with data-channel-id %s: %+v", chID, r)
	}
	if r.Cells["td.channel-webhook code"] != webhook || r.Cells["td.channel-folder"] != "Ops" {
		t.Errorf("row after the rename: webhook %q folder %q, want %q and Ops", r.Cells["td.channel-webhook code"], r.Cells["td.channel-folder"], webhook)
	}
	if !b.shown(nameSel + " span.swatch") {
		t.Error("after the rename the colour swatch is gone from td.channel-name")
	}
	if !eval[bool](b, `document.activeElement === document.querySelector(`+js(row+" button.channel-rename")+`)`) {
		t.Error("after the rename the focus is not on the row's button.channel-rename")
	}
	chs := e.list("/v1/channels", "channels", tok)
	if len(chs) != 1 || chs[0]["name"] != "Releases" || chs[0]["webhook_url"] != webhook {
		t.Errorf("GET /v1/channels after the rename = %v, want Releases at %s", chs, webhook)
	}
	if status, body := e.api(http.MethodPost, webhook, "", map[string]string{"title": "hi"}); status != http.StatusOK {
		t.Errorf("POST to the webhook URL after the rename: %d %v, want 200", status, body)
	}

	// Markup in a name is text.
	const markup = `<b>x</b>`
	b.openRename(row, "channel", "Releases")
	b.fill(inputSel, markup)
	b.click(row + " button.channel-rename-save")
	b.waitFor("the markup name", `!(`+formOpen+`) && `+nameIs(markup)+` && `+loaded())
	mustErrorEmpty(b)
	if n := eval[int](b, `document.querySelectorAll(`+js(nameSel+" b")+`).length`); n != 0 {
		t.Errorf("the name %q became markup: %d b elements in td.channel-name", markup, n)
	}
	if c := stored(); c.Name != markup {
		t.Errorf("stored name = %q, want %q", c.Name, markup)
	}

	// Folders.
	b.openView("folders")
	frow := `table#folders tbody tr[data-folder-id="` + folderID + `"]`
	finput := frow + " input.folder-rename-input"
	fnameIs := func(name string) string {
		return `((el) => !!el && el.textContent.trim() === ` + js(name) + `)(document.querySelector(` + js(frow+" td.folder-name") + `))`
	}
	fbuttons := eval[[]string](b, `Array.from(document.querySelectorAll(`+js(frow+" td.actions button")+`)).map(b => b.textContent.trim())`)
	if len(fbuttons) == 0 || fbuttons[0] != "Rename" {
		t.Errorf("folder row buttons = %q, want Rename first", fbuttons)
	}
	folderStored := func() string {
		t.Helper()
		fs, err := e.st.ListFolders(ctx, u.ID)
		if err != nil || len(fs) != 1 {
			t.Fatalf("stored folders = %+v, %v; want one", fs, err)
		}
		return fs[0].Name
	}
	b.openRename(frow, "folder", "Ops")
	b.fill(finput, "Not this")
	b.click(frow + " button.folder-rename-cancel")
	b.waitFor("folder row back after Cancel", `!document.querySelector(`+js(finput)+`) && `+fnameIs("Ops")+` && `+loaded())
	b.openRename(frow, "folder", "Ops")
	b.press(finput, kb.Escape)
	b.waitFor("folder row back after Escape", `!document.querySelector(`+js(finput)+`) && `+fnameIs("Ops")+` && `+loaded())
	if name := folderStored(); name != "Ops" {
		t.Errorf("stored folder after Cancel and Escape = %q, want Ops", name)
	}
	b.openRename(frow, "folder", "Ops")
	b.fill(finput, " ")
	b.press(finput, kb.Enter)
	b.waitFor("an error in #error", `document.getElementById("error").textContent.trim() !== "" && `+loaded())
	if msg := b.text("#error"); !strings.Contains(msg, "name is required") {
		t.Errorf("#error after a blank folder name = %q, want the API's message %q", msg, "name is required")
	}
	if got := eval[string](b, `(document.querySelector(`+js(finput)+`) || {}).value`); got != " " {
		t.Errorf("after the error the folder input holds %q, want what was typed", got)
	}
	if name := folderStored(); name != "Ops" {
		t.Errorf("stored folder after a blank name = %q, want Ops", name)
	}
	b.fill(finput, "Operations")
	b.click(frow + " button.folder-rename-save")
	b.waitFor("folder row Operations", `!document.querySelector(`+js(finput)+`) && `+fnameIs("Operations")+` && `+loaded())
	mustErrorEmpty(b)
	if name := folderStored(); name != "Operations" {
		t.Errorf("stored folder after the rename = %q, want Operations", name)
	}
	if fs := e.list("/v1/folders", "folders", tok); len(fs) != 1 || fs[0]["id"] != folderID || fs[0]["name"] != "Operations" {
		t.Errorf("GET /v1/folders after the rename = %v, want Operations", fs)
	}

	// The channels view shows the folder's new name.
	b.openView("channels")
	opt := eval[string](b, `(() => { const o = Array.from(document.querySelectorAll("select#channel-folder option")).find(o => o.value === `+js(folderID)+`);
		return o ? o.textContent : "<missing>"; })()`)
	if opt != "Operations" {
		t.Errorf("select#channel-folder option = %q, want Operations", opt)
	}
	if got := b.text(row + " td.channel-folder"); got != "Operations" {
		t.Errorf("td.channel-folder = %q, want Operations", got)
	}
}

// TestUIEscapingAndCSRF: names are shown as text, never as HTML; and the
// session cookie alone cannot change anything (the CSRF header is needed).
func TestUIEscapingAndCSRF(t *testing.T) {
	e, b, u := setup(t)
	ctx := context.Background()
	tok := e.token(adaEmail, adaPassword)
	const folderName = `<b id="injected-folder">Ops</b>`
	folderID := e.folder(tok, folderName)
	b.signIn(adaEmail, adaPassword)

	const name = `<img src=x onerror=window.pwned=1>`
	b.fill("#channel-name", name)
	b.choose("#channel-folder", folderID)
	b.click("#channel-create-submit")
	b.waitFor("the channel row", rowWithJS("table#channels", "data-channel-id", "td.channel-name", name)+" && "+loaded())
	chs, err := e.st.ListChannels(ctx, u.ID)
	if err != nil || len(chs) != 1 || chs[0].Name != name {
		t.Fatalf("stored channels = %+v, %v; want one named %q", chs, err, name)
	}
	if got := b.text("table#channels tbody tr td.channel-name"); got != name {
		t.Errorf("td.channel-name textContent = %q, want %q", got, name)
	}
	if n := eval[int](b, `document.querySelectorAll("[onerror], img[src='x']").length`); n != 0 {
		t.Errorf("the channel name became markup: %d injected img elements on the page", n)
	}
	if got := b.text("table#channels tbody tr td.channel-folder"); got != folderName {
		t.Errorf("td.channel-folder textContent = %q, want %q", got, folderName)
	}
	opt := eval[string](b, `(() => { const o = Array.from(document.querySelectorAll("select#channel-folder option")).find(o => o.value === `+js(folderID)+`);
		return o ? o.textContent : "<missing>"; })()`)
	if opt != folderName {
		t.Errorf("select#channel-folder option text = %q, want %q", opt, folderName)
	}
	b.openView("folders")
	if got := b.text("table#folders tbody tr td.folder-name"); got != folderName {
		t.Errorf("td.folder-name textContent = %q, want %q", got, folderName)
	}
	b.openView("channels")
	if n := eval[int](b, `document.querySelectorAll("#injected-folder").length`); n != 0 {
		t.Errorf("the folder name became markup (%d #injected-folder elements)", n)
	}
	if pwned := eval[string](b, `typeof window.pwned`); pwned != "undefined" {
		t.Errorf("window.pwned is %s: the channel name ran as HTML", pwned)
	}

	// CSRF: a request that carries the session cookie but not the
	// X-CSRF-Token header is refused, and changes nothing.
	status := awaitJS[int](b, `fetch("/v1/channels", {method: "POST", credentials: "same-origin",
		headers: {"Content-Type": "application/json"}, body: JSON.stringify({name: "forged"})}).then(r => r.status)`)
	if status != http.StatusForbidden {
		t.Errorf("POST /v1/channels with the cookie and no CSRF header answered %d, want 403", status)
	}
	status = awaitJS[int](b, `fetch("/v1/channels/`+chs[0].ID+`", {method: "DELETE", credentials: "same-origin",
		headers: {"X-CSRF-Token": "forged"}}).then(r => r.status)`)
	if status != http.StatusForbidden {
		t.Errorf("DELETE /v1/channels/:id with a wrong CSRF header answered %d, want 403", status)
	}
	if chs, err := e.st.ListChannels(ctx, u.ID); err != nil || len(chs) != 1 {
		t.Errorf("stored channels after the forged requests = %+v, %v; want the one channel", chs, err)
	}
}

// TestUIIsolation: two people signed in at once each see only their own
// channels.
func TestUIIsolation(t *testing.T) {
	e, b, _ := setup(t)
	bob := e.addUser("bob@example.com", "bob's long password")
	b.signIn(adaEmail, adaPassword)
	b.fill("#channel-name", "Ada private")
	b.click("#channel-create-submit")
	b.waitFor("row Ada private", rowWithJS("table#channels", "data-channel-id", "td.channel-name", "Ada private")+" && "+loaded())
	adaRows := b.rows("table#channels", "data-channel-id", "td.channel-name")
	if len(adaRows) != 1 {
		t.Fatalf("Ada's rows = %+v, want one", adaRows)
	}

	other := b.isolatedTab()
	if _, ok := other.cookie("herald_session"); ok {
		t.Fatal("the isolated tab shares Ada's cookies")
	}
	other.signIn(bob.Email, "bob's long password")
	if rows := other.rows("table#channels", "data-channel-id", "td.channel-name"); len(rows) != 0 {
		t.Errorf("Bob sees channel rows %+v, want none", rows)
	}
	if !other.shown("#channels-empty") {
		t.Error("#channels-empty is not visible for Bob")
	}
	if status := awaitJS[int](other, `fetch("/v1/channels/`+adaRows[0].ID+`").then(r => r.status)`); status != http.StatusNotFound {
		t.Errorf("Bob's browser reading Ada's channel got %d, want 404", status)
	}
	other.fill("#channel-name", "Bob public")
	other.click("#channel-create-submit")
	other.waitFor("row Bob public", rowWithJS("table#channels", "data-channel-id", "td.channel-name", "Bob public")+" && "+loaded())
	if rows := other.rows("table#channels", "data-channel-id", "td.channel-name"); len(rows) != 1 {
		t.Errorf("Bob's rows = %+v, want only his channel", rows)
	}
	bobTok := e.token(bob.Email, "bob's long password")
	if got := e.list("/v1/channels", "channels", bobTok); len(got) != 1 || got[0]["name"] != "Bob public" {
		t.Errorf("Bob's GET /v1/channels = %v, want only Bob public", got)
	}

	// Ada, still signed in, still sees only hers.
	b.reload()
	b.waitView("channels")
	if got := b.text("#whoami"); got != adaEmail {
		t.Errorf("Ada's #whoami = %q after Bob signed in elsewhere", got)
	}
	rows := b.rows("table#channels", "data-channel-id", "td.channel-name")
	if len(rows) != 1 || rows[0].Cells["td.channel-name"] != "Ada private" {
		t.Errorf("Ada's rows after Bob signed in = %+v, want only Ada private", rows)
	}
}
