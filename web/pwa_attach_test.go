package web_test

// A picture in a browser notification: the Web Push that Herald's push
// worker sends for a message with a stored picture names it by a signed
// link, the real service worker shows it as the notification's image, and
// the link loads without any session, as the browser's notification does.

import (
	"bytes"
	"encoding/json"
	"image/jpeg"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
)

// TestPWANotificationPicture: Person at the gate, with its snapshot, as a
// notification: the push carries the signed link of the picture's
// thumbnail, the service worker shows it as the notification's image, and
// the link answers the picture to a client with no cookie, in Go and in a
// browser that never signed in, while the same address unsigned does not.
func TestPWANotificationPicture(t *testing.T) {
	p := newPWA(t)
	e := p.env
	e.addUser(adaEmail, adaPassword)
	tok := e.token(adaEmail, adaPassword)
	b := newBrowser(t, e)
	call(b, "Page.addScriptToEvaluateOnNewDocument", page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: fakeSubscriptionJS(p.pushes.Subscription("/push/ada"))})
	b.setNotifications(cdpbrowser.PermissionSettingGranted)
	b.signIn(adaEmail, adaPassword)
	b.waitWorker()
	b.openView("devices")
	b.click("#notifications-control button.notify-toggle")
	b.waitFor("notifications on", `document.querySelector("#notifications-control").dataset.state === "on"`)

	_, webhook := e.channel(tok, "Gate")
	id := e.sendFile(webhook, map[string]any{"title": "Person at the gate", "body": "Front camera", "priority": "high",
		"actions": []map[string]any{{"type": "button", "key": "open", "label": "Open gate"}, {"type": "button", "key": "ignore", "label": "Ignore"}}},
		"gate.jpg", snapshotOf(t, 1280, 720))
	att := e.attachmentOf(tok, id)
	payload := p.waitPayload("/push/ada", "message", id)
	var push struct {
		Image string `json:"image"`
	}
	if err := json.Unmarshal(payload, &push); err != nil {
		t.Fatal(err)
	}
	link, err := url.Parse(push.Image)
	if err != nil || push.Image == "" {
		t.Fatalf("the push's image = %q (%v), want a signed link; push %s", push.Image, err, payload)
	}
	q := link.Query()
	exp, _ := strconv.ParseInt(q.Get("exp"), 10, 64)
	if link.Scheme+"://"+link.Host != e.base || link.Path != att["url"] || q.Get("thumbnail") != "1" || q.Get("sig") == "" ||
		exp < time.Now().Unix() || exp > time.Now().Add(25*time.Hour).Unix() {
		t.Errorf("the push's image = %s, want an absolute signed link to the thumbnail of %s, expiring within a day", push.Image, att["url"])
	}

	n := b.pushNotification(b.registrationID(), payload, "herald-"+id, "Front camera")
	if got := b.notificationImage("herald-" + id); got != push.Image {
		t.Errorf("the notification's image = %q, want the push's %q (notification %+v)", got, push.Image, n)
	}

	// The link needs no session: a Go client without cookies...
	res, err := e.http.Get(push.Image)
	if err != nil {
		t.Fatal(err)
	}
	pic, _ := io.ReadAll(res.Body)
	res.Body.Close()
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(pic))
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/jpeg" || err != nil || cfg.Width != 640 || cfg.Height != 360 {
		t.Errorf("GET the signed link: %d %q, %d bytes, %+v %v; want the 640×360 JPEG thumbnail", res.StatusCode, res.Header.Get("Content-Type"), len(pic), cfg, err)
	}
	// ... and a browser that never signed in draws it.
	stranger := b.isolatedTab()
	stranger.navigate("/")
	if w := awaitJS[int](stranger, `(async () => { const i = new Image(); i.src = `+js(push.Image)+`; await i.decode(); return i.naturalWidth; })()`); w != 640 {
		t.Errorf("a browser without a session draws the signed link %d px wide, want 640", w)
	}
	// Unsigned, or with its signature altered, the address gives nothing.
	altered := strings.Replace(push.Image, "sig=", "sig=0", 1)
	for _, u := range []string{e.base + att["url"].(string) + "?thumbnail=1", altered} {
		res, err := e.http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			t.Errorf("GET %s without a session: 200, want a refusal", u)
		}
	}
}

// notificationImage is the image of the notification tagged tag, as the
// service worker's registration reports it.
func (b *browser) notificationImage(tag string) string {
	b.t.Helper()
	return awaitJS[string](b, `navigator.serviceWorker.ready.then((r) => r.getNotifications({tag: `+js(tag)+`})).then((ns) => ns.length === 1 ? ns[0].image : "<"+ns.length+" notifications>")`)
}
