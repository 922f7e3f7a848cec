package server

import (
	"context"
	"net/http"
	"testing"

	"github.com/heraldhq/herald/push"
)

// browserSession is a browser signed in with the session cookie: what a
// service worker's same-origin requests carry.
type browserSession struct {
	env    *testEnv
	cookie string // "herald_session=..."
	csrf   string
}

// signInBrowser signs u in as the admin UI does and returns its cookies.
func (e *testEnv) signInBrowser(u *testUser) *browserSession {
	e.t.Helper()
	r := e.request("POST", "/auth/local", map[string]string{"email": u.Email, "password": u.Password}, "", "Origin", e.srv.URL)
	if r.Status != http.StatusOK {
		e.t.Fatalf("POST /auth/local: %d %s", r.Status, r.Raw)
	}
	b := &browserSession{env: e}
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		switch c.Name {
		case cookieSession:
			b.cookie = c.Name + "=" + c.Value
		case cookieCSRF:
			b.csrf = c.Value
		}
	}
	if b.cookie == "" || b.csrf == "" {
		e.t.Fatalf("POST /auth/local set no session or CSRF cookie: %v", r.Header["Set-Cookie"])
	}
	return b
}

// page is a request from the admin UI's page: cookie and CSRF header.
func (b *browserSession) page(method, path string, body any) response {
	b.env.t.Helper()
	return b.env.request(method, path, body, "", "Cookie", b.cookie, headerCSRF, b.csrf, "Origin", b.env.srv.URL)
}

// worker is a request from the service worker: the cookie, no CSRF header.
func (b *browserSession) worker(path string, body any) response {
	b.env.t.Helper()
	return b.env.request("POST", path, body, "", "Cookie", b.cookie, "Origin", b.env.srv.URL)
}

// registerWeb registers a web device from the page and returns its id and
// the worker token of the registration.
func (b *browserSession) registerWeb(endpoint string) (id, workerToken string) {
	b.env.t.Helper()
	r := b.page("POST", "/v1/devices", map[string]string{"platform": "web", "name": "Chrome on Linux",
		"push_token": `{"endpoint":"https://push.example.com/` + endpoint + `","keys":` + devWebKeys + `}`})
	if r.Status != http.StatusCreated || r.Str("id") == "" || r.Str("worker_token") == "" {
		b.env.t.Fatalf("register web device: %d %s", r.Status, r.Raw)
	}
	return r.Str("id"), r.Str("worker_token")
}

