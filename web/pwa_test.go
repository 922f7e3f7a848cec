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
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/heraldhq/herald/delivery"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/push"
	"github.com/heraldhq/herald/service"
)

// shotsDir receives the screenshots for a person to look at.
const shotsDir = "/tmp/shots-pwa"

// pwa is a Herald with its push worker and callback queue running, a local
// Web Push service and a callback receiver.
type pwa struct {
	*env
	pushes *testkit.PushService

	mu        sync.Mutex
	callbacks []map[string]any
	hook      string
}

func newPWA(t *testing.T) *pwa {
	t.Helper()
	p := &pwa{env: newEnv(t), pushes: testkit.NewPushService(t)}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		_ = json.NewDecoder(r.Body).Decode(&ev)
		p.mu.Lock()
		p.callbacks = append(p.callbacks, ev)
		p.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	p.hook = rcv.URL + "/hook"

	ctx := context.Background()
	svc := service.New(p.st, service.Options{})
	pub, priv, err := svc.VAPIDKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key, err := svc.NotificationKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	quiet := delivery.Options{Logger: slog.New(slog.DiscardHandler)}
	pusher := delivery.NewPusher(p.st, push.NewDispatcher(nil, nil, push.NewWebPush("mailto:ops@example.com", pub, priv, p.pushes.Client())),
		delivery.PushConfig{Workers: 1, AnswerKey: key}, quiet)
	queue := delivery.New(p.st, delivery.Config{Workers: 1, Timeout: 5 * time.Second, BackoffBase: time.Second,
		BackoffMax: time.Minute, MaxAttempts: 8, UserAgent: "Herald-Webhooks/test", Guard: netguard.Policy{AllowLoopback: true}}, quiet)
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = pusher.Run(wctx) }()
	go func() { defer wg.Done(); _ = queue.Run(wctx) }()
	t.Cleanup(func() { stop(); wg.Wait() })
	return p
}

// fakeSubscriptionJS replaces the browser's PushManager subscribe and
// getSubscription with a subscription of the local push service; it keeps
// the subscribed key in localStorage, as a browser keeps its subscription.
func fakeSubscriptionJS(subscription string) string {
	return `(() => {
	const SUB = ` + subscription + `;
	const KEY = 'test.fake-subscription';
	const make = (key) => ({ endpoint: SUB.endpoint, options: { applicationServerKey: key, userVisibleOnly: true },
		toJSON: () => SUB, unsubscribe: async () => { localStorage.removeItem(KEY); return true; } });
	PushManager.prototype.subscribe = async function (opts) {
		const k = new Uint8Array(opts.applicationServerKey instanceof ArrayBuffer ? opts.applicationServerKey : opts.applicationServerKey.buffer);
		localStorage.setItem(KEY, btoa(String.fromCharCode(...k)));
		return make(k.buffer);
	};
	PushManager.prototype.getSubscription = async function () {
		const s = localStorage.getItem(KEY);
		return s ? make(Uint8Array.from(atob(s), (c) => c.charCodeAt(0)).buffer) : null;
	};
})();`
}

// call runs a DevTools command on the tab.
func call[P, R any](b *browser, what string, cmd cdp.Command[P, R], params P) R {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	r, err := chromedp.Call(ctx, cmd, params)
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	return r
}

// setNotifications sets the notification permission of the server's origin.
func (b *browser) setNotifications(setting cdpbrowser.PermissionSetting) {
	b.t.Helper()
	call(b, "Browser.setPermission", cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
		Permission: &cdpbrowser.PermissionDescriptor{Name: "notifications"}, Setting: setting, Origin: b.e.base})
}

// waitWorker waits until the service worker controls the page and returns
// its scope.
func (b *browser) waitWorker() string {
	b.t.Helper()
	b.waitFor("the service worker controls the page", `!!navigator.serviceWorker.controller`)
	return awaitJS[string](b, `navigator.serviceWorker.ready.then((r) => r.scope)`)
}

