package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/push"
	"github.com/heraldhq/herald/store"
)

// channel creates a channel of u.
func (e *pwEnv) channel(u *store.User) *store.Channel {
	e.t.Helper()
	ch := &store.Channel{UserID: u.ID, Name: "jobs"}
	if err := e.st.CreateChannel(context.Background(), ch); err != nil {
		e.t.Fatal(err)
	}
	return ch
}

// webDevices registers n web devices of u whose endpoints are on base
// ("http://host:port"), side by side so that the writer commits them in a
// few transactions.
func (e *pwEnv) webDevices(u *store.User, base string, n int) {
	e.t.Helper()
	sub := e.fakes.subscription("/x")
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := strings.Replace(sub, e.fakes.web.URL+"/x", fmt.Sprintf("%s/push/%s-%d", base, u.Name, i), 1)
			errs <- e.st.RegisterDevice(context.Background(), &store.Device{UserID: u.ID, Platform: "web",
				Name: fmt.Sprint(u.Name, i), PushToken: token})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			e.t.Fatal(err)
		}
	}
}

// answered sends n messages to ch calling back to url, each answered: a
// callback queued per message, as the server does it.
func (e *pwEnv) answered(ch *store.Channel, url string, n int) []string {
	e.t.Helper()
	return answered(e.t, e.st, e.clock.Now(), ch, url, n)
}

