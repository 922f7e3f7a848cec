package delivery

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/push"
	"github.com/heraldhq/herald/store"
)

// guardedWeb is the Web Push provider as serve builds it: over a guarded
// client with policy.
func (f *pwFakes) guardedWeb(policy netguard.Policy) *push.Dispatcher {
	return push.NewDispatcher(nil, nil,
		push.NewWebPush("mailto:ops@example.com", f.vapidPub, f.vapidPriv, policy.Client(5*time.Second)))
}

// webDevice registers a web device of u whose endpoint is endpoint.
func (e *pwEnv) webDevice(u *store.User, name, endpoint string) *store.Device {
	e.t.Helper()
	sub := strings.Replace(e.fakes.subscription("/x"), e.fakes.web.URL+"/x", endpoint, 1)
	d := &store.Device{UserID: u.ID, Platform: "web", Name: name, PushToken: sub}
	if err := e.st.RegisterDevice(context.Background(), d); err != nil {
		e.t.Fatal(err)
	}
	return d
}

// TestPusherWebPushBlockedNetwork: a browser endpoint on loopback, blocked
// by default, is never dialled, and its device is deactivated, not retried.
func TestPusherWebPushBlockedNetwork(t *testing.T) {
	e := newPWEnv(t)
	port := e.fakes.web.URL[strings.LastIndex(e.fakes.web.URL, ":"):]
	var devices []*store.Device
	for _, host := range []string{"127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "127.0.0.2", "0.0.0.0"} {
		devices = append(devices, e.webDevice(e.ann, host, "http://"+host+port+"/push/internal"))
	}
	e.run(e.fakes.guardedWeb(netguard.Policy{}))

	e.message("Disk full")
	e.waitIdle("every device deactivated", func() bool {
		for _, d := range devices {
			if e.active(d) {
				return false
			}
		}
		return true
	})
	if got := e.fakes.total(); got != 0 {
		t.Errorf("the push service in a blocked network got %d requests, want 0: %v", got, e.fakes.snapshot())
	}
}

// TestPusherWebPushRedirectNotFollowed: an endpoint that answers 3xx is not
// followed, to another host or the same one, and the push counts as failed.
func TestPusherWebPushRedirectNotFollowed(t *testing.T) {
	e := newPWEnv(t)
	var hits atomic.Int32
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		// Only loopback targets: were the redirect followed, nothing
		// must leave this machine.
		target := e.fakes.web.URL + "/push/elsewhere"
		if r.URL.Path == "/push/by-name" {
			target = strings.Replace(target, "127.0.0.1", "localhost", 1)
		}
		http.Redirect(w, r, target, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	byAddr := e.webDevice(e.ann, "by-addr", redirector.URL+"/push/by-addr")
	byName := e.webDevice(e.ann, "by-name", redirector.URL+"/push/by-name")
	e.run(e.fakes.guardedWeb(netguard.Policy{AllowLoopback: true}))

	e.message("Disk full")
	e.waitIdle("both pushes tried", func() bool { return hits.Load() >= 2 })
	time.Sleep(50 * time.Millisecond) // a followed redirect would land by now
	if got := hits.Load(); got != 2 {
		t.Errorf("the redirecting endpoint got %d requests, want 2 (one per device, no retry)", got)
	}
	if got := e.fakes.total(); got != 0 {
		t.Errorf("the redirect target got %d requests, want 0: %v", got, e.fakes.snapshot())
	}
	if !e.active(byAddr) || !e.active(byName) {
		t.Error("a device whose endpoint redirected was deactivated")
	}
}

// TestPusherWebPushUnusableKeyDeactivates: a stored subscription whose
// p256dh is not a point on the curve (saved before registrations were
// checked) can never be encrypted to: its device is deactivated at the
// first push, not retried, and the other browser still gets its push.
func TestPusherWebPushUnusableKeyDeactivates(t *testing.T) {
	e := newPWEnv(t)
	offCurve := make([]byte, 65)
	offCurve[0], offCurve[32], offCurve[64] = 4, 1, 1
	good := e.fakes.subscription("/push/bad")
	var sub map[string]any
	if err := json.Unmarshal([]byte(good), &sub); err != nil {
		t.Fatal(err)
	}
	sub["keys"].(map[string]any)["p256dh"] = base64.RawURLEncoding.EncodeToString(offCurve)
	token, _ := json.Marshal(sub)
	bad := &store.Device{UserID: e.ann.ID, Platform: "web", Name: "broken", PushToken: string(token)}
	if err := e.st.RegisterDevice(context.Background(), bad); err != nil {
		t.Fatal(err)
	}
	ok, key := e.device(e.ann, "web", "fine")
	e.run(e.fakes.dispatcher(false, false, true))

	id := e.message("Disk full")
	e.waitIdle("the broken device deactivated", func() bool { return !e.active(bad) })
	e.wantPushes(key, id)
	if got := e.fakes.pushes("web:/push/bad"); len(got) != 0 {
		t.Errorf("the push service got %v for the unusable subscription, want nothing", got)
	}
	if !e.active(ok) {
		t.Error("the good device was deactivated")
	}
}
