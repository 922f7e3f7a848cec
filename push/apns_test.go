package push

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// apnsTestActions is a message's actions as the send path stores them.
const apnsTestActions = `[{"type":"button","label":"Ack","key":"ack"}]`

// apnsRequest is one push the fake APNs accepted for inspection.
type apnsRequest struct {
	Token   string
	Header  http.Header
	Raw     []byte
	Payload map[string]any
}

// fakeAPNs is an HTTP/2 TLS server that checks what Apple checks: the
// path, the provider JWT (signature, kid, iss, iat) and the apns-* headers.
type fakeAPNs struct {
	t   *testing.T
	srv *httptest.Server
	pub *ecdsa.PublicKey

	mu      sync.Mutex
	reqs    []apnsRequest
	status  int    // answer; 0 is 200
	reason  string // the JSON reason with a non-200 answer
	badAuth int    // requests whose JWT failed a check
}

func newFakeAPNs(t *testing.T) (*fakeAPNs, *APNs) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "AuthKey_KEY123.p8")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &fakeAPNs{t: t, pub: &key.PublicKey}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.srv.EnableHTTP2 = true
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	a, err := NewAPNs(APNsConfig{KeyFile: keyFile, KeyID: "KEY123", TeamID: "TEAM123", Topic: "com.example.herald",
		Host: f.srv.URL}, f.srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	return f, a
}