func answered(t *testing.T, st *store.Store, at time.Time, ch *store.Channel, url string, n int) []string {
	t.Helper()
	ctx := context.Background()
	var ids []string
	for i := range n {
		m := &store.Message{ChannelID: ch.ID, Title: fmt.Sprint("question ", i), Priority: "normal",
			Actions: json.RawMessage(`[{"type":"button","label":"OK","key":"ok"}]`), CallbackURL: &url}
		if err := st.CreateMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(map[string]any{"event": "response.received", "message_id": m.ID})
		if err := st.Respond(ctx, m.ID, body, at, &store.NewDelivery{ChannelID: ch.ID,
			Event: "response.received", URL: url, Body: body}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	return ids
}

// TestTarpitsDoNotStallOtherUsers: one user's 1,000 browsers whose push
// endpoints accept the connection and never answer, and 100 of their
// callbacks to such a receiver, hold a share of the workers only: another
// user's push reaches their browser, decrypted by its push service, and
// their callback reaches their receiver, each within 2 s. The workers are
// serve's defaults (4 push, 8 callback) over the clients serve builds.
func TestTarpitsDoNotStallOtherUsers(t *testing.T) {
	e := newPWEnv(t)
	tarpit := testkit.NewTarpit(t)
	mallory := e.user("mallory@example.com")
	malloryCh := e.channel(mallory)
	start := time.Now()
	e.webDevices(mallory, "http://"+tarpit.Addr(), 1000)
	t.Logf("1,000 devices registered in %s", time.Since(start).Round(time.Millisecond))
	_, annWeb := e.device(e.ann, "web", "ann-firefox")
	rc := newQTReceiver(t, 0)

	// Mallory's messages and callbacks are queued first.
	for i := range 10 {
		e.message(fmt.Sprint("to the tarpit ", i), func(m *store.Message) { m.ChannelID = malloryCh.ID })
	}
	e.answered(malloryCh, "http://"+tarpit.Addr()+"/callback", 100)

	guard := netguard.Policy{AllowLoopback: true}
	d := push.NewDispatcher(nil, nil, push.NewWebPush("mailto:ops@example.com", e.fakes.vapidPub, e.fakes.vapidPriv,
		guard.Client(30*time.Second)))
	e.runWith(d, PushConfig{})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	atRun(t, e.st, Config{Workers: 8, Timeout: 10 * time.Second, BackoffBase: time.Minute, BackoffMax: time.Hour,
		MaxAttempts: 8, Guard: guard, UserAgent: "Herald-Webhooks/test"}, Options{Logger: quiet, Now: e.clock.Now})
	// The tarpit holds what mallory's jobs may take, for 5 s each (the
	// first-byte bound), before their host is given a rest: ann sends
	// meanwhile.
	e.waitFor("the tarpit holding connections", func() bool { return tarpit.Accepted() >= 8 })

	pushed := e.message("Backup finished")
	called := e.answered(e.ch, rc.URL+"/hook", 1)[0]
	sent := time.Now() // both committed
	qtWaitFor(t, 2*time.Second, "ann's push and callback", func() bool {
		rc.mu.Lock()
		got := rc.got[called]
		rc.mu.Unlock()
		return got == 1 && slices.Contains(e.fakes.pushes(annWeb), pushed)
	})
	t.Logf("ann's push and callback arrived in %s; the tarpit took %d connections", time.Since(sent).Round(time.Millisecond),
		tarpit.Accepted())
	if got := e.fakes.webPayloads(annWeb); len(got) == 0 || got[0]["message_id"] != pushed || got[0]["title"] != "Backup finished" {
		t.Errorf("ann's browser got %v, want first the push of %s", got, pushed)
	}
}

// TestPusherSendsDevicesSideBySide: a job sends to its devices side by
// side, up to 8 at once: with 20 browsers whose push service
// holds each push until 8 are in flight (or 300 ms pass), 8 are in flight
// together, never more, and every browser gets the push.
func TestPusherSendsDevicesSideBySide(t *testing.T) {
	e := newPWEnv(t)
	var (
		mu             sync.Mutex
		inFlight, most int
		served         int
		full           = make(chan struct{})
		fullOnce       sync.Once
	)
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		if inFlight == 8 {
			fullOnce.Do(func() { close(full) })
		}
		mu.Unlock()
		select {
		case <-full:
		case <-time.After(300 * time.Millisecond):
		}
		mu.Lock()
		inFlight--
		served++
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(svc.Close)
	e.webDevices(e.ann, svc.URL, 20)
	e.runWith(e.fakes.guardedWeb(netguard.Policy{AllowLoopback: true}), PushConfig{Workers: 1})

	start := time.Now()
	e.message("to twenty browsers")
	e.waitIdle("every browser pushed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return served == 20
	})
	mu.Lock()
	defer mu.Unlock()
	t.Logf("20 pushes in %s, at most %d at once", time.Since(start).Round(time.Millisecond), most)
	if most != 8 {
		t.Errorf("at most %d pushes of the job were in flight at once, want 8", most)
	}
}

// TestPusherDeactivatesEndpointFailingEveryAttempt: a browser whose push
// endpoint fails every attempt (here with 503) is deactivated
// after the last, as one whose subscription is gone, and the log says so.
// A browser throttled with 429 and a phone whose provider fails keep
// their registration: neither says anything of the device.
func TestPusherDeactivatesEndpointFailingEveryAttempt(t *testing.T) {
	e := newPWEnv(t)
	dead, deadKey := e.device(e.ann, "web", "dead-browser")
	throttled, throttledKey := e.device(e.ann, "web", "throttled-browser")
	phone, phoneKey := e.device(e.ann, "ios", "flaky-iphone")
	e.fakes.answer(deadKey, http.StatusServiceUnavailable)
	e.fakes.answer(throttledKey, http.StatusTooManyRequests)
	e.fakes.answer(phoneKey, http.StatusServiceUnavailable)
	const attempts = 3
	e.runWith(e.fakes.dispatcher(true, false, true), PushConfig{Workers: 2, MaxAttempts: attempts})

	e.message("never arrives")
	for attempt := 1; attempt < attempts; attempt++ {
		e.waitFor(fmt.Sprintf("attempt %d", attempt), func() bool {
			at, ok := e.nextPush()
			return ok && at.After(e.clock.Now()) && len(e.fakes.pushes(deadKey)) == attempt &&
				len(e.fakes.pushes(throttledKey)) == attempt && len(e.fakes.pushes(phoneKey)) == attempt &&
				e.inFlight() == 0
		})
		e.clock.Advance(pushBackoffMax)
		e.st.Poke(store.TopicPush)
	}
	e.waitIdle("the last attempt", func() bool { return !e.active(dead) })
	for _, key := range []string{deadKey, throttledKey, phoneKey} {
		if got := len(e.fakes.pushes(key)); got != attempts {
			t.Errorf("%s: %d attempts, want %d", key, got, attempts)
		}
	}
	if !e.active(throttled) || !e.active(phone) {
		t.Errorf("throttled browser active %v, phone active %v; want both kept", e.active(throttled), e.active(phone))
	}
	if got := e.logs.String(); !strings.Contains(got, "endpoint failed every attempt; device deactivated") || !strings.Contains(got, dead.ID) {
		t.Errorf("the deactivation was not logged:\n%s", got)
	}
	// No more pushes to it.
	e.message("after")
	e.waitFor("the next message", func() bool { return len(e.fakes.pushes(throttledKey)) == attempts+1 })
	time.Sleep(50 * time.Millisecond) // the job's other pushes
	if got := len(e.fakes.pushes(deadKey)); got != attempts {
		t.Errorf("the deactivated browser got %d pushes, want %d", got, attempts)
	}
}
