package delivery

import (
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/internal/googletest"
	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/push"
	"github.com/heraldhq/herald/store"
)

// pwFakes are local APNs, FCM and Web Push services. Each records, per
// device token (for Web Push, per endpoint path), the message ids it got,
// and answers as told for that device.
type pwFakes struct {
	t       *testing.T
	apns    *httptest.Server
	google  *httptest.Server
	web     *httptest.Server
	browser *ecdh.PrivateKey
	auth    []byte

	apnsKeyFile string
	sa          *googletest.ServiceAccount
	vapidPub    string
	vapidPriv   string

	mu       sync.Mutex
	got      map[string][]string // "ios:<token>", "android:<token>", "web:<path>" → message ids
	payloads map[string][][]byte // the same keys → the payloads (Web Push's decrypted)
	answers  map[string]int      // the same keys → HTTP status; absent is success, pwHang hangs
	ok       map[string]int      // the same keys → pushes answered with success
	arrived  chan string         // keys of requests told to hang
}

// pwHang is an answer: hold the request until the client gives up.
const pwHang = -1

func newPWFakes(t *testing.T) *pwFakes {
	t.Helper()
	f := &pwFakes{t: t, got: map[string][]string{}, answers: map[string]int{}, ok: map[string]int{},
		arrived: make(chan string, 10)}
	dir := t.TempDir()

	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	f.apnsKeyFile = filepath.Join(dir, "apns.p8")
	if err := os.WriteFile(f.apnsKeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	f.apns = httptest.NewUnstartedServer(http.HandlerFunc(f.serveAPNs))
	f.apns.EnableHTTP2 = true
	f.apns.StartTLS()
	t.Cleanup(f.apns.Close)

	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/projects/herald-test/messages:send", f.serveFCM)
	f.google = httptest.NewServer(mux)
	t.Cleanup(f.google.Close)
	f.sa = googletest.New(t, mux, f.google.URL, "https://www.googleapis.com/auth/firebase.messaging",
		"herald-test", "herald@herald-test.iam.gserviceaccount.com")

	if f.browser, err = ecdh.P256().GenerateKey(rand.Reader); err != nil {
		t.Fatal(err)
	}
	f.auth = make([]byte, 16)
	_, _ = rand.Read(f.auth)
	if f.vapidPriv, f.vapidPub, err = push.GenerateVAPIDKeys(); err != nil {
		t.Fatal(err)
	}
	f.web = httptest.NewServer(http.HandlerFunc(f.serveWeb))
	t.Cleanup(f.web.Close)
	return f
}

// dispatcher builds the real providers against the fakes; a false flag
// leaves that provider out, as serve does when it is not configured.
func (f *pwFakes) dispatcher(withAPNs, withFCM, withWeb bool) *push.Dispatcher {
	f.t.Helper()
	var apns *push.APNs // a typed nil, as cli/push.go passes it
	var fcm *push.FCM
	var web *push.WebPush
	var err error
	if withAPNs {
		if apns, err = push.NewAPNs(push.APNsConfig{KeyFile: f.apnsKeyFile, KeyID: "KEY123", TeamID: "TEAM123",
			Topic: "com.example.herald", Host: f.apns.URL}, f.apns.Client()); err != nil {
			f.t.Fatal(err)
		}
	}
	if withFCM {
		if fcm, err = push.NewFCM(push.FCMConfig{CredentialsFile: f.sa.CredentialsFile, Endpoint: f.google.URL},
			&http.Client{Timeout: 5 * time.Second}); err != nil {
			f.t.Fatal(err)
		}
	}
	if withWeb {
		web = push.NewWebPush("mailto:ops@example.com", f.vapidPub, f.vapidPriv, f.web.Client())
	}
	return push.NewDispatcher(apns, fcm, web)
}

// subscription is a PushSubscription for endpoint path on the fake service.
func (f *pwFakes) subscription(path string) string {
	b, _ := json.Marshal(map[string]any{"endpoint": f.web.URL + path, "keys": map[string]string{
		"p256dh": base64.RawURLEncoding.EncodeToString(f.browser.PublicKey().Bytes()),
		"auth":   base64.RawURLEncoding.EncodeToString(f.auth)}})
	return string(b)
}

// record notes message id for key and returns the status to answer; for
// pwHang it waits until the client cancels and returns pwHang.
func (f *pwFakes) record(r *http.Request, key, id string) int {
	f.mu.Lock()
	f.got[key] = append(f.got[key], id)
	status := f.answers[key]
	if status == 0 {
		f.ok[key]++
	}
	f.mu.Unlock()
	if status == pwHang {
		f.arrived <- key
		<-r.Context().Done()
	}
	return status
}

// successes is how many pushes key accepted.
func (f *pwFakes) successes(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ok[key]
}

func (f *pwFakes) answer(key string, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[key] = status
}

// pushes returns the message ids key got, in order.
func (f *pwFakes) pushes(key string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got[key]...)
}

