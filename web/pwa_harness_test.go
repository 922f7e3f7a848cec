package web_test

// The harness of the installable app's browser tests (pwa_test.go): a
// Herald whose push worker sends to a local Web Push service, and what the
// tests do through the DevTools protocol.

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
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/heraldhq/herald/delivery"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/push"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
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
	svc := service.New(p.st, service.Options{BaseURL: p.base})
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
		delivery.PushConfig{Workers: 1, AnswerKey: key, ImageLink: func(ctx context.Context, m *store.Message, a *store.AttachmentInfo) (string, error) {
			// As herald serve links a stored picture: signed, its thumbnail when it has one.
			link, _, err := svc.AttachmentLink(ctx, m.CreatedAt, a, a.Thumbnail)
			return link, err
		}}, quiet)
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
	var ns []shownNotification
	testkit.Eventually(b.t, waitTimeout, func() error {
		if ns = b.notifications(tag); len(ns) != 1 || !strings.Contains(ns[0].Body, text) {
			return fmt.Errorf("no notification %s with %q; shown: %+v", tag, text, ns)
		}
		return nil
	})
	return ns[0]
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

// pushNotification delivers payload as a push and waits for the
// notification tag with text that the service worker shows for it.
// DevTools answers deliverPushMessage before the worker has the event, and
// once in a full CI run no notification followed (the test alone passed
// every time); a push that shows nothing within pushRetry is delivered once
// more. The worker shows a push by its tag, so a second
// delivery replaces the first notification rather than adding one.
func (b *browser) pushNotification(reg serviceworker.RegistrationID, payload []byte, tag, text string) shownNotification {
	b.t.Helper()
	const pushRetry = 5 * time.Second
	b.deliverPush(reg, payload)
	for deadline := time.Now().Add(pushRetry); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ns := b.notifications(tag); len(ns) == 1 && strings.Contains(ns[0].Body, text) {
			return ns[0]
		}
	}
	b.t.Logf("no notification %s %v after the push: delivering it again", tag, pushRetry)
	b.deliverPush(reg, payload)
	return b.waitNotification(tag, text)
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
	var payload []byte
	testkit.Eventually(p.t, waitTimeout, func() error {
		got := p.pushes.Payloads(path)
		for _, raw := range got {
			var m struct {
				Type      string `json:"type"`
				MessageID string `json:"message_id"`
			}
			_ = json.Unmarshal(raw, &m)
			if m.Type == typ && m.MessageID == id {
				payload = raw
				return nil
			}
		}
		return fmt.Errorf("no %s push about %s for %s among %d", typ, id, path, len(got))
	})
	return payload
}

func (p *pwa) waitCallback(messageID string) map[string]any {
	p.t.Helper()
	var found map[string]any
	testkit.Eventually(p.t, waitTimeout, func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, cb := range p.callbacks {
			if cb["message_id"] == messageID {
				found = cb
				return nil
			}
		}
		return fmt.Errorf("no callback for %s", messageID)
	})
	return found
}
