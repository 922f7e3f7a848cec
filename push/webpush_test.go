package push

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// browser is a subscribed browser: its ECDH key pair and auth secret.
type browser struct {
	key  *ecdh.PrivateKey
	auth []byte
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	if _, err := rand.Read(auth); err != nil {
		t.Fatal(err)
	}
	return &browser{key: key, auth: auth}
}

// subscription is the PushSubscription JSON the browser hands the app.
func (b *browser) subscription(endpoint string) string {
	s, _ := json.Marshal(map[string]any{"endpoint": endpoint, "keys": map[string]string{
		"p256dh": base64.RawURLEncoding.EncodeToString(b.key.PublicKey().Bytes()),
		"auth":   base64.RawURLEncoding.EncodeToString(b.auth),
	}})
	return string(s)
}

// decrypt opens a push encrypted for this browser (RFC 8291, RFC 8188).
func (b *browser) decrypt(body []byte) ([]byte, error) {
	return testkit.DecryptWebPush(b.key, b.auth, body)
}

// webPushRequest is one push the fake push service received, decrypted.
type webPushRequest struct {
	Path    string
	Header  http.Header
	Payload map[string]any
}

// fakePushService is a browser vendor's push endpoint: it checks VAPID and
// decrypts every payload with the browser's keys.
type fakePushService struct {
	t       *testing.T
	srv     *httptest.Server
	browser *browser
	vapid   *ecdsa.PublicKey
	vapidK  string

	mu     sync.Mutex
	reqs   []webPushRequest
	status int // 0 is 201
}

func newFakePushService(t *testing.T) (*fakePushService, *WebPush) {
	t.Helper()
	priv, pub, err := GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.RawURLEncoding.DecodeString(pub)
	if err != nil {
		t.Fatalf("VAPID public key %q is not base64url: %v", pub, err)
	}
	vapid, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
	if err != nil {
		t.Fatalf("VAPID public key is not a P-256 point: %v", err)
	}
	f := &fakePushService{t: t, browser: newBrowser(t), vapid: vapid, vapidK: pub}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f, NewWebPush("mailto:ops@example.com", pub, priv, f.srv.Client())
}