func (f *pwFakes) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, ids := range f.got {
		n += len(ids)
	}
	return n
}

func (f *pwFakes) serveAPNs(w http.ResponseWriter, r *http.Request) {
	token, _ := strings.CutPrefix(r.URL.Path, "/3/device/")
	if r.ProtoMajor != 2 || !strings.HasPrefix(r.Header.Get("Authorization"), "bearer ") {
		f.t.Errorf("APNs request %s %s without HTTP/2 or a bearer token", r.Proto, r.URL.Path)
	}
	var p struct {
		MessageID string `json:"message_id"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &p)
	f.keep("ios:"+token, body)
	switch status := f.record(r, "ios:"+token, p.MessageID); status {
	case pwHang:
	case 0:
		w.WriteHeader(http.StatusOK)
	case http.StatusGone:
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `{"reason":"Unregistered","timestamp":%d}`, time.Now().UnixMilli())
	default:
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `{"reason":%q}`, strings.ReplaceAll(http.StatusText(status), " ", ""))
	}
}

func (f *pwFakes) serveFCM(w http.ResponseWriter, r *http.Request) {
	if !f.sa.Authorized(r.Header.Get("Authorization")) {
		f.t.Errorf("FCM send with Authorization %q", r.Header.Get("Authorization"))
	}
	var m struct {
		Message struct {
			Token string            `json:"token"`
			Data  map[string]string `json:"data"`
		} `json:"message"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &m)
	f.keep("android:"+m.Message.Token, body)
	status := f.record(r, "android:"+m.Message.Token, m.Message.Data["message_id"])
	if status == pwHang {
		return
	}
	if status == 0 {
		_, _ = io.WriteString(w, `{"name":"projects/herald-test/messages/1"}`)
		return
	}
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"error":{"code":%d,"status":"X"}}`, status)
}

func (f *pwFakes) serveWeb(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.Header.Get("Authorization"), "vapid t=") {
		f.t.Errorf("Web Push without VAPID: %q", r.Header.Get("Authorization"))
	}
	body, _ := io.ReadAll(r.Body)
	plain, err := f.decrypt(body)
	if err != nil {
		f.t.Errorf("decrypt Web Push: %v", err)
	}
	var p struct {
		MessageID string `json:"message_id"`
	}
	_ = json.Unmarshal(plain, &p)
	f.keep("web:"+r.URL.Path, plain)
	status := f.record(r, "web:"+r.URL.Path, p.MessageID)
	if status == pwHang {
		return
	}
	if status == 0 {
		status = http.StatusCreated
	}
	w.WriteHeader(status)
}

// keep records the payload key got (Web Push's decrypted).
func (f *pwFakes) keep(key string, payload []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.payloads == nil {
		f.payloads = map[string][][]byte{}
	}
	f.payloads[key] = append(f.payloads[key], payload)
}

// decrypt opens an RFC 8291 aes128gcm body with the browser's keys.
func (f *pwFakes) decrypt(body []byte) ([]byte, error) {
	return testkit.DecryptWebPush(f.browser, f.auth, body)
}

// pwEnv is a real store in t.TempDir() with users, devices and a channel.
type pwEnv struct {
	t     *testing.T
	dsn   string // the database st is on
	st    *store.Store
	clock *testkit.Clock
	fakes *pwFakes
	ch    *store.Channel
	ann   *store.User  // owns the channel
	logs  lockedBuffer // what the Pusher logged
	// registry, when set, is where the Pusher registers its metrics.
	registry prometheus.Registerer
}

func newPWEnv(t *testing.T) *pwEnv {
	t.Helper()
	clk := testkit.NewClock()
	dsn := pgtest.Or(t, filepath.Join(t.TempDir(), "herald.db"))
	st, err := store.Open(context.Background(), dsn, store.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &pwEnv{t: t, dsn: dsn, st: st, clock: clk, fakes: newPWFakes(t)}
	e.ann = e.user("ann@example.com")
	e.ch = &store.Channel{UserID: e.ann.ID, Name: "ops"}
	if err := st.CreateChannel(context.Background(), e.ch); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *pwEnv) user(email string) *store.User {
	e.t.Helper()
	u := &store.User{Email: email, Name: strings.Split(email, "@")[0], Plan: "free"}
	if err := e.st.CreateUser(context.Background(), u); err != nil {
		e.t.Fatal(err)
	}
	return u
}

// device registers a device of u; name is its token (ios, android) or its
// endpoint path (web). It returns the device and its key in the fakes.
func (e *pwEnv) device(u *store.User, platform, name string) (*store.Device, string) {
	e.t.Helper()
	token, key := name, platform+":"+name
	if platform == "web" {
		token, key = e.fakes.subscription("/push/"+name), "web:/push/"+name
	}
	d := &store.Device{UserID: u.ID, Platform: platform, Name: name, PushToken: token}
	if err := e.st.RegisterDevice(context.Background(), d); err != nil {
		e.t.Fatal(err)
	}
	return d, key
}

func (e *pwEnv) message(title string, change ...func(*store.Message)) string {
	e.t.Helper()
	m := &store.Message{ChannelID: e.ch.ID, Title: title, Body: "**" + title + "** happened", Priority: "normal"}
	for _, f := range change {
		f(m)
	}
	if err := e.st.CreateMessage(context.Background(), m); err != nil {
		e.t.Fatal(err)
	}
	return m.ID
}

// run starts a Pusher over d and returns a function that stops it and waits.
func (e *pwEnv) run(d *push.Dispatcher) (stop func()) {
	e.t.Helper()
	return e.runWith(d, PushConfig{Workers: 2})
}

// runWith is run with the pusher's configuration cfg.
func (e *pwEnv) runWith(d *push.Dispatcher, cfg PushConfig) (stop func()) {
	e.t.Helper()
	p := NewPusher(e.st, d, cfg, Options{Now: e.clock.Now, Logger: slog.New(slog.NewTextHandler(&e.logs, nil)),
		Registry: e.registry})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				e.t.Errorf("Pusher.Run: %v", err)
			}
		})
	}
	e.t.Cleanup(stop)
	return stop
}

// nextPush is when the earliest push job is due (ok false: no job left).
func (e *pwEnv) nextPush() (time.Time, bool) {
	e.t.Helper()
	at, ok, err := e.st.NextPushAt(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return at, ok
}

// inFlight counts the push jobs a worker holds: leased, lease not run out.
// A job that has made its pushes may still be in flight, its retries not
// yet written: a test that moves the clock past the lease meanwhile makes
// the job look abandoned.
func (e *pwEnv) inFlight() int {
	e.t.Helper()
	driver := "sqlite"
	if store.IsPostgresURL(e.dsn) {
		driver = "pgx"
	}
	db, err := sql.Open(driver, e.dsn)
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM push_jobs WHERE lease_until > $1", e.clock.Now().UnixMilli()).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// waitIdle waits until cond holds and no push job is left.
func (e *pwEnv) waitIdle(what string, cond func() bool) {
	e.t.Helper()
	e.waitFor(what, func() bool {
		_, pending := e.nextPush()
		return !pending && cond()
	})
}

func (e *pwEnv) waitFor(what string, cond func() bool) {
	e.t.Helper()
	testkit.Eventually(e.t, 10*time.Second, func() error {
		if !cond() {
			return fmt.Errorf("waiting for %s; pushes so far: %v", what, e.fakes.snapshot())
		}
		return nil
	})
}

func (f *pwFakes) snapshot() map[string][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string][]string{}
	for k, v := range f.got {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// wantPushes checks that key got exactly ids, in order.
func (e *pwEnv) wantPushes(key string, ids ...string) {
	e.t.Helper()
	got := e.fakes.pushes(key)
	if strings.Join(got, ",") != strings.Join(ids, ",") {
		e.t.Errorf("%s got pushes %v, want %v", key, got, ids)
	}
}

func (e *pwEnv) active(d *store.Device) bool {
	e.t.Helper()
	got, err := e.st.Device(context.Background(), d.UserID, d.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return got.Active
}

func TestPusherSendsOncePerDevice(t *testing.T) {
	e := newPWEnv(t)
	_, ios := e.device(e.ann, "ios", "ann-iphone")
	_, android := e.device(e.ann, "android", "ann-pixel")
	_, web := e.device(e.ann, "web", "ann-firefox")
	_, other := e.device(e.user("bob@example.com"), "ios", "bob-iphone") // not a recipient
	e.run(e.fakes.dispatcher(true, true, true))

	id := e.message("Disk full")
	e.waitIdle("a push to every device", func() bool { return e.fakes.total() >= 3 })
	for _, key := range []string{ios, android, web} {
		e.wantPushes(key, id)
	}
	e.wantPushes(other)

	id2 := e.message("Disk fine")
	e.waitIdle("the second message", func() bool { return e.fakes.total() >= 6 })
	for _, key := range []string{ios, android, web} {
		e.wantPushes(key, id, id2)
	}
	if got := e.fakes.total(); got != 6 {
		t.Errorf("%d pushes in all, want 6: %v", got, e.fakes.snapshot())
	}
}

func TestPusherDeactivatesRejectedDevice(t *testing.T) {
	e := newPWEnv(t)
	dead, deadKey := e.device(e.ann, "ios", "old-iphone")
	live, liveKey := e.device(e.ann, "ios", "new-iphone")
	e.fakes.answer(deadKey, http.StatusGone)
	e.run(e.fakes.dispatcher(true, true, true))

	id := e.message("first")
	e.waitIdle("the first push", func() bool { return len(e.fakes.pushes(liveKey)) == 1 && !e.active(dead) })
	e.wantPushes(deadKey, id)
	if !e.active(live) {
		t.Error("the device that accepted the push was deactivated")
	}
	if got := e.logs.String(); !strings.Contains(got, "device token rejected; device deactivated") || strings.Contains(got, "level=ERROR") {
		t.Errorf("the Pusher's log does not tell of the deactivation, or has errors:\n%s", got)
	}

	id2 := e.message("second")
	e.waitIdle("the second push", func() bool { return len(e.fakes.pushes(liveKey)) == 2 })
	e.wantPushes(deadKey, id) // nothing more to a dead token
	e.wantPushes(liveKey, id, id2)

	// A new token from the app (PATCH /v1/devices/:id) brings it back.
	if _, err := e.st.UpdateDevice(context.Background(), e.ann.ID, dead.ID, store.DevicePatch{PushToken: pwPtr("fresh-iphone")}); err != nil {
		t.Fatal(err)
	}
	id3 := e.message("third")
	e.waitIdle("the push to the new token", func() bool { return len(e.fakes.pushes("ios:fresh-iphone")) == 1 })
	e.wantPushes("ios:fresh-iphone", id3)
	e.wantPushes(deadKey, id)
}

func pwPtr[T any](v T) *T { return &v }

func TestPusherRetriesTransientFailure(t *testing.T) {
	pgtest.SkipIfAll(t, "a start does not free claims there, since other replicas' claims are alive; a dead replica's come back after their lease (e2e/replicas_test.go)")
	e := newPWEnv(t)
	flaky, flakyKey := e.device(e.ann, "ios", "flaky-iphone")
	_, android := e.device(e.ann, "android", "ann-pixel")
	_, web := e.device(e.ann, "web", "ann-chrome")
	e.fakes.answer(flakyKey, http.StatusServiceUnavailable)
	stop := e.run(e.fakes.dispatcher(true, true, true))

	t0 := e.clock.Now()
	id := e.message("retry me")
	// The fan-out job is gone and one retry is due 10 s later.
	e.waitFor("the retry job", func() bool {
		at, ok := e.nextPush()
		return ok && at.Equal(t0.Add(pushBackoffBase)) && e.fakes.total() == 3
	})
	stop()
	e.wantPushes(flakyKey, id)
	e.wantPushes(android, id)
	e.wantPushes(web, id)
	if !e.active(flaky) {
		t.Fatal("a temporary failure deactivated the device")
	}

	// The retry is a job for that one device, due at t0+10s.
	e.clock.Advance(pushBackoffBase + time.Second)
	jobs, err := e.st.ClaimPushJobs(context.Background(), 10, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].DeviceID != flaky.ID || jobs[0].MessageID != id || jobs[0].Attempts != 1 {
		t.Fatalf("due push jobs = %+v, want one retry of %s to device %s after 1 attempt", jobs, id, flaky.ID)
	}

	// A new Pusher frees the lease (as after a restart) and retries only
	// that device, which now accepts.
	e.fakes.answer(flakyKey, 0)
	e.run(e.fakes.dispatcher(true, true, true))
	e.waitIdle("the retried push", func() bool { return len(e.fakes.pushes(flakyKey)) == 2 })
	e.wantPushes(flakyKey, id, id)
	e.wantPushes(android, id)
	e.wantPushes(web, id)
}

func TestPusherGivesUpAfterMaxAttempts(t *testing.T) {
	e := newPWEnv(t)
	flaky, flakyKey := e.device(e.ann, "ios", "flaky-iphone")
	e.fakes.answer(flakyKey, http.StatusTooManyRequests)
	e.run(e.fakes.dispatcher(true, true, true))

	e.message("never arrives")
	for attempt := 1; attempt < pushMaxAttempts; attempt++ {
		// Wait for the retry itself, not just the send: moving the clock
		// while the job is in flight would let its lease run out.
		due := e.clock.Now().Add(Backoff(pushBackoffBase, pushBackoffMax, attempt))
		e.waitFor(fmt.Sprintf("retry %d", attempt), func() bool {
			at, ok := e.nextPush()
			return ok && at.Equal(due) && len(e.fakes.pushes(flakyKey)) == attempt
		})
		e.clock.Advance(pushBackoffMax)
		e.st.Poke(store.TopicPush)
	}
	e.waitIdle("the last attempt", func() bool { return len(e.fakes.pushes(flakyKey)) == pushMaxAttempts })
	if got := len(e.fakes.pushes(flakyKey)); got != pushMaxAttempts {
		t.Errorf("%d attempts, want %d", got, pushMaxAttempts)
	}
	if !e.active(flaky) {
		t.Error("giving up on temporary failures deactivated the device")
	}
}

func TestPusherSkipsMutedMessage(t *testing.T) {
	e := newPWEnv(t)
	_, ios := e.device(e.ann, "ios", "ann-iphone")
	_, web := e.device(e.ann, "web", "ann-firefox")
	e.run(e.fakes.dispatcher(true, true, true))

	muted := e.message("quiet", func(m *store.Message) { m.Muted = true })
	if at, ok := e.nextPush(); ok {
		t.Fatalf("a muted message queued a push job (due %v)", at)
	}
	loud := e.message("loud")
	e.waitIdle("the unmuted message", func() bool { return e.fakes.total() >= 2 })
	e.wantPushes(ios, loud)
	e.wantPushes(web, loud)
	for key, ids := range e.fakes.snapshot() {
		for _, id := range ids {
			if id == muted {
				t.Errorf("%s got the muted message", key)
			}
		}
	}
}

// approvers gives the channel a rule naming users, has each of them accept
// it, and returns it: the approvers who consented to be prompted.
func (e *pwEnv) approvers(users ...*store.User) *store.ApprovalRule {
	e.t.Helper()
	ctx := context.Background()
	rule := &store.ApprovalRule{RequiredCount: 1, WindowSeconds: 3600}
	for _, u := range users {
		rule.Approvers = append(rule.Approvers, u.ID)
	}
	if _, err := e.st.UpdateChannel(ctx, e.ann.ID, e.ch.ID, store.ChannelPatch{Approval: store.Optional[store.ApprovalRule]{Set: true, Value: rule}}); err != nil {
		e.t.Fatal(err)
	}
	for _, u := range users {
		invs, err := e.st.Invitations(ctx, u.ID, u.Email)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, in := range invs {
			if _, err := e.st.AnswerInvitation(ctx, u.ID, u.Email, in.ID, true); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	return rule
}

func TestPusherApprovalReachesApprovers(t *testing.T) {
	e := newPWEnv(t)
	bob, cat, dan, eve := e.user("bob@example.com"), e.user("cat@example.com"), e.user("dan@example.com"), e.user("eve@example.com")
	_, annKey := e.device(e.ann, "ios", "ann-iphone")
	_, bobKey := e.device(bob, "android", "bob-pixel")
	_, bobWeb := e.device(bob, "web", "bob-firefox")
	_, catKey := e.device(cat, "ios", "cat-iphone")
	_, danKey := e.device(dan, "ios", "dan-iphone") // not an approver
	_, eveKey := e.device(eve, "ios", "eve-iphone") // named, but never accepted
	e.run(e.fakes.dispatcher(true, true, true))

	rule := e.approvers(bob, cat, e.ann)
	rule.RequiredCount = 2
	rule.Approvers = append(rule.Approvers, eve.ID)
	if _, err := e.st.UpdateChannel(context.Background(), e.ann.ID, e.ch.ID, store.ChannelPatch{Approval: store.Optional[store.ApprovalRule]{Set: true, Value: rule}}); err != nil {
		t.Fatal(err)
	}
	id := e.message("deploy to prod?", func(m *store.Message) { m.Approval = rule })
	e.waitIdle("pushes to the owner and the approvers", func() bool { return e.fakes.total() >= 4 })
	for _, key := range []string{annKey, bobKey, bobWeb, catKey} {
		e.wantPushes(key, id) // once each, though ann is both owner and approver
	}
	e.wantPushes(danKey)
	e.wantPushes(eveKey)
}

func TestPusherSkipsUnconfiguredPlatform(t *testing.T) {
	e := newPWEnv(t)
	iphone, ios := e.device(e.ann, "ios", "ann-iphone")
	_, android := e.device(e.ann, "android", "ann-pixel")
	_, web := e.device(e.ann, "web", "ann-firefox")
	e.run(e.fakes.dispatcher(false, true, true)) // no [push.apns]

	id := e.message("no APNs")
	e.waitIdle("the configured platforms", func() bool { return e.fakes.total() >= 2 })
	e.wantPushes(android, id)
	e.wantPushes(web, id)
	e.wantPushes(ios)
	if !e.active(iphone) {
		t.Error("a device of an unconfigured platform was deactivated")
	}
}

func TestPusherSendsJobsCommittedWhileStopped(t *testing.T) {
	e := newPWEnv(t)
	_, ios := e.device(e.ann, "ios", "ann-iphone")
	_, android := e.device(e.ann, "android", "ann-pixel")
	_, web := e.device(e.ann, "web", "ann-firefox")

	// Committed with no Pusher running (a crash, or a restart).
	id1, id2 := e.message("one"), e.message("two")
	if _, ok := e.nextPush(); !ok {
		t.Fatal("no push job was committed with the messages")
	}
	gone := e.message("deleted before it was pushed")
	if err := e.st.DeleteMessage(context.Background(), e.ann.ID, gone); err != nil {
		t.Fatal(err)
	}

	e.run(e.fakes.dispatcher(true, true, true))
	e.waitIdle("the queued pushes", func() bool { return e.fakes.total() >= 6 })
	for _, key := range []string{ios, android, web} {
		got := e.fakes.pushes(key)
		if len(got) != 2 || !(got[0] == id1 && got[1] == id2 || got[0] == id2 && got[1] == id1) {
			t.Errorf("%s got %v, want %s and %s once each", key, got, id1, id2)
		}
	}
	if got := e.fakes.total(); got != 6 {
		t.Errorf("%d pushes, want 6 (none for the deleted message): %v", got, e.fakes.snapshot())
	}
}

// TestPusherShutdownKeepsUnsentPushes stops the Pusher while a provider
// hangs: the devices not yet reached are pushed after the next start, and a
// device already reached is not pushed twice.
func TestPusherShutdownKeepsUnsentPushes(t *testing.T) {
	e := newPWEnv(t)
	_, slow := e.device(e.ann, "ios", "slow-iphone")
	_, fast := e.device(e.ann, "ios", "fast-iphone")
	_, web := e.device(e.ann, "web", "ann-firefox")
	e.fakes.answer(slow, pwHang)
	stop := e.run(e.fakes.dispatcher(true, true, true))

	id := e.message("during shutdown")
	select {
	case <-e.fakes.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the hanging device was never pushed")
	}
	// A job sends to its devices side by side: the other two are reached
	// while slow hangs.
	e.waitFor("the other devices reached", func() bool { return e.fakes.successes(fast) == 1 && e.fakes.successes(web) == 1 })
	time.Sleep(100 * time.Millisecond) // and their answers are back
	// SIGTERM while the push to slow is in flight.
	stop()

	if _, ok := e.nextPush(); !ok {
		t.Fatal("stopping the Pusher mid-job dropped the pushes it had not made")
	}
	e.fakes.answer(slow, 0)
	e.run(e.fakes.dispatcher(true, true, true))
	e.waitIdle("the pushes after the restart", func() bool {
		return e.fakes.successes(slow) == 1 && e.fakes.successes(fast) == 1 && e.fakes.successes(web) == 1
	})
	for _, key := range []string{slow, fast, web} {
		if got := e.fakes.successes(key); got != 1 {
			t.Errorf("%s accepted %d pushes of %s, want 1 (all: %v)", key, got, id, e.fakes.pushes(key))
		}
	}
}
