package push

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/googletest"
)

const (
	fcmTestProject = "herald-test"
	fcmTestEmail   = "herald@herald-test.iam.gserviceaccount.com"
)

// fakeGoogle is a service account's token endpoint (googletest) and the FCM
// HTTP v1 send endpoint.
type fakeGoogle struct {
	t   *testing.T
	srv *httptest.Server
	sa  *googletest.ServiceAccount

	mu     sync.Mutex
	sends  []map[string]any
	status int    // send answer; 0 is 200
	answer string // send answer body
}

func newFakeGoogle(t *testing.T) (*fakeGoogle, *FCM) {
	t.Helper()
	g := &fakeGoogle{t: t}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/projects/{project}/{send}", g.serveSend)
	g.srv = httptest.NewServer(mux)
	t.Cleanup(g.srv.Close)
	g.sa = googletest.New(t, mux, g.srv.URL, fcmScope, fcmTestProject, fcmTestEmail)
	f, err := NewFCM(FCMConfig{CredentialsFile: g.sa.CredentialsFile, Endpoint: g.srv.URL}, &http.Client{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return g, f
}

func (g *fakeGoogle) serveSend(w http.ResponseWriter, r *http.Request) {
	if got, want := r.URL.Path, "/v1/projects/"+fcmTestProject+"/messages:send"; got != want {
		g.t.Errorf("send path = %q, want %q", got, want)
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if got := r.Header.Get("Authorization"); !g.sa.Authorized(got) {
		g.t.Errorf("Authorization = %q, not a token the token endpoint issued", got)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		g.t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		g.t.Errorf("send body: %v", err)
	}
	g.mu.Lock()
	g.sends = append(g.sends, body)
	status, answer := g.status, g.answer
	g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if status == 0 {
		_, _ = fmt.Fprintf(w, `{"name":"projects/%s/messages/0:1"}`, fcmTestProject)
		return
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, answer)
}

func (g *fakeGoogle) respond(status int, body string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.status, g.answer = status, body
}

func (g *fakeGoogle) lastMessage() map[string]any {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.sends) == 0 {
		g.t.Fatal("the fake FCM got no message")
	}
	m, _ := g.sends[len(g.sends)-1]["message"].(map[string]any)
	return m
}

func (g *fakeGoogle) fetches() int { return len(g.sa.Issued()) }

// fcmError is an FCM v1 error body.
func fcmError(code int, status, errorCode string) string {
	return fmt.Sprintf(`{"error":{"code":%d,"message":"test","status":%q,"details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":%q}]}}`,
		code, status, errorCode)
}

func TestFCMSendByPriority(t *testing.T) {
	g, f := newFakeGoogle(t)
	tests := []struct {
		priority  string
		wantPrio  string
		wantSound any // nil: absent
	}{
		{"high", "HIGH", "default"},
		{"normal", "HIGH", nil},
		{"low", "NORMAL", nil},
	}
	for _, tt := range tests {
		t.Run(tt.priority, func(t *testing.T) {
			n := Notification{MessageID: "msg_" + tt.priority, ChannelID: "ch_fcm", Title: "Backup " + tt.priority,
				Body: "__Backup__ of _photos_ done: [log](https://example.com/log)", Priority: tt.priority,
				Actions: json.RawMessage(apnsTestActions)}
			if err := f.Send(context.Background(), "android-token-1", n); err != nil {
				t.Fatalf("Send: %v", err)
			}
			m := g.lastMessage()
			if got, want := m["token"], "android-token-1"; got != want {
				t.Errorf("message.token = %v, want %q", got, want)
			}
			notif, _ := m["notification"].(map[string]any)
			if got, want := notif["title"], n.Title; got != want {
				t.Errorf("notification.title = %v, want %q", got, want)
			}
			if got, want := notif["body"], "Backup of photos done: log"; got != want {
				t.Errorf("notification.body = %v, want %q (plain text)", got, want)
			}
			data, _ := m["data"].(map[string]any)
			if data["message_id"] != n.MessageID || data["channel_id"] != n.ChannelID {
				t.Errorf("data = %v, want message_id %s and channel_id %s", data, n.MessageID, n.ChannelID)
			}
			actions, _ := data["actions"].(string) // FCM data values are strings
			if got, want := decodeJSON(t, actions), decodeJSON(t, apnsTestActions); !reflect.DeepEqual(got, want) {
				t.Errorf("data.actions = %q, want %s", actions, apnsTestActions)
			}
			android, _ := m["android"].(map[string]any)
			if got := android["priority"]; got != tt.wantPrio {
				t.Errorf("android.priority = %v, want %s", got, tt.wantPrio)
			}
			an, _ := android["notification"].(map[string]any)
			if got := an["sound"]; got != tt.wantSound {
				t.Errorf("android.notification.sound = %v, want %v", got, tt.wantSound)
			}
		})
	}
	if got := g.fetches(); got != 1 {
		t.Errorf("the access token was fetched %d times for 3 sends, want once", got)
	}
}

func TestFCMErrors(t *testing.T) {
	g, f := newFakeGoogle(t)
	tests := []struct {
		name          string
		status        int
		body          string
		wantPermanent bool
		wantRetryable bool
	}{
		{"not found", 404, fcmError(404, "NOT_FOUND", "UNREGISTERED"), true, false},
		{"not found without details", 404, `{"error":{"code":404,"status":"NOT_FOUND"}}`, true, false},
		{"unregistered", 400, fcmError(400, "INVALID_ARGUMENT", "UNREGISTERED"), true, false},
		{"invalid argument", 400, fcmError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT"), false, false},
		{"quota exceeded", 429, fcmError(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"), false, true},
		{"internal", 500, fcmError(500, "INTERNAL", "INTERNAL"), false, true},
		{"unavailable, not JSON", 503, "upstream connect error", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g.respond(tt.status, tt.body)
			err := f.Send(context.Background(), "tok", Notification{MessageID: "msg_x", Title: "t", Priority: "normal"})
			if err == nil {
				t.Fatalf("Send answered %d: nil error", tt.status)
			}
			if got := IsPermanent(err); got != tt.wantPermanent {
				t.Errorf("IsPermanent(%v) = %v, want %v", err, got, tt.wantPermanent)
			}
			if got := IsRetryable(err); got != tt.wantRetryable {
				t.Errorf("IsRetryable(%v) = %v, want %v", err, got, tt.wantRetryable)
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Status != tt.status || pe.Provider != "fcm" {
				t.Errorf("error %#v, want *Error{Provider: fcm, Status: %d}", err, tt.status)
			}
		})
	}
	g.respond(0, "")
	if err := f.Send(context.Background(), "tok", Notification{MessageID: "msg_ok", Title: "t", Priority: "normal"}); err != nil {
		t.Fatalf("Send after the errors: %v", err)
	}
	if got := g.fetches(); got != 1 {
		t.Errorf("the access token was fetched %d times, want once (reused across sends)", got)
	}
}

func TestFCMTruncatesLongBody(t *testing.T) {
	g, f := newFakeGoogle(t)
	body := strings.Repeat("ü", 3000) // 6000 bytes
	if err := f.Send(context.Background(), "tok", Notification{MessageID: "msg_long", Title: "t", Body: body, Priority: "high"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	m := g.lastMessage()
	raw, _ := json.Marshal(map[string]any{"message": m})
	if len(raw) > 4096 {
		t.Errorf("message is %d bytes, want at most 4096", len(raw))
	}
	got, _ := m["notification"].(map[string]any)["body"].(string)
	if !strings.HasSuffix(got, "…") || !strings.HasPrefix(body, strings.TrimSuffix(got, "…")) {
		t.Errorf("body of %d bytes is not a prefix of the original ending in …", len(got))
	}
}
