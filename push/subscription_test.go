package push

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// offCurve is 65 bytes in the uncompressed form of a P-256 point that is
// not on the curve (x = 1, y = 1).
func offCurve() []byte {
	p := make([]byte, 65)
	p[0], p[32], p[64] = 0x04, 1, 1
	return p
}

// subscriptionWith is a PushSubscription JSON with these fields.
func subscriptionWith(endpoint, p256dh, auth string) string {
	b, _ := json.Marshal(map[string]any{"endpoint": endpoint, "keys": map[string]string{"p256dh": p256dh, "auth": auth}})
	return string(b)
}

// TestCheckSubscription: a subscription registers only with an https
// endpoint, a p256dh that is an uncompressed P-256 point on the curve and
// an auth secret of 16 bytes, all base64url; the error names the field.
func TestCheckSubscription(t *testing.T) {
	t.Parallel()
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	point := key.PublicKey().Bytes()
	good, auth := enc.EncodeToString(point), enc.EncodeToString(make([]byte, 16))
	const endpoint = "https://fcm.googleapis.com/fcm/send/abc"
	for _, ok := range []string{
		subscriptionWith(endpoint, good, auth),
		subscriptionWith(endpoint, base64.URLEncoding.EncodeToString(point), base64.URLEncoding.EncodeToString(make([]byte, 16))),
	} {
		if err := CheckSubscription(ok); err != nil {
			t.Errorf("CheckSubscription(%s) = %v, want nil", ok, err)
		}
	}
	compressed := append([]byte{0x02 | point[64]&1}, point[1:33]...)
	for _, tc := range []struct{ sub, field string }{
		{subscriptionWith("http://push.example.com/x", good, auth), "endpoint"},
		{subscriptionWith("https:///x", good, auth), "endpoint"},
		{subscriptionWith("https://user:pw@push.example.com/x", good, auth), "endpoint"},
		{subscriptionWith("push.example.com/x", good, auth), "endpoint"},
		{subscriptionWith(endpoint, "", auth), "keys.p256dh"},
		{subscriptionWith(endpoint, "not base64!", auth), "keys.p256dh"},
		{subscriptionWith(endpoint, base64.StdEncoding.EncodeToString(append([]byte{0xfb, 0xff}, point...)), auth), "keys.p256dh"},
		{subscriptionWith(endpoint, enc.EncodeToString(offCurve()), auth), "keys.p256dh"},
		{subscriptionWith(endpoint, enc.EncodeToString(compressed), auth), "keys.p256dh"},
		{subscriptionWith(endpoint, enc.EncodeToString(point[:64]), auth), "keys.p256dh"},
		{subscriptionWith(endpoint, good, ""), "keys.auth"},
		{subscriptionWith(endpoint, good, "!!"), "keys.auth"},
		{subscriptionWith(endpoint, good, enc.EncodeToString(make([]byte, 15))), "keys.auth"},
		{subscriptionWith(endpoint, good, enc.EncodeToString(make([]byte, 32))), "keys.auth"},
	} {
		var se *SubscriptionError
		if err := CheckSubscription(tc.sub); !errors.As(err, &se) || se.Field != tc.field {
			t.Errorf("CheckSubscription(%s) = %v, want an error about %s", tc.sub, err, tc.field)
		}
	}
	if err := CheckSubscription("not json"); err == nil {
		t.Error("CheckSubscription accepted text that is not JSON")
	}
}

// TestWebPushUnusableKeysArePermanent: a stored subscription whose keys no
// message can be encrypted to fails as permanent, so the push worker
// deactivates the device instead of retrying it, and nothing is sent.
func TestWebPushUnusableKeysArePermanent(t *testing.T) {
	t.Parallel()
	f, wp := newFakePushService(t)
	enc := base64.RawURLEncoding
	good := f.browser.subscription(f.srv.URL + "/push/1")
	var sub struct {
		Keys struct{ P256dh, Auth string } `json:"keys"`
	}
	if err := json.Unmarshal([]byte(good), &sub); err != nil {
		t.Fatal(err)
	}
	endpoint := f.srv.URL + "/push/1"
	for name, token := range map[string]string{
		"p256dh off the curve":  subscriptionWith(endpoint, enc.EncodeToString(offCurve()), sub.Keys.Auth),
		"p256dh too short":      subscriptionWith(endpoint, enc.EncodeToString([]byte{4, 1, 2}), sub.Keys.Auth),
		"p256dh not base64":     subscriptionWith(endpoint, "***", sub.Keys.Auth),
		"auth of 8 bytes":       subscriptionWith(endpoint, sub.Keys.P256dh, enc.EncodeToString(make([]byte, 8))),
		"no keys":               `{"endpoint":"` + endpoint + `"}`,
		"endpoint not a URL":    subscriptionWith("https://push.example.com/%zz", sub.Keys.P256dh, sub.Keys.Auth),
		"a subscription string": `"` + strings.Repeat("x", 10) + `"`,
	} {
		err := wp.Send(context.Background(), token, Notification{MessageID: "msg_x", Title: "t", Priority: "normal"})
		if !IsPermanent(err) || IsRetryable(err) {
			t.Errorf("%s: Send = %v, want a permanent error", name, err)
		}
	}
	f.mu.Lock()
	sent := len(f.reqs)
	f.mu.Unlock()
	if sent != 0 {
		t.Errorf("the push service got %d requests for unusable subscriptions, want 0", sent)
	}
	if err := wp.Send(context.Background(), good, Notification{MessageID: "msg_x", Title: "t", Priority: "normal"}); err != nil {
		t.Fatalf("Send to a good subscription: %v", err)
	}
}