func (f *fakePushService) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		f.t.Errorf("push service got %s, want POST", r.Method)
	}
	if err := f.checkVAPID(r.Header.Get("Authorization")); err != nil {
		f.t.Errorf("VAPID: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if got := r.Header.Get("Content-Encoding"); got != "aes128gcm" {
		f.t.Errorf("Content-Encoding = %q, want aes128gcm", got)
	}
	body, _ := io.ReadAll(r.Body)
	plain, err := f.browser.decrypt(body)
	if err != nil {
		f.t.Errorf("decrypt: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var payload map[string]any
	if err := json.Unmarshal(plain, &payload); err != nil {
		f.t.Errorf("decrypted payload %q is not JSON: %v", plain, err)
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, webPushRequest{Path: r.URL.Path, Header: r.Header.Clone(), Payload: payload})
	status := f.status
	f.mu.Unlock()
	if status == 0 {
		status = http.StatusCreated
	}
	w.WriteHeader(status)
}

// checkVAPID verifies "vapid t=<JWT>, k=<public key>" (RFC 8292).
func (f *fakePushService) checkVAPID(h string) error {
	rest, ok := strings.CutPrefix(h, "vapid t=")
	if !ok {
		return fmt.Errorf("Authorization %q, want vapid t=..., k=...", h)
	}
	tok, k, ok := strings.Cut(rest, ", k=")
	if !ok {
		return fmt.Errorf("Authorization %q has no k=", h)
	}
	if k != f.vapidK {
		return fmt.Errorf("k = %q, want the VAPID public key %q", k, f.vapidK)
	}
	header, claims, err := verifyES256(tok, f.vapid)
	if err != nil {
		return err
	}
	if header["alg"] != "ES256" {
		return fmt.Errorf("alg = %v, want ES256", header["alg"])
	}
	if got, want := claims["aud"], f.srv.URL; got != want { // the endpoint's origin
		return fmt.Errorf("aud = %v, want %q", got, want)
	}
	if got, want := claims["sub"], "mailto:ops@example.com"; got != want {
		return fmt.Errorf("sub = %v, want %q", got, want)
	}
	exp, _ := claims["exp"].(float64)
	if at := time.Unix(int64(exp), 0); !at.After(time.Now()) || at.After(time.Now().Add(24*time.Hour)) {
		return fmt.Errorf("exp %v is not within the next 24 hours", claims["exp"])
	}
	return nil
}

func (f *fakePushService) answer(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status = status
}

func (f *fakePushService) last() webPushRequest {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		f.t.Fatal("the push service got no push")
	}
	return f.reqs[len(f.reqs)-1]
}

func TestWebPushSendByPriority(t *testing.T) {
	f, wp := newFakePushService(t)
	sub := f.browser.subscription(f.srv.URL + "/push/v2/abc123")
	for _, priority := range []string{"high", "normal", "low"} {
		t.Run(priority, func(t *testing.T) {
			n := Notification{MessageID: "msg_" + priority, ChannelID: "ch_web", Title: "Cert " + priority,
				Body: "The **TLS** cert of `example.com` expires in *3 days*", Priority: priority,
				Actions: json.RawMessage(apnsTestActions)}
			if err := wp.Send(context.Background(), sub, n); err != nil {
				t.Fatalf("Send: %v", err)
			}
			r := f.last()
			if got, want := r.Path, "/push/v2/abc123"; got != want {
				t.Errorf("path = %q, want %q", got, want)
			}
			if got := r.Header.Get("Urgency"); got != priority {
				t.Errorf("Urgency = %q, want %q", got, priority)
			}
			if got := r.Header.Get("TTL"); got == "" || got == "0" {
				t.Errorf("TTL = %q, want a positive number of seconds", got)
			}
			want := map[string]any{"type": "message", "message_id": n.MessageID, "channel_id": n.ChannelID, "title": n.Title,
				"body": "The TLS cert of example.com expires in 3 days", "priority": priority, "tag": "herald-" + n.MessageID,
				"actions": decodeJSON(t, apnsTestActions)}
			if !reflect.DeepEqual(r.Payload, want) {
				t.Errorf("decrypted payload = %v\nwant %v", r.Payload, want)
			}
		})
	}
}

func TestWebPushErrors(t *testing.T) {
	f, wp := newFakePushService(t)
	sub := f.browser.subscription(f.srv.URL + "/push/1")
	tests := []struct {
		status        int
		wantErr       bool
		wantPermanent bool
		wantRetryable bool
	}{
		{201, false, false, false},
		{200, false, false, false},
		{404, true, true, false},
		{410, true, true, false},
		{429, true, false, true},
		{500, true, false, true},
		{503, true, false, true},
		{400, true, false, false},
		{413, true, false, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			f.answer(tt.status)
			err := wp.Send(context.Background(), sub, Notification{MessageID: "msg_x", Title: "t", Priority: "normal"})
			if (err != nil) != tt.wantErr {
				t.Fatalf("Send answered %d: err = %v, want error %v", tt.status, err, tt.wantErr)
			}
			if got := IsPermanent(err); got != tt.wantPermanent {
				t.Errorf("IsPermanent(%v) = %v, want %v", err, got, tt.wantPermanent)
			}
			if got := IsRetryable(err); got != tt.wantRetryable {
				t.Errorf("IsRetryable(%v) = %v, want %v", err, got, tt.wantRetryable)
			}
			if got := IsThrottled(err); got != (tt.status == 429) {
				t.Errorf("IsThrottled(%v) = %v", err, got)
			}
		})
	}
}

// TestWebPushEndpoint: the endpoint of a browser's subscription, from a web
// device's token; nothing from a token that is not one.
func TestWebPushEndpoint(t *testing.T) {
	for token, want := range map[string]string{
		`{"endpoint":"https://push.example/send/abc","keys":{"p256dh":"x","auth":"y"}}`: "https://push.example/send/abc",
		`{"keys":{}}`:       "",
		`apns-device-token`: "",
	} {
		if got := WebPushEndpoint(token); got != want {
			t.Errorf("WebPushEndpoint(%s) = %q, want %q", token, got, want)
		}
	}
}

