package web_test

// Browser tests of the installable app: the manifest and Chromium's
// installability check, the service worker at the root scope, turning
// notifications on, a real push delivered to the real service worker
// (ServiceWorker.deliverPushMessage) with the payload Herald's push worker
// sent to a local Web Push service, answering from a notification's button,
// the update that replaces a notification answered elsewhere, and the
// offline shell.
//
// What cannot run here is pushManager.subscribe() itself: it needs the
// browser vendor's push service. The tests replace PushManager's subscribe
// and getSubscription in the page (the browser's API, not Herald's code)
// with a subscription of the local push service, so everything around it
// runs for real: permission, the server's key, POST /v1/devices, the push,
// its decryption and the service worker.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/heraldhq/herald/internal/testkit"
)

// TestPWAInstallable: the manifest and icons are served as the browser
// wants them, Chromium finds nothing that keeps the app from being
// installed, the service worker controls the whole origin, and the page's
// policy names the worker and the manifest and stays as strict.
func TestPWAInstallable(t *testing.T) {
	e := newEnv(t)
	b := newBrowser(t, e)
	for path, want := range map[string]string{
		"/manifest.webmanifest":       "application/manifest+json",
		"/sw.js":                      "text/javascript; charset=utf-8",
		"/icons/icon-192.png":         "image/png",
		"/icons/icon-512.png":         "image/png",
		"/icons/maskable-512.png":     "image/png",
		"/icons/apple-touch-icon.png": "image/png",
		"/js/notify.js":               "text/javascript; charset=utf-8",
		"/js/pwa.js":                  "text/javascript; charset=utf-8",
		"/js/sw-register.js":          "text/javascript; charset=utf-8",
		"/notify.css":                 "text/css; charset=utf-8",
		"/icons/badge-96.png":         "image/png",
	} {
		r := getFile(t, e, path)
		if r.Status != http.StatusOK || r.Header.Get("Content-Type") != want {
			t.Errorf("GET %s: %d %q, want 200 %q", path, r.Status, r.Header.Get("Content-Type"), want)
		}
	}
	r := getFile(t, e, "/")
	csp := r.Header.Get("Content-Security-Policy")
	if csp != "default-src 'self'; img-src 'self' data: https: http:; style-src 'self'; script-src 'self'; worker-src 'self'; manifest-src 'self'; frame-ancestors 'none'" {
		t.Errorf("the page's CSP = %q", csp)
	}
	var manifest struct {
		Name            string `json:"name"`
		ShortName       string `json:"short_name"`
		StartURL        string `json:"start_url"`
		Scope           string `json:"scope"`
		Display         string `json:"display"`
		ThemeColor      string `json:"theme_color"`
		BackgroundColor string `json:"background_color"`
		Icons           []struct {
			Src     string `json:"src"`
			Sizes   string `json:"sizes"`
			Purpose string `json:"purpose"`
		} `json:"icons"`
	}
	if err := json.Unmarshal(getFile(t, e, "/manifest.webmanifest").Raw, &manifest); err != nil {
		t.Fatal(err)
	}
	if manifest.Name != "Herald" || manifest.ShortName != "Herald" || manifest.Scope != "/" || manifest.Display != "standalone" ||
		manifest.StartURL == "" || manifest.ThemeColor == "" || manifest.BackgroundColor == "" || len(manifest.Icons) != 3 ||
		manifest.Icons[0].Sizes != "192x192" || manifest.Icons[1].Sizes != "512x512" || manifest.Icons[2].Purpose != "maskable" {
		t.Errorf("manifest = %+v", manifest)
	}

	b.navigate("/")
	b.waitView("signin")
	if scope := b.waitWorker(); scope != e.base+"/" {
		t.Errorf("service worker scope = %q, want %q", scope, e.base+"/")
	}
	errs := call(b, "Page.getInstallabilityErrors", page.GetInstallabilityErrors, cdp.Empty{})
	if len(errs.InstallabilityErrors) != 0 {
		for _, ie := range errs.InstallabilityErrors {
			t.Errorf("installability error: %s %v", ie.ErrorID, ie.ErrorArguments)
		}
	}
	if got := eval[string](b, `document.querySelector('link[rel="apple-touch-icon"]').href`); got != e.base+"/icons/apple-touch-icon.png" {
		t.Errorf("apple-touch-icon = %q", got)
	}
	if got := eval[string](b, `document.querySelector('meta[name="apple-mobile-web-app-capable"]').content`); got != "yes" {
		t.Errorf("apple-mobile-web-app-capable = %q", got)
	}
}

