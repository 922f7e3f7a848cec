package web_test

// Browser tests of the look and feel: dark mode, the phone header,
// keyboard focus, relative times, reordering, the notifications module's
// mount points; and screenshots of every page for a person to review.

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// prefersDark emulates the system's colour scheme.
func (b *browser) prefersDark(dark bool) {
	b.t.Helper()
	value := "light"
	if dark {
		value = "dark"
	}
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: value}}}); err != nil {
		b.t.Fatalf("emulate prefers-color-scheme: %v", err)
	}
}

func (b *browser) viewport(width, height int64) {
	b.t.Helper()
	b.do(fmt.Sprintf("viewport %dx%d", width, height), chromedp.EmulateViewport(width, height))
}

// seed fills a server with what the pages show: channels (pinned, muted,
// with a rule), folders, messages of each kind, a device, a key, users.
func seed(t *testing.T, e *env, tok string) {
	t.Helper()
	folder := e.folder(tok, "Home lab")
	e.folder(tok, "Work")
	backupsID, backups := e.channel(tok, "Backups")
	deploysID, deploys := e.channel(tok, "Deploys")
	e.channel(tok, "Printer")
	e.addUser("bob@example.com", "bob's password!")
	for _, p := range []struct {
		path string
		body map[string]any
	}{
		{"/v1/channels/" + backupsID, map[string]any{"color": "#2DA44E", "folder_id": folder}},
		{"/v1/channels/" + deploysID, map[string]any{"color": "#BF3989", "approval": map[string]any{
			"approvers": []string{adaEmail, "bob@example.com"}, "required_count": 2, "window_seconds": 3600}}},
	} {
		if status, body := e.api(http.MethodPatch, p.path, tok, p.body); status != 200 {
			t.Fatalf("PATCH %s: %d %v", p.path, status, body)
		}
	}
	if status, body := e.api(http.MethodPost, "/v1/pins", tok, map[string]string{"channel_id": backupsID}); status >= 300 {
		t.Fatalf("pin: %d %v", status, body)
	}
	e.send(backups, map[string]any{"title": "Backup done", "body": "Nightly backup of **42 GB** finished in *3 min*.\n\n- `/var`: ok\n- `/home`: ok"})
	id := e.send(backups, map[string]any{"title": "Disk almost full", "priority": "high", "callback_url": "https://hooks.example.com/disk",
		"body": "`/dev/sda1` is at **93%**.", "actions": []map[string]any{
			{"type": "form", "key": "note", "label": "Acknowledge", "fields": []map[string]any{{"key": "who", "label": "Who looks at it", "type": "text"},
				{"key": "eta", "label": "Minutes until fixed", "type": "number"}}},
			{"type": "url", "label": "Open Grafana", "value": "https://grafana.example.com/d/disk"}}})
	if status, body := e.api(http.MethodPost, "/v1/messages/"+id+"/respond", tok, map[string]any{"action": "note", "responses": map[string]any{"who": "Ada", "eta": 30}}); status != 200 {
		t.Fatalf("respond: %d %v", status, body)
	}
	e.send(deploys, map[string]any{"title": "Deploy v2.3 to prod?", "body": "Changes: [#412](https://git.example.com/pr/412)"})
	// Bob's channel asks Ada's approval: her Approvals page shows it.
	bobTok := e.token("bob@example.com", "bob's password!")
	releasesID, releases := e.channel(bobTok, "Releases")
	if status, body := e.api(http.MethodPatch, "/v1/channels/"+releasesID, bobTok, map[string]any{"approval": map[string]any{
		"approvers": []string{adaEmail}, "required_count": 1, "window_seconds": 86400}}); status != 200 {
		t.Fatalf("PATCH %s: %d %v", releasesID, status, body)
	}
	e.send(releases, map[string]any{"title": "Release 4.1 to customers?", "body": "Signed off by QA. **12** fixes, no migration."})
	e.send(backups, map[string]any{"title": "Restart the NAS?", "actions": []map[string]any{
		{"type": "button", "key": "yes", "label": "Restart", "style": "destructive"}, {"type": "button", "key": "no", "label": "Not now"}}})
	if status, body := e.api(http.MethodPost, "/v1/devices", tok, map[string]string{"platform": "ios", "push_token": "apns-token-0123456789abcdef", "name": "Ada's iPhone"}); status != 201 {
		t.Fatalf("device: %d %v", status, body)
	}
	if status, body := e.api(http.MethodPost, "/v1/keys", tok, map[string]string{"name": "backup script"}); status != 201 {
		t.Fatalf("key: %d %v", status, body)
	}
}