func (f *fakeAPNs) serve(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor != 2 || r.TLS == nil {
		f.t.Errorf("APNs request over %s (TLS %v), want HTTP/2 over TLS", r.Proto, r.TLS != nil)
	}
	token, ok := strings.CutPrefix(r.URL.Path, "/3/device/")
	if r.Method != http.MethodPost || !ok || token == "" || strings.Contains(token, "/") {
		f.t.Errorf("APNs request %s %s, want POST /3/device/<token>", r.Method, r.URL.Path)
		http.Error(w, `{"reason":"BadPath"}`, http.StatusNotFound)
		return
	}
	if err := f.checkAuth(r.Header.Get("Authorization")); err != nil {
		f.t.Errorf("APNs provider token: %v", err)
		f.mu.Lock()
		f.badAuth++
		f.mu.Unlock()
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"reason":"InvalidProviderToken"}`)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var payload map[string]any
	if err := json.Unmarshal(raw, &payload); err != nil {
		f.t.Errorf("APNs payload %q is not JSON: %v", raw, err)
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, apnsRequest{Token: token, Header: r.Header.Clone(), Raw: raw, Payload: payload})
	status, reason := f.status, f.reason
	f.mu.Unlock()
	w.Header().Set("apns-id", "00000000-0000-0000-0000-000000000001")
	if status == 0 || status == http.StatusOK {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if status == http.StatusGone {
		_, _ = fmt.Fprintf(w, `{"reason":%q,"timestamp":%d}`, reason, time.Now().UnixMilli())
		return
	}
	_, _ = fmt.Fprintf(w, `{"reason":%q}`, reason)
}

// checkAuth verifies "bearer <JWT>": ES256 by the .p8 key, kid KEY123,
// iss TEAM123, iat within the last minute.
func (f *fakeAPNs) checkAuth(h string) error {
	tok, ok := strings.CutPrefix(h, "bearer ")
	if !ok {
		return fmt.Errorf("authorization %q, want bearer <JWT>", h)
	}
	header, claims, err := verifyES256(tok, f.pub)
	if err != nil {
		return err
	}
	if header["alg"] != "ES256" || header["kid"] != "KEY123" {
		return fmt.Errorf("JWT header %v, want alg ES256, kid KEY123", header)
	}
	if claims["iss"] != "TEAM123" {
		return fmt.Errorf("JWT iss = %v, want TEAM123", claims["iss"])
	}
	iat, _ := claims["iat"].(float64)
	if age := time.Since(time.Unix(int64(iat), 0)); age < -time.Minute || age > time.Minute {
		return fmt.Errorf("JWT iat %v is %v old, want recent", claims["iat"], age)
	}
	return nil
}

func (f *fakeAPNs) answer(status int, reason string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.reason = status, reason
}

func (f *fakeAPNs) requests() []apnsRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]apnsRequest(nil), f.reqs...)
}

func (f *fakeAPNs) last() apnsRequest {
	f.t.Helper()
	reqs := f.requests()
	if len(reqs) == 0 {
		f.t.Fatal("the fake APNs got no push")
	}
	return reqs[len(reqs)-1]
}

// verifyES256 checks a compact JWS signed with ES256 by pub and returns its
// decoded header and claims.
func verifyES256(tok string, pub *ecdsa.PublicKey) (header, claims map[string]any, err error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, nil, fmt.Errorf("JWT %q does not have three parts", tok)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return nil, nil, fmt.Errorf("JWT signature is not 64 bytes of base64url (%d bytes, %v)", len(sig), err)
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(pub, digest[:], r, s) {
		return nil, nil, errors.New("JWT signature does not verify with the public key")
	}
	if header, err = jwtPart(parts[0]); err != nil {
		return nil, nil, err
	}
	if claims, err = jwtPart(parts[1]); err != nil {
		return nil, nil, err
	}
	return header, claims, nil
}

// decodeJSON decodes s for comparison with a decoded payload.
func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func jwtPart(s string) (map[string]any, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("JWT part %q: %w", s, err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("JWT part %s: %w", b, err)
	}
	return out, nil
}

func TestAPNsSendByPriority(t *testing.T) {
	f, a := newFakeAPNs(t)
	tests := []struct {
		priority     string
		wantPriority string
		wantSound    any // nil: absent
		wantLevel    string
	}{
		{"high", "10", "default", "time-sensitive"},
		{"normal", "10", nil, "active"},
		{"low", "5", nil, "passive"},
	}
	for _, tt := range tests {
		t.Run(tt.priority, func(t *testing.T) {
			n := Notification{MessageID: "msg_" + tt.priority + "0123456789abcdefghij", ChannelID: "ch_0123456789abcdefghijkl",
				Title: "Deploy " + tt.priority, Body: "**Disk** is *almost* full on `db1`, see [the runbook](https://example.com/rb)",
				Priority: tt.priority, Actions: json.RawMessage(apnsTestActions)}
			if err := a.Send(context.Background(), "a1b2c3d4e5f6", n); err != nil {
				t.Fatalf("Send: %v", err)
			}
			r := f.last()
			if got, want := r.Token, "a1b2c3d4e5f6"; got != want {
				t.Errorf("device token in path = %q, want %q", got, want)
			}
			for h, want := range map[string]string{
				"apns-topic":       "com.example.herald",
				"apns-push-type":   "alert",
				"apns-priority":    tt.wantPriority,
				"apns-collapse-id": n.MessageID,
			} {
				if got := r.Header.Get(h); got != want {
					t.Errorf("header %s = %q, want %q", h, got, want)
				}
			}
			aps, _ := r.Payload["aps"].(map[string]any)
			alert, _ := aps["alert"].(map[string]any)
			if got, want := alert["title"], n.Title; got != want {
				t.Errorf("aps.alert.title = %v, want %q", got, want)
			}
			if got, want := alert["body"], "Disk is almost full on db1, see the runbook"; got != want {
				t.Errorf("aps.alert.body = %v, want %q (plain text)", got, want)
			}
			if got := aps["sound"]; got != tt.wantSound {
				t.Errorf("aps.sound = %v, want %v", got, tt.wantSound)
			}
			if got := aps["interruption-level"]; got != tt.wantLevel {
				t.Errorf("aps.interruption-level = %v, want %q", got, tt.wantLevel)
			}
			if got := aps["mutable-content"]; got != 1.0 {
				t.Errorf("aps.mutable-content = %v, want 1", got)
			}
			if got, want := r.Payload["message_id"], n.MessageID; got != want {
				t.Errorf("message_id = %v, want %q", got, want)
			}
			if got, want := r.Payload["channel_id"], n.ChannelID; got != want {
				t.Errorf("channel_id = %v, want %q", got, want)
			}
			if got, want := r.Payload["actions"], decodeJSON(t, apnsTestActions); !reflect.DeepEqual(got, want) {
				t.Errorf("actions = %v, want %v", got, want)
			}
		})
	}
}

func TestAPNsErrors(t *testing.T) {
	f, a := newFakeAPNs(t)
	tests := []struct {
		name          string
		status        int
		reason        string
		wantPermanent bool
		wantRetryable bool
	}{
		{"ok", 200, "", false, false},
		{"unregistered", 410, "Unregistered", true, false},
		{"bad device token", 400, "BadDeviceToken", true, false},
		{"device token not for topic", 400, "DeviceTokenNotForTopic", true, false},
		{"too many requests", 429, "TooManyRequests", false, true},
		{"service unavailable", 503, "ServiceUnavailable", false, true},
		{"internal server error", 500, "InternalServerError", false, true},
		{"bad topic", 400, "BadTopic", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.answer(tt.status, tt.reason)
			err := a.Send(context.Background(), "tok", Notification{MessageID: "msg_x", Title: "t", Priority: "normal"})
			if tt.status == 200 {
				if err != nil {
					t.Fatalf("Send: %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Send answered %d %s: got nil error", tt.status, tt.reason)
			}
			if got := IsPermanent(err); got != tt.wantPermanent {
				t.Errorf("IsPermanent(%v) = %v, want %v", err, got, tt.wantPermanent)
			}
			if got := IsRetryable(err); got != tt.wantRetryable {
				t.Errorf("IsRetryable(%v) = %v, want %v", err, got, tt.wantRetryable)
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Status != tt.status || pe.Reason != tt.reason || pe.Provider != "apns" {
				t.Errorf("error %#v, want *Error{Provider: apns, Status: %d, Reason: %q}", err, tt.status, tt.reason)
			}
		})
	}
}

func TestAPNsUnreachableIsRetryable(t *testing.T) {
	f, a := newFakeAPNs(t)
	f.srv.Close()
	err := a.Send(context.Background(), "tok", Notification{MessageID: "msg_x", Title: "t", Priority: "normal"})
	if err == nil || IsPermanent(err) || !IsRetryable(err) {
		t.Fatalf("Send to a closed server: %v (permanent %v, retryable %v), want a retryable error",
			err, IsPermanent(err), IsRetryable(err))
	}
}

func TestAPNsTruncatesLongBody(t *testing.T) {
	f, a := newFakeAPNs(t)
	// 6000 bytes; the cut falls among the two-byte runes.
	body := strings.Repeat("x", 1000) + strings.Repeat("é", 2500)
	if len(body) != 6000 {
		t.Fatalf("test body is %d bytes", len(body))
	}
	n := Notification{MessageID: "msg_long", ChannelID: "ch_long", Title: "Long", Body: body, Priority: "high",
		Actions: json.RawMessage(apnsTestActions)}
	if err := a.Send(context.Background(), "tok", n); err != nil {
		t.Fatalf("Send: %v", err)
	}
	r := f.last()
	if len(r.Raw) > 4096 {
		t.Errorf("payload is %d bytes, want at most 4096", len(r.Raw))
	}
	got, _ := r.Payload["aps"].(map[string]any)["alert"].(map[string]any)["body"].(string)
	if !strings.HasSuffix(got, "…") || !utf8.ValidString(got) {
		t.Errorf("body of %d bytes does not end with … (or is not valid UTF-8): ...%q", len(got), got[max(0, len(got)-20):])
	}
	if !strings.HasPrefix(body, strings.TrimSuffix(got, "…")) {
		t.Error("the truncated body is not a prefix of the original")
	}
	if len(got) < 3000 {
		t.Errorf("body was cut to %d bytes; it should keep what fits in 4096", len(got))
	}
	if r.Payload["message_id"] != "msg_long" || r.Payload["actions"] == nil {
		t.Errorf("truncation lost the other fields: %s", r.Raw)
	}
}
