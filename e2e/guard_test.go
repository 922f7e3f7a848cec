package e2e

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// These tests check that herald serve sends what users aim at (callback
// URLs, Web Push endpoints) through the dial-time guard.

// guardListener is a TCP listener on 127.0.0.1 that counts the connections
// it accepts and closes each at once.
type guardListener struct {
	net.Listener
	accepted atomic.Int32
}

func newGuardListener(t *testing.T) *guardListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &guardListener{Listener: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			g.accepted.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return g
}

func (g *guardListener) port() int { return g.Addr().(*net.TCPAddr).Port }

// webSubscription is a browser's PushSubscription JSON for endpoint, with
// real keys so that the push gets as far as dialling.
func webSubscription(t *testing.T, endpoint string) string {
	t.Helper()
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	_, _ = rand.Read(auth)
	b, _ := json.Marshal(map[string]any{"endpoint": endpoint, "keys": map[string]string{
		"p256dh": base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes()),
		"auth":   base64.RawURLEncoding.EncodeToString(auth)}})
	return string(b)
}

// TestServeGuardsWebPush: a web device whose endpoint is on loopback,
// blocked by default, is never dialled, and is deactivated.
func TestServeGuardsWebPush(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	ln := newGuardListener(t)
	s := startHerald(t, 30*time.Second, t.TempDir(), "HERALD_PLANS_FREE_API_PER_MINUTE=1000000")
	token, hook := crashSetup(t, s)
	endpoint := fmt.Sprintf("https://127.0.0.1:%d/push/v2/abc", ln.port())
	dev, _ := s.must(t, 201, "POST", "/v1/devices", map[string]string{"platform": "web", "name": "internal",
		"push_token": webSubscription(t, endpoint)}, token)["id"].(string)
	s.must(t, 200, "POST", "/v1/send/"+hook, map[string]any{"title": "Disk full"}, "")

	waitDeactivated(t, s, token, dev, ln)
	if got := ln.accepted.Load(); got != 0 {
		t.Errorf("the endpoint in a blocked network got %d connections, want 0", got)
	}
}

// waitDeactivated waits until device dev is inactive.
func waitDeactivated(t *testing.T, s *heraldProc, token, dev string, ln *guardListener) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		active := true
		for _, d := range s.must(t, 200, "GET", "/v1/devices", nil, token)["devices"].([]any) {
			if d := d.(map[string]any); d["id"] == dev {
				active, _ = d["active"].(bool)
			}
		}
		if !active {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the web device in a blocked network is still active after 20s (endpoint got %d connections)", ln.accepted.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeBlockedNetworks: delivery.blocked_networks reaches both the
// callbacks and the Web Push dispatcher. Loopback is allowed, so only the
// operator's list can refuse the listener on 127.0.0.1: a send whose
// callback_url names it is refused at once, with the setting named, the
// web device is deactivated, and the listener gets no connection from
// either. (A name that resolves into the list is refused at dial time:
// server/callbacks_test.go's TestCallbackBlockedNetwork.)
func TestServeBlockedNetworks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	ln := newGuardListener(t)
	s := startHerald(t, 30*time.Second, t.TempDir(), "HERALD_PLANS_FREE_API_PER_MINUTE=1000000",
		"HERALD_DELIVERY_ALLOW_LOOPBACK=true", "HERALD_DELIVERY_BLOCKED_NETWORKS=127.0.0.0/8")
	token, hook := crashSetup(t, s)
	endpoint := fmt.Sprintf("https://127.0.0.1:%d/push/v2/abc", ln.port())
	dev, _ := s.must(t, 201, "POST", "/v1/devices", map[string]string{"platform": "web", "name": "internal",
		"push_token": webSubscription(t, endpoint)}, token)["id"].(string)
	refused := s.must(t, 400, "POST", "/v1/send/"+hook, map[string]any{"title": "Deploy?",
		"callback_url": fmt.Sprintf("http://127.0.0.1:%d/hook", ln.port()),
		"actions":      []any{map[string]string{"type": "button", "label": "OK", "key": "ok"}}}, "")
	if msg, _ := refused["message"].(string); refused["error"] != "invalid_payload" ||
		msg != "callback_url is refused: 127.0.0.1 is in delivery.blocked_networks, which callbacks may not reach" {
		t.Errorf("send with a callback_url in blocked_networks: %v", refused)
	}
	s.must(t, 200, "POST", "/v1/send/"+hook, map[string]any{"title": "Pushed"}, "")
	waitDeactivated(t, s, token, dev, ln)
	if got := ln.accepted.Load(); got != 0 {
		t.Errorf("the listener in blocked_networks got %d connections, want 0", got)
	}
}