// TestWebPushConnectionErrorHidesEndpoint: the endpoint's path is the
// subscription's capability, so a failed connection's error (which is
// logged) names the host only, and stays retryable with its cause.
func TestWebPushConnectionErrorHidesEndpoint(t *testing.T) {
	f, wp := newFakePushService(t)
	endpoint := f.srv.URL + "/push/capability-d41d8cd9?auth=query-secret"
	f.srv.Close() // nothing listens there now
	err := wp.Send(context.Background(), f.browser.subscription(endpoint), Notification{MessageID: "msg_x", Title: "t", Priority: "normal"})
	if err == nil {
		t.Fatal("Send to a closed port succeeded")
	}
	if msg := err.Error(); strings.Contains(msg, "capability-d41d8cd9") || strings.Contains(msg, "query-secret") {
		t.Errorf("error %q shows the endpoint's path or query", msg)
	}
	if msg := err.Error(); !strings.Contains(msg, f.srv.URL) {
		t.Errorf("error %q does not name the push service %s", msg, f.srv.URL)
	}
	var op *net.OpError
	if !errors.As(err, &op) || !IsRetryable(err) {
		t.Errorf("error %v: want a retryable one wrapping the *net.OpError", err)
	}
}

// TestWebPushRedirectNotFollowed: even the provider's default client
// answers a 3xx as a failure rather than following it.
func TestWebPushRedirectNotFollowed(t *testing.T) {
	f, _ := newFakePushService(t)
	priv, pub, err := GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int32
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, f.srv.URL+"/push/1", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	wp := NewWebPush("mailto:ops@example.com", pub, priv, nil)
	err = wp.Send(context.Background(), f.browser.subscription(redirector.URL+"/push/1"), Notification{MessageID: "msg_x", Title: "t", Priority: "normal"})
	var pe *Error
	if !errors.As(err, &pe) || pe.Status != http.StatusTemporaryRedirect || pe.Permanent || pe.Retryable {
		t.Errorf("Send to a redirecting endpoint: %v, want a failure with status 307, neither permanent nor retryable", err)
	}
	f.mu.Lock()
	followed := len(f.reqs)
	f.mu.Unlock()
	if followed != 0 || hits.Load() != 1 {
		t.Errorf("the redirect target got %d requests and the endpoint %d, want 0 and 1", followed, hits.Load())
	}
}

func TestWebPushBadSubscriptionIsPermanent(t *testing.T) {
	_, wp := newFakePushService(t)
	err := wp.Send(context.Background(), "not json", Notification{MessageID: "msg_x", Title: "t", Priority: "normal"})
	if !IsPermanent(err) {
		t.Fatalf("Send to a token that is not a subscription: %v, want a permanent error", err)
	}
}

func TestWebPushLongBodyFitsOneRecord(t *testing.T) {
	f, wp := newFakePushService(t)
	sub := f.browser.subscription(f.srv.URL + "/push/1")
	body := strings.Repeat("日本", 1000) // 6000 bytes of three-byte runes
	if err := wp.Send(context.Background(), sub, Notification{MessageID: "msg_long", Title: "t", Body: body, Priority: "low"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got, _ := f.last().Payload["body"].(string)
	if !strings.HasSuffix(got, "…") || !strings.HasPrefix(body, strings.TrimSuffix(got, "…")) {
		t.Errorf("body of %d bytes is not a prefix of the original ending in …", len(got))
	}
}

// TestVAPIDKeysArePoints checks the generated pair: a 65-byte uncompressed
// P-256 public key and the 32-byte private scalar that produces it.
func TestVAPIDKeysArePoints(t *testing.T) {
	priv, pub, err := GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	p, err := base64.RawURLEncoding.DecodeString(pub)
	if err != nil || len(p) != 65 || p[0] != 0x04 {
		t.Fatalf("public key %q: %d bytes (err %v), want 65 bytes starting 0x04", pub, len(p), err)
	}
	d, err := base64.RawURLEncoding.DecodeString(priv)
	if err != nil || len(d) != 32 {
		t.Fatalf("private key: %d bytes (err %v), want 32", len(d), err)
	}
	k, err := ecdh.P256().NewPrivateKey(d)
	if err != nil {
		t.Fatalf("private key: %v", err)
	}
	if !bytes.Equal(k.PublicKey().Bytes(), p) {
		t.Fatal("the public key does not belong to the private key")
	}
}