// TestPWANotifications: the whole path of a notification in a real
// Chromium: turning notifications on registers this browser as a web
// device, a message is pushed by Herald's push worker to the (local) push
// service, the decrypted push reaches the real service worker, which shows
// it as specified; its button answers the message without a page (the
// server stores it, the callback goes out); a message answered elsewhere
// has its notification replaced by the update push; and with the server
// gone, the app's shell loads from the cache and says it is offline.
func TestPWANotifications(t *testing.T) {
	p := newPWA(t)
	e := p.env
	e.addUser(adaEmail, adaPassword)
	tok := e.token(adaEmail, adaPassword)
	b := newBrowser(t, e)
	call(b, "Page.addScriptToEvaluateOnNewDocument", page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: fakeSubscriptionJS(p.pushes.Subscription("/push/ada"))})

	// Before permission: the hint after sign-in, the control says off.
	b.signIn(adaEmail, adaPassword)
	b.waitFor("the notifications hint", shownJS("#notifications-hint-root .notify-hint"))
	b.waitWorker()
	b.screenshot("hint-after-sign-in")
	b.openView("devices")
	b.waitFor("the control, off", `document.querySelector("#notifications-control").dataset.state === "off"`)
	b.screenshot("control-off")

	// Turn on: permission (granted through DevTools, as the person's click
	// on the browser's prompt would), the server's key, the registration.
	b.setNotifications(cdpbrowser.PermissionSettingGranted)
	b.click("#notifications-control button.notify-toggle")
	b.waitFor("the control, on", `document.querySelector("#notifications-control").dataset.state === "on"`)
	if got := b.text("#notifications-control .notify-status"); !strings.HasPrefix(got, "On:") {
		t.Errorf("status when on = %q", got)
	}
	if eval[bool](b, `!!document.querySelector("#notifications-hint-root .notify-hint")`) {
		t.Error("the hint is still shown with notifications on")
	}
	devices := e.list("/v1/devices", "devices", tok)
	if len(devices) != 1 || devices[0]["platform"] != "web" || devices[0]["name"] != "Chrome on Linux" {
		t.Fatalf("devices after turning on = %v, want one web device", devices)
	}
	devID := devices[0]["id"].(string)
	b.reload()
	b.waitView("devices")
	b.waitFor("this browser marked", `!!document.querySelector(`+js(`tr[data-device-id="`+devID+`"] .this-browser`)+`)`)
	b.waitFor("the control, on after a reload", `document.querySelector("#notifications-control").dataset.state === "on"`)
	b.screenshot("control-on")
	if got := awaitJS[string](b, `import("/js/notify.js").then((n) => n.thisBrowserDeviceId())`); got != devID {
		t.Errorf("thisBrowserDeviceId() = %q, want %q", got, devID)
	}

	// A message, pushed by Herald to the push service, delivered to the
	// service worker.
	_, webhook := e.channel(tok, "Deploys")
	msg := e.send(webhook, map[string]any{"title": "Restart the web tier?", "body": "Latency is **up** 300%",
		"priority": "high", "callback_url": p.hook, "actions": []map[string]any{
			{"type": "button", "key": "restart", "label": "Restart", "style": "primary"},
			{"type": "button", "key": "wait", "label": "Wait"}}})
	payload := p.waitPayload("/push/ada", "message", msg)
	reg := b.registrationID()
	tag := "herald-" + msg
	n := b.pushNotification(reg, payload, tag, "Latency is up 300%")
	if n.Title != "Restart the web tier?" || n.Body != "Deploys\nLatency is up 300%" || !n.RequireInteraction || n.Silent || !n.Renotify ||
		n.Icon != e.base+"/icons/icon-192.png" || n.Badge != e.base+"/icons/badge-96.png" {
		t.Errorf("notification = %+v", n)
	}
	if got := fmt.Sprint(n.Actions); got != "[{0:button:restart Restart} {1:button:wait Wait}]" {
		t.Errorf("notification actions = %s", got)
	}
	b.openView("messages")
	b.waitFor("the message in the app", shownJS(articleSel(msg)))
	b.screenshot("message-in-app")

	// Its Restart button answers, without a page.
	b.clickAction(tag, n.Actions[0].Action)
	m := e.apiMessage(tok, msg)
	if resp, _ := m["response"].(map[string]any); m["status"] != "submitted" || resp["triggered_by"] != "restart" {
		t.Errorf("message after the notification's button = %v, want submitted by restart", m)
	}
	if cb := p.waitCallback(msg); cb["triggered_by"] != "restart" {
		t.Errorf("callback = %v, want triggered_by restart", cb)
	}
	if n := b.waitNotification(tag, "Answered: Restart"); len(n.Actions) != 0 || !n.Silent {
		t.Errorf("notification after the answer = %+v, want silent, without buttons", n)
	}

	// Answered elsewhere (the API): the update push replaces the
	// notification, buttons gone.
	other := e.send(webhook, map[string]any{"title": "Rotate the keys?", "priority": "low",
		"actions": []map[string]any{{"type": "button", "key": "rotate", "label": "Rotate"}}})
	if n := b.pushNotification(reg, p.waitPayload("/push/ada", "message", other), "herald-"+other, "Deploys"); !n.Silent || n.RequireInteraction || len(n.Actions) != 1 {
		t.Errorf("low priority notification = %+v, want silent with one button", n)
	}
	if status, body := e.api(http.MethodPost, "/v1/messages/"+other+"/respond", tok, map[string]string{"action": "rotate"}); status != http.StatusOK {
		t.Fatalf("answer through the API: %d %v", status, body)
	}
	update := p.waitPayload("/push/ada", "update", other)
	var u map[string]any
	_ = json.Unmarshal(update, &u)
	if u["tag"] != "herald-"+other || u["status"] != "answered" || u["answer"] != nil {
		t.Fatalf("push after the API's answer = %s, want the update of %s", update, other)
	}
	if n := b.pushNotification(reg, update, "herald-"+other, "Answered elsewhere."); len(n.Actions) != 0 {
		t.Errorf("notification after the update = %+v, want no buttons", n)
	}

	// A tap on the notification itself opens the app at the message.
	b.openView("channels")
	b.clickAction("herald-"+other, "")
	b.waitFor("the app at the message", `location.hash === `+js("#/messages/"+other)+
		` && document.body.dataset.view === "messages" && `+loaded())
	if n := b.notifications("herald-" + other); len(n) != 0 {
		t.Errorf("the tapped notification is still shown: %+v", n)
	}

	// Offline: the shell comes from the cache, and says so.
	testkit.Eventually(t, waitTimeout, func() error {
		if !awaitJS[bool](b, `caches.open("herald-shell-v1").then(async (c) => !!(await c.match("/")) && !!(await c.match("/js/app.js")) && !!(await c.match("/js/notify.js")))`) {
			return errors.New("the service worker kept no shell")
		}
		return nil
	})
	// The server goes away: no listener, and the open connections (the
	// live stream) cut.
	e.srv.Listener.Close()
	e.srv.CloseClientConnections()
	b.reload()
	b.waitFor("the offline banner", shownJS("#offline-banner"))
	if got := b.text(".brand"); got != "Herald" {
		t.Errorf("offline, the page shows brand %q", got)
	}
	b.screenshot("offline")
}