// answerToken is the credential the push worker puts in device's
// notification of message: the rule's own function, with the server's key
// and the session the device was registered by.
func (e *testEnv) answerToken(u *testUser, deviceID, messageID string) string {
	e.t.Helper()
	ctx := context.Background()
	key, err := e.s.svc.NotificationKey(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	d, err := e.st.Device(ctx, u.ID, deviceID)
	if err != nil {
		e.t.Fatal(err)
	}
	if d.SessionID == "" {
		e.t.Fatalf("device %s records no session", deviceID)
	}
	return push.AnswerToken(key, deviceID, d.SessionID, messageID)
}

func notificationAnswer(action, deviceID, token string) map[string]any {
	return map[string]any{"action": action, "device_id": deviceID, "token": token}
}

// TestNotificationResponse: a notification's button answers its message
// through the service worker's endpoint, with the same rules and conflicts
// as POST respond, and only from the device, session and message the
// credential was made for.
func TestNotificationResponse(t *testing.T) {
	env := newTestEnv(t)
	ann, bob := env.newUser("ann@example.com"), env.newUser("bob@example.com")
	ch := env.newChannel(ann, "deploys")
	send := func() string {
		return env.do(200, "POST", "/v1/send/"+ch["webhook_token"].(string), map[string]any{"title": "Restart?",
			"actions": []map[string]any{{"type": "button", "key": "restart", "label": "Restart"},
				{"type": "button", "key": "later", "label": "Later"}}}, "").Str("id")
	}
	annBrowser := env.signInBrowser(ann)
	dev, _ := annBrowser.registerWeb("ann")
	m1, m2, m3 := send(), send(), send()
	path := func(id string) string { return "/v1/messages/" + id + "/notification-response" }

	// The device's own answer, without a CSRF header.
	r := annBrowser.worker(path(m1), notificationAnswer("restart", dev, env.answerToken(ann, dev, m1)))
	if r.Status != http.StatusOK || r.Str("status") != "submitted" {
		t.Fatalf("answer from the notification: %d %s, want 200 submitted", r.Status, r.Raw)
	}
	got := env.do(200, "GET", "/v1/messages/"+m1, nil, ann.Token).Body
	if resp, _ := got["response"].(map[string]any); got["status"] != "submitted" || resp["triggered_by"] != "restart" {
		t.Errorf("message after the answer = %v, want submitted by restart", got)
	}
	// The same rules as POST respond: the first answer stands; an action
	// must be one of the message's; a button takes no responses.
	wantError(t, annBrowser.worker(path(m1), notificationAnswer("restart", dev, env.answerToken(ann, dev, m1))), 409, "already_responded")
	wantError(t, annBrowser.worker(path(m2), notificationAnswer("nope", dev, env.answerToken(ann, dev, m2))), 400, "invalid_payload")
	withResponses := notificationAnswer("later", dev, env.answerToken(ann, dev, m2))
	withResponses["responses"] = map[string]any{"x": 1}
	wantError(t, annBrowser.worker(path(m2), withResponses), 400, "invalid_payload")

	t.Run("replayed on another message", func(t *testing.T) {
		wantError(t, annBrowser.worker(path(m2), notificationAnswer("restart", dev, env.answerToken(ann, dev, m1))), 403, "forbidden")
	})
	t.Run("another user", func(t *testing.T) {
		bobBrowser := env.signInBrowser(bob)
		// Ann's credential with Bob's cookie.
		wantError(t, bobBrowser.worker(path(m2), notificationAnswer("restart", dev, env.answerToken(ann, dev, m2))), 403, "forbidden")
		// A credential for Bob's own device names a message he may not see.
		bobDev, _ := bobBrowser.registerWeb("bob")
		wantError(t, bobBrowser.worker(path(m2), notificationAnswer("restart", bobDev, env.answerToken(bob, bobDev, m2))), 404, "not_found")
		// No cookie at all.
		wantError(t, env.request("POST", path(m2), notificationAnswer("restart", dev, env.answerToken(ann, dev, m2)), "", "Origin", env.srv.URL), 401, "invalid_token")
		// A bearer token is not a browser session.
		wantError(t, env.request("POST", path(m2), notificationAnswer("restart", dev, env.answerToken(ann, dev, m2)), ann.Token), 401, "invalid_token")
	})
	t.Run("another site", func(t *testing.T) {
		wantError(t, env.request("POST", path(m2), notificationAnswer("restart", dev, env.answerToken(ann, dev, m2)), "",
			"Cookie", annBrowser.cookie, "Origin", "https://evil.example"), 403, "forbidden")
		wantError(t, env.request("POST", path(m2), `{"action":"restart"}`, "", "Cookie", annBrowser.cookie,
			"Origin", env.srv.URL, "Content-Type", "text/plain"), 415, "unsupported_media_type")
	})
	t.Run("wrong or missing credential", func(t *testing.T) {
		wantError(t, annBrowser.worker(path(m2), notificationAnswer("restart", dev, "AAAA")), 403, "forbidden")
		wantError(t, annBrowser.worker(path(m2), map[string]any{"action": "restart"}), 400, "invalid_payload")
	})
	t.Run("revoked session", func(t *testing.T) {
		other := env.signInBrowser(ann)
		dev2, _ := other.registerWeb("ann-2")
		token := env.answerToken(ann, dev2, m2)
		if r := other.page("POST", "/auth/logout", nil); r.Status != http.StatusOK {
			t.Fatalf("sign out: %d %s", r.Status, r.Raw)
		}
		wantError(t, other.worker(path(m2), notificationAnswer("restart", dev2, token)), 401, "invalid_token")
		// Signed in again, in a new session: the device was registered by
		// the old one, whose credentials no longer answer.
		again := env.signInBrowser(ann)
		wantError(t, again.worker(path(m2), notificationAnswer("restart", dev2, token)), 403, "forbidden")
	})
	t.Run("removed device", func(t *testing.T) {
		token := env.answerToken(ann, dev, m3)
		if r := annBrowser.page("DELETE", "/v1/devices/"+dev, nil); r.Status != http.StatusOK {
			t.Fatalf("remove device: %d %s", r.Status, r.Raw)
		}
		wantError(t, annBrowser.worker(path(m3), notificationAnswer("restart", dev, token)), 403, "forbidden")
	})
	if got := env.do(200, "GET", "/v1/messages/"+m2, nil, ann.Token).Body["status"]; got != "pending" {
		t.Errorf("message %s is %v after the refused answers, want pending", m2, got)
	}
}

// TestNotificationVote: on an approval message, a notification's Approve
// and Reject are votes, with the same outcome and conflicts as POST
// respond, and the deciding vote sends the callback.
func TestNotificationVote(t *testing.T) {
	f := aprSetup(t)
	f.rule(2, 3600, f.a, f.b)
	id := f.send()
	annBrowser, bobBrowser := f.env.signInBrowser(f.a), f.env.signInBrowser(f.b)
	annDev, _ := annBrowser.registerWeb("ann")
	bobDev, _ := bobBrowser.registerWeb("bob")
	path := "/v1/messages/" + id + "/notification-response"

	r := annBrowser.worker(path, notificationAnswer("approve", annDev, f.env.answerToken(f.a, annDev, id)))
	if r.Status != http.StatusOK || r.Str("approval_status") != "pending" {
		t.Fatalf("first vote: %d %s, want pending", r.Status, r.Raw)
	}
	wantError(t, annBrowser.worker(path, notificationAnswer("approve", annDev, f.env.answerToken(f.a, annDev, id))), 409, "already_voted")
	r = bobBrowser.worker(path, notificationAnswer("approve", bobDev, f.env.answerToken(f.b, bobDev, id)))
	if r.Status != http.StatusOK || r.Str("approval_status") != "approved" {
		t.Fatalf("deciding vote: %d %s, want approved", r.Status, r.Raw)
	}
	cbs := f.rcv.wait(t, 1)
	if cbs[0].Body["event"] != "approval.resolved" || cbs[0].Body["status"] != "approved" || cbs[0].Body["message_id"] != id {
		t.Errorf("callback after the deciding vote = %s, want approval.resolved, approved", cbs[0].Raw)
	}
}

// TestResubscribe: the service worker hands in a rotated subscription with
// the worker token of the registration, and nothing else does.
func TestResubscribe(t *testing.T) {
	env := newTestEnv(t)
	ann, bob := env.newUser("ann@example.com"), env.newUser("bob@example.com")
	annBrowser := env.signInBrowser(ann)
	dev, workerToken := annBrowser.registerWeb("old")
	newSub := `{"endpoint":"https://push.example.com/new","keys":` + devWebKeys + `}`
	path := "/v1/devices/" + dev + "/subscription"

	wantError(t, annBrowser.worker(path, map[string]string{"token": "wrong", "push_token": newSub}), 403, "forbidden")
	wantError(t, env.signInBrowser(bob).worker(path, map[string]string{"token": workerToken, "push_token": newSub}), 403, "forbidden")
	wantError(t, annBrowser.worker(path, map[string]string{"token": workerToken, "push_token": `{"endpoint":"http://x"}`}), 400, "invalid_payload")
	// An answer credential is not a worker token.
	wantError(t, annBrowser.worker(path, map[string]string{"token": env.answerToken(ann, dev, "msg_x"), "push_token": newSub}), 403, "forbidden")

	if r := annBrowser.worker(path, map[string]string{"token": workerToken, "push_token": newSub}); r.Status != http.StatusOK || r.Str("id") != dev {
		t.Fatalf("resubscribe: %d %s", r.Status, r.Raw)
	}
	d, err := env.st.Device(context.Background(), ann.ID, dev)
	if err != nil || d.PushToken != newSub || !d.Active {
		t.Fatalf("device after resubscribe = %+v, %v; want the new subscription, active", d, err)
	}
}