// screenshot saves the page as name.png under shotsDir.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(shotsDir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shotsDir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// shown is what registration.getNotifications() reports of one
// notification.
type shownNotification struct {
	Title              string `json:"title"`
	Body               string `json:"body"`
	Tag                string `json:"tag"`
	RequireInteraction bool   `json:"requireInteraction"`
	Silent             bool   `json:"silent"`
	Renotify           bool   `json:"renotify"`
	Icon               string `json:"icon"`
	Badge              string `json:"badge"`
	Actions            []struct {
		Action string `json:"action"`
		Title  string `json:"title"`
	} `json:"actions"`
}

func (b *browser) notifications(tag string) []shownNotification {
	b.t.Helper()
	return awaitJS[[]shownNotification](b, `navigator.serviceWorker.ready.then((r) => r.getNotifications({tag: `+js(tag)+`})).then((ns) =>
		ns.map((n) => ({title: n.title, body: n.body, tag: n.tag, requireInteraction: n.requireInteraction, silent: n.silent,
			renotify: n.renotify, icon: n.icon, badge: n.badge, actions: n.actions.map((a) => ({action: a.action, title: a.title}))})))`)
}

// waitNotification waits until the notification tagged tag shows a body
// containing text.
func (b *browser) waitNotification(tag, text string) shownNotification {
	b.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		ns := b.notifications(tag)
		if len(ns) == 1 && strings.Contains(ns[0].Body, text) {
			return ns[0]
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("no notification %s with %q; shown: %+v", tag, text, ns)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// registrationID returns the DevTools id of the service worker registration
// at the root scope.
func (b *browser) registrationID() serviceworker.RegistrationID {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	events := chromedp.Events(ctx, serviceworker.WorkerRegistrationUpdated)
	if _, err := chromedp.Call(ctx, serviceworker.Enable, cdp.Empty{}); err != nil {
		b.t.Fatalf("ServiceWorker.enable: %v", err)
	}
	for ev, err := range events {
		if err != nil {
			b.t.Fatalf("no service worker registration reported: %v", err)
		}
		for _, r := range ev.Registrations {
			if r.ScopeURL == b.e.base+"/" && !r.IsDeleted {
				return r.RegistrationID
			}
		}
	}
	b.t.Fatal("no service worker registration reported")
	return ""
}

// deliverPush hands payload to the service worker as a push event.
func (b *browser) deliverPush(reg serviceworker.RegistrationID, payload []byte) {
	b.t.Helper()
	call(b, "ServiceWorker.deliverPushMessage", serviceworker.DeliverPushMessage,
		serviceworker.DeliverPushMessageParams{Origin: b.e.base, RegistrationID: reg, Data: string(payload)})
}

// inWorker evaluates a promise-valued expression in the service worker.
// chromedp attaches to the worker's target like to an iframe's.
func inWorker[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	infos, err := chromedp.Targets(ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	var id target.ID
	for _, info := range infos {
		if info.Type == "service_worker" && info.URL == b.e.base+"/sw.js" {
			id = info.TargetID
		}
	}
	if id == "" {
		b.t.Fatalf("no service worker target among %d targets", len(infos))
	}
	wctx, wcancel := chromedp.NewContext(ctx, chromedp.WithTargetID(id))
	defer wcancel()
	v, err := chromedp.Run(wctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate in the service worker: %v", err)
	}
	return v
}

// clickAction runs the service worker's notificationclick handler, as the
// platform does when a person taps action on the notification tagged tag,
// and waits for what it started. DevTools cannot click a notification, and a
// synthetic NotificationEvent's waitUntil throws (it is not trusted), so
// the handler gets the real Notification and an event that collects its
// waitUntil promises.
func (b *browser) clickAction(tag, action string) {
	b.t.Helper()
	ok := inWorker[bool](b, `(async () => {
		const [n] = await self.registration.getNotifications({tag: `+js(tag)+`});
		if (!n) return false;
		const waits = [];
		onNotificationClick({notification: n, action: `+js(action)+`, waitUntil: (p) => waits.push(p)});
		await Promise.all(waits);
		return true;
	})()`)
	if !ok {
		b.t.Fatalf("no notification %s to click", tag)
	}
}

// waitPayload waits for the push of type typ ("message" or "update") about
// message id at path, and returns it as the push service decrypted it.
func (p *pwa) waitPayload(path, typ, id string) []byte {
	p.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		got := p.pushes.Payloads(path)
		for _, raw := range got {
			var m struct {
				Type      string `json:"type"`
				MessageID string `json:"message_id"`
			}
			_ = json.Unmarshal(raw, &m)
			if m.Type == typ && m.MessageID == id {
				return raw
			}
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no %s push about %s for %s among %d", typ, id, path, len(got))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *pwa) waitCallback(messageID string) map[string]any {
	p.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		p.mu.Lock()
		for _, cb := range p.callbacks {
			if cb["message_id"] == messageID {
				p.mu.Unlock()
				return cb
			}
		}
		p.mu.Unlock()
		if time.Now().After(deadline) {
			p.t.Fatalf("no callback for %s", messageID)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

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
		"/notify.js":                  "text/javascript; charset=utf-8",
		"/pwa.js":                     "text/javascript; charset=utf-8",
		"/sw-register.js":             "text/javascript; charset=utf-8",
		"/notify.css":                 "text/css; charset=utf-8",
		"/icons/badge-96.png":         "image/png",
	} {
		r := testkit.Do(t, e.http, http.MethodGet, e.base+path, nil, "")
		if r.Status != http.StatusOK || r.Header.Get("Content-Type") != want {
			t.Errorf("GET %s: %d %q, want 200 %q", path, r.Status, r.Header.Get("Content-Type"), want)
		}
	}
	r := testkit.Do(t, e.http, http.MethodGet, e.base+"/", nil, "")
	csp := r.Header.Get("Content-Security-Policy")
	if csp != "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; worker-src 'self'; manifest-src 'self'; frame-ancestors 'none'" {
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
	if err := json.Unmarshal(testkit.Do(t, e.http, http.MethodGet, e.base+"/manifest.webmanifest", nil, "").Raw, &manifest); err != nil {
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
	b.waitFor("the notifications hint", shownJS("#notifications-hint .notify-hint"))
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
	if b.shown("#notifications-hint .notify-hint") {
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
	if got := awaitJS[string](b, `import("/notify.js").then((n) => n.thisBrowserDeviceId())`); got != devID {
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
	b.deliverPush(reg, payload)
	tag := "herald-" + msg
	n := b.waitNotification(tag, "Latency is up 300%")
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
	b.deliverPush(reg, p.waitPayload("/push/ada", "message", other))
	if n := b.waitNotification("herald-"+other, "Deploys"); !n.Silent || n.RequireInteraction || len(n.Actions) != 1 {
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
	b.deliverPush(reg, update)
	if n := b.waitNotification("herald-"+other, "Answered elsewhere."); len(n.Actions) != 0 {
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
	deadline := time.Now().Add(waitTimeout)
	for !awaitJS[bool](b, `caches.open("herald-shell-v1").then(async (c) => !!(await c.match("/")) && !!(await c.match("/app.js")) && !!(await c.match("/notify.js")))`) {
		if time.Now().After(deadline) {
			t.Fatal("the service worker kept no shell")
		}
		time.Sleep(50 * time.Millisecond)
	}
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
	if b.shown("#notifications-hint .notify-hint") {
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
			if b.shown("#notifications-control button") || b.shown("#notifications-hint .notify-hint") {
				t.Error("a way to turn notifications on is offered where the browser has none")
			}
			b.screenshot(tt.shot)
		})
	}
}