// TestUILookAndFeel: dark mode follows the system until the toggle picks
// one, which is kept; the phone header is compact; focus is visible; times
// read as relative with the exact time on hover. With HERALD_UI_SHOTS set
// to a directory, every page (and the phone's open menu) is saved there in
// light and dark at 1280 and 390 pixels wide.
func TestUILookAndFeel(t *testing.T) {
	e, b, ada := setup(t)
	if err := e.st.SetUserAdmin(context.Background(), ada.ID, true); err != nil {
		t.Fatal(err)
	}
	tok := e.token(adaEmail, adaPassword)
	seed(t, e, tok)

	b.prefersDark(true)
	b.signIn(adaEmail, adaPassword)
	bg := func() string { return eval[string](b, `getComputedStyle(document.body).backgroundColor`) }
	if got := eval[string](b, `document.documentElement.dataset.theme`); got != "dark" || bg() != "rgb(15, 18, 22)" {
		t.Errorf("with a dark system: theme %q background %s, want dark", got, bg())
	}
	b.prefersDark(false)
	b.waitFor("light with the system", `document.documentElement.dataset.theme === "light"`)
	if bg() != "rgb(246, 247, 249)" {
		t.Errorf("light background %s", bg())
	}
	// The toggle's choice wins over the system, and is kept.
	b.click("#theme-toggle")
	if got := eval[string](b, `document.documentElement.dataset.theme + " " + localStorage.getItem("herald-theme") + " " + document.getElementById("theme-toggle").getAttribute("aria-pressed")`); got != "dark dark true" {
		t.Errorf("after the toggle: %q, want dark, stored, pressed", got)
	}
	b.reload()
	b.waitView("channels")
	if got := eval[string](b, `document.documentElement.dataset.theme`); got != "dark" {
		t.Errorf("after a reload the chosen theme is %q, want dark", got)
	}
	b.click("#theme-toggle")

	// Relative times, the exact time on hover.
	b.openView("messages")
	tm := eval[[]string](b, `(() => { const t = document.querySelector("time.message-time"); return [t.textContent, t.title, t.getAttribute("datetime")]; })()`)
	if tm[0] != "just now" && !strings.HasSuffix(tm[0], "ago") || tm[1] == "" || tm[1] == tm[2] {
		t.Errorf("time.message-time = %q, want a relative time with the exact time as its title", tm)
	}

	// Keyboard: the first Tab reaches the skip link, visibly.
	b.reload()
	b.waitView("messages")
	b.do("tab", chromedp.KeyEvent(kb.Tab))
	focus := eval[[]string](b, `[document.activeElement.className, String(document.activeElement.matches(":focus-visible")), getComputedStyle(document.activeElement).outlineStyle]`)
	if fmt.Sprint(focus) != "[skip-link true solid]" {
		t.Errorf("after Tab the focus is %q, want the skip link with a visible outline", focus)
	}

	// A phone: the header takes little of the screen, the links one row.
	b.viewport(390, 844)
	b.reload()
	b.waitView("messages")
	if h := eval[float64](b, `document.querySelector("header.topbar").getBoundingClientRect().height`); h > 844/8 {
		t.Errorf("the header is %.0f px high on a 390x844 phone, want at most an eighth of the screen", h)
	}
	if w := eval[float64](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the page is %.0f px wide on a 390 px phone", w)
	}

	shots := os.Getenv("HERALD_UI_SHOTS")
	if shots == "" {
		return
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int64{1280, 390} {
		b.viewport(width, 900)
		for _, theme := range []string{"light", "dark"} {
			eval[bool](b, `(localStorage.setItem("herald-theme", `+js(theme)+`), true)`)
			b.reload() // the theme is read as the page loads
			b.waitFor("the theme", `document.documentElement.dataset.theme === `+js(theme)+` && `+loaded())
			for _, view := range []string{"channels", "messages", "approvals", "devices", "folders", "keys", "account", "users", "server"} {
				b.navigate("/#/" + view)
				b.waitView(view)
				if view == "channels" {
					b.click(`#channels tbody tr:nth-child(1) details.channel-curl summary`)
					b.click(`#channels tbody tr:nth-child(2) button.channel-approval`)
					b.waitFor("the editor", shownJS("#approval-editor")+" && "+loaded())
				}
				if view == "messages" && !b.shown(".delivery-log") {
					b.click(`#messages button.delivery-log-toggle`)
					b.waitFor("the log", `!!document.querySelector(".delivery-log") && `+loaded())
				}
				b.save(filepath.Join(shots, fmt.Sprintf("%s-%s-%d.png", view, theme, width)))
			}
			if width == 390 {
				b.click("#nav-toggle")
				b.waitFor("the menu", shownJS("#nav-channels"))
				b.save(filepath.Join(shots, fmt.Sprintf("menu-%s-%d.png", theme, width)))
				b.click("#nav-toggle")
			}
		}
	}
	eval[bool](b, `(localStorage.removeItem("herald-theme"), true)`)
	b.click("#nav-toggle") // at 390 px, Sign out is in the menu
	b.click("#signout")
	b.waitView("signin")
	b.save(filepath.Join(shots, "signin-light-390.png"))
}

// requests counts the API requests the page makes while act runs.
func (b *browser) requests(act func()) int {
	b.t.Helper()
	eval[bool](b, `(performance.clearResourceTimings(), performance.setResourceTimingBufferSize(1000), true)`)
	act()
	return eval[int](b, `performance.getEntriesByType("resource").filter(e => new URL(e.name).pathname.startsWith("/v1/")).length`)
}

func (b *browser) save(path string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// TestUIReorder: pinned channels and folders move up and down; the order
// is stored.
func TestUIReorder(t *testing.T) {
	e, b, u := setup(t)
	ctx := context.Background()
	tok := e.token(adaEmail, adaPassword)
	a, _ := e.channel(tok, "Alpha")
	c, _ := e.channel(tok, "Charlie")
	f1 := e.folder(tok, "One")
	f2 := e.folder(tok, "Two")
	for _, id := range []string{a, c} {
		if status, body := e.api(http.MethodPost, "/v1/pins", tok, map[string]string{"channel_id": id}); status >= 300 {
			t.Fatalf("pin: %d %v", status, body)
		}
	}
	b.signIn(adaEmail, adaPassword)
	order := func() []string {
		return eval[[]string](b, `Array.from(document.querySelectorAll("#channels tbody tr[data-pinned='true']")).map(r => r.dataset.channelId)`)
	}
	if got := order(); fmt.Sprint(got) != fmt.Sprint([]string{a, c}) {
		t.Fatalf("pinned rows %q", got)
	}
	n := b.requests(func() {
		b.click(`#channels tr[data-channel-id="` + c + `"] button.channel-up`)
		b.waitFor("Charlie first", `document.querySelector("#channels tbody tr").dataset.channelId === `+js(c)+` && `+loaded())
	})
	if n != 1 {
		t.Errorf("moving a pin made %d API requests, want 1 (the page renders the answer)", n)
	}
	pins, err := e.st.ListPins(ctx, u.ID)
	if err != nil || len(pins) != 2 || pins[0].ChannelID != c || pins[1].ChannelID != a {
		t.Errorf("stored pins %+v, %v; want Charlie then Alpha", pins, err)
	}
	if !eval[bool](b, `document.activeElement.matches("button.channel-up, button.channel-pin")`) {
		t.Error("after moving, the focus left the row")
	}

	b.openView("folders")
	if n := b.requests(func() {
		b.click(`#folders tr[data-folder-id="` + f2 + `"] button.folder-up`)
		b.waitFor("Two first", `document.querySelector("#folders tbody tr").dataset.folderId === `+js(f2)+` && `+loaded())
	}); n != 1 {
		t.Errorf("moving a folder made %d API requests, want 1", n)
	}
	got := e.list("/v1/folders", "folders", tok)
	if len(got) != 2 || got[0]["id"] != f2 || got[1]["id"] != f1 {
		t.Errorf("stored folders %v, want Two then One", got)
	}
	// Each of these is one request too.
	for name, act := range map[string]func(){
		"create a folder": func() {
			b.fill("#folder-name", "Three")
			b.click("#folder-create-submit")
			b.waitFor("Three", rowWithJS("table#folders", "data-folder-id", "td.folder-name", "Three")+" && "+loaded())
		},
		"delete a folder": func() {
			b.click(`#folders tr[data-folder-id="` + f1 + `"] button.folder-delete`)
			b.waitFor("One gone", `!document.querySelector(`+js(`#folders tr[data-folder-id="`+f1+`"]`)+`) && `+loaded())
		},
	} {
		if n := b.requests(act); n != 1 {
			t.Errorf("%s made %d API requests, want 1", name, n)
		}
	}
	b.openView("channels")
	for name, act := range map[string]func(){
		"mute": func() {
			b.choose(`#channels tr[data-channel-id="`+a+`"] select.channel-mute`, "3600")
			b.waitFor("muted", `!!document.querySelector(`+js(`#channels tr[data-channel-id="`+a+`"] button.channel-unmute`)+`) && `+loaded())
		},
		"unpin": func() {
			b.click(`#channels tr[data-channel-id="` + a + `"] button.channel-pin`)
			b.waitFor("unpinned", `document.querySelector(`+js(`#channels tr[data-channel-id="`+a+`"]`)+`).dataset.pinned === "false" && `+loaded())
		},
		"delete a channel": func() {
			b.click(`#channels tr[data-channel-id="` + c + `"] button.channel-delete`)
			b.waitFor("gone", `!document.querySelector(`+js(`#channels tr[data-channel-id="`+c+`"]`)+`) && `+loaded())
		},
	} {
		if n := b.requests(act); n != 1 {
			t.Errorf("%s made %d API requests, want 1", name, n)
		}
	}
	mustErrorEmpty(b)
}

// TestUINotificationsModule: the page mounts the browser-notifications
// module (js/notify.js) at its places outside the devices view, which the
// installable-app tests (pwa_test.go) cover with "this browser": the hint
// after sign-in and the control on the account page.
func TestUINotificationsModule(t *testing.T) {
	_, b, _ := setup(t)
	b.signIn(adaEmail, adaPassword)
	b.waitFor("the hint", `!!document.querySelector("#notifications-hint-root .notify-hint")`)
	b.openView("account")
	b.waitFor("the control", `["off", "on", "blocked", "unsupported"].includes(document.querySelector("#notifications-root").dataset.state)`)
	if got := b.text("#notifications-root h2"); got != "Notifications in this browser" {
		t.Errorf("the account page's control is titled %q", got)
	}
}