// TestPWANotificationStates: the control tells why notifications cannot be
// turned on: blocked by the browser, or not available on a page that is
// not a secure context (with the iPhone's "add to home screen first").
func TestPWANotificationStates(t *testing.T) {
	e := newEnv(t)
	e.addUser(adaEmail, adaPassword)
	b := newBrowser(t, e)
	b.setNotifications(cdpbrowser.PermissionSettingDenied)
	b.signIn(adaEmail, adaPassword)
	b.openView("devices")
	b.waitFor("the control, blocked", `document.querySelector("#notifications-control").dataset.state === "blocked"`)
	if got := b.text("#notifications-control .notify-status"); !strings.HasPrefix(got, "Blocked by the browser") {
		t.Errorf("status when blocked = %q", got)
	}
	if b.shown("#notifications-control button") {
		t.Error("a button is offered while the browser blocks notifications")
	}
	if eval[bool](b, `!!document.querySelector("#notifications-hint-root .notify-hint")`) {
		t.Error("the hint is shown while notifications are blocked")
	}
	b.screenshot("control-blocked")
}

// TestPWANotificationsUnsupported: where the browser offers no push, the
// control says why. On a page that is not a secure context (plain http
// under a name other than localhost): https. In Safari on an iPhone, which
// offers push only to an app added to the home screen (simulated here with
// its user agent and without PushManager, as Safari's page has none): add
// to the home screen first.
func TestPWANotificationsUnsupported(t *testing.T) {
	e := newEnv(t)
	e.addUser(adaEmail, adaPassword)
	path := chromiumPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-background-networking", true),
		chromedp.UserDataDir(t.TempDir()),
		// herald.test reaches the test server; http on that name is not a
		// secure context, as a LAN address without https is not.
		chromedp.Flag("host-resolver-rules", "MAP herald.test 127.0.0.1"))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	insecure := *e
	insecure.base = strings.Replace(e.base, "127.0.0.1", "herald.test", 1)
	for _, tt := range []struct {
		name       string
		env        *env
		secure     bool
		safari     bool
		want, shot string
	}{
		{"http", &insecure, false, false, "Browsers allow notifications only on https:// pages", "control-unsupported"},
		{"iphone", e, true, true, "On iPhone and iPad, add Herald to the home screen first", "control-unsupported-iphone"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tctx, tcancel := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
			t.Cleanup(tcancel)
			if err := chromedp.Do(tctx); err != nil {
				t.Fatal(err)
			}
			b := attach(t, tt.env, tctx)
			if tt.safari {
				call(b, "Emulation.setUserAgentOverride", emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{
					UserAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"})
				call(b, "Page.addScriptToEvaluateOnNewDocument", page.AddScriptToEvaluateOnNewDocument,
					page.AddScriptToEvaluateOnNewDocumentParams{Source: `delete window.PushManager;`})
			}
			b.signIn(adaEmail, adaPassword)
			if got := eval[bool](b, `window.isSecureContext`); got != tt.secure {
				t.Fatalf("%s: secure context %v, want %v", tt.env.base, got, tt.secure)
			}
			b.openView("devices")
			b.waitFor("the control, unsupported", `document.querySelector("#notifications-control").dataset.state === "unsupported"`)
			if got := b.text("#notifications-control .notify-status"); !strings.HasPrefix(got, tt.want) {
				t.Errorf("status = %q, want it to start %q", got, tt.want)
			}
			if b.shown("#notifications-control button") || eval[bool](b, `!!document.querySelector("#notifications-hint-root .notify-hint")`) {
				t.Error("a way to turn notifications on is offered where the browser has none")
			}
			b.screenshot(tt.shot)
		})
	}
}

// getFile fetches one of the web app's files. They are the admin UI, not
// the API, so the exchange is not checked against docs/openapi.json.
func getFile(t *testing.T, e *env, path string) testkit.Response {
	t.Helper()
	res, err := e.http.Get(e.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return testkit.Response{Status: res.StatusCode, Header: res.Header, Raw: raw}
}
