package delivery

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// Urgent alerts end to end: the service's rules and sweep, the store, and
// the pusher sending to local APNs, FCM and Web Push services, on the
// test clock.

// urgentChannel gives e's channel an urgent policy: repeat every minute,
// expire after ten, escalate after escalate to each of escalation (who
// accept).
func (e *pwEnv) urgentChannel(svc *service.Service, escalate int, escalation ...*store.User) {
	e.t.Helper()
	ctx := context.Background()
	pol := store.UrgentPolicy{RepeatSeconds: 60, ExpireSeconds: 600, EscalateAfterSeconds: escalate}
	for _, u := range escalation {
		pol.Escalation = append(pol.Escalation, u.ID)
	}
	ch, err := svc.UpdateChannel(ctx, e.ann.ID, e.ch.ID, store.ChannelPatch{Urgent: store.Optional[store.UrgentPolicy]{Set: true, Value: &pol}})
	if err != nil {
		e.t.Fatal(err)
	}
	e.ch = ch
	for _, u := range escalation {
		invs, err := svc.Invitations(ctx, u)
		if err != nil || len(invs) != 1 {
			e.t.Fatalf("invitations of %s = %v, %v", u.Email, invs, err)
		}
		if _, err := svc.AnswerInvitation(ctx, u, invs[0].ID, true); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *pwEnv) sendUrgent(svc *service.Service) *store.Message {
	e.t.Helper()
	title := "disk /dev/sda failing on db1"
	p := &service.SendPayload{Title: &title, Priority: "urgent"}
	if err := service.CheckSend(p); err != nil {
		e.t.Fatal(err)
	}
	m, err := svc.Send(context.Background(), e.ch, p)
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// sweepAt moves the clock to start+at and sweeps the alerts.
func (e *pwEnv) sweepAt(svc *service.Service, start time.Time, at time.Duration) store.AlertSweep {
	e.t.Helper()
	e.clock.Set(start.Add(at))
	r, err := svc.SweepAlerts(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func newAlertService(e *pwEnv) *service.Service {
	return service.New(e.st, service.Options{Now: e.clock.Now})
}

func TestUrgentAlertRepeatsUntilAcknowledged(t *testing.T) {
	e := newPWEnv(t)
	svc := newAlertService(e)
	e.urgentChannel(svc, 0)
	phone, ios := e.device(e.ann, "ios", "ann-phone")
	_, web := e.device(e.ann, "web", "ann-browser")
	e.run(e.fakes.dispatcher(true, true, true))
	start := e.clock.Now()
	m := e.sendUrgent(svc)

	e.waitIdle("the first push", func() bool { return len(e.fakes.pushes(ios)) == 1 && len(e.fakes.pushes(web)) == 1 })
	for _, step := range []struct {
		at   time.Duration
		want int
	}{{time.Minute, 2}, {90 * time.Second, 2}, {2 * time.Minute, 3}} {
		e.sweepAt(svc, start, step.at)
		e.waitIdle("repeats", func() bool {
			return len(e.fakes.pushes(ios)) == step.want && len(e.fakes.pushes(web)) == step.want
		})
	}
	// Every repeat is the same notification, loud, and alerting again.
	e.fakes.mu.Lock()
	payloads := append([][]byte(nil), e.fakes.payloads[web]...)
	e.fakes.mu.Unlock()
	for _, raw := range payloads {
		var p struct {
			Tag      string `json:"tag"`
			Priority string `json:"priority"`
			Renotify bool   `json:"renotify"`
			Require  bool   `json:"require_interaction"`
			Actions  []struct {
				Key string `json:"key"`
			} `json:"actions"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		if p.Tag != "herald-"+m.ID || p.Priority != "urgent" || !p.Renotify || !p.Require || len(p.Actions) != 1 || p.Actions[0].Key != "acknowledge" {
			t.Errorf("web push payload %s: want the message's tag, priority urgent, renotify, require_interaction and the Acknowledge button", raw)
		}
	}

	e.clock.Set(start.Add(150 * time.Second))
	a, err := svc.RespondVia(context.Background(), e.ann, service.Via{Device: phone.ID}, m.ID, "acknowledge", nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.AlertState != store.AlertAcknowledged || a.Status != store.StatePending {
		t.Fatalf("acknowledge answered %+v; want the alert acknowledged and the message still pending", a)
	}
	got, err := e.st.Alert(context.Background(), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.AcknowledgedBy == nil || got.AcknowledgedBy.ID != e.ann.ID || got.AcknowledgedDevice != phone.ID ||
		!got.AcknowledgedAt.Equal(start.Add(150*time.Second)) || got.Repeats != 2 {
		t.Fatalf("alert after acknowledgement = %+v", got)
	}
	// The browser's notification is replaced, silently, as acknowledged.
	e.waitIdle("the update push", func() bool { return len(e.fakes.pushes(web)) == 4 })
	e.fakes.mu.Lock()
	last := e.fakes.payloads[web][3]
	e.fakes.mu.Unlock()
	var upd struct{ Type, Status string }
	if err := json.Unmarshal(last, &upd); err != nil || upd.Type != "update" || upd.Status != "acknowledged" {
		t.Fatalf("update push %s: want type update, status acknowledged", last)
	}
	for _, at := range []time.Duration{3 * time.Minute, 10 * time.Minute} {
		if r := e.sweepAt(svc, start, at); r.Claimed != 0 {
			t.Fatalf("an acknowledged alert was swept at +%s: %+v", at, r)
		}
	}
	e.waitIdle("nothing more", func() bool { return true })
	if n := len(e.fakes.pushes(ios)); n != 3 {
		t.Fatalf("the phone got %d pushes, want 3: no repeat after the acknowledgement", n)
	}
}

// A phone's push of an urgent message fails for a moment and is retried;
// the alert is acknowledged on another phone before the retry comes due,
// and the message stays pending. The retry is dropped: it would ring again
// with the Acknowledge button.
func TestUrgentAlertRetryDroppedOnceAcknowledged(t *testing.T) {
	e := newPWEnv(t)
	reg := prometheus.NewRegistry()
	e.registry = reg
	svc := newAlertService(e)
	e.urgentChannel(svc, 0)
	phone, phoneKey := e.device(e.ann, "ios", "ann-phone")
	_, flakyKey := e.device(e.ann, "android", "ann-pixel")
	e.fakes.answer(flakyKey, http.StatusServiceUnavailable)
	e.run(e.fakes.dispatcher(true, true, true))
	t0 := e.clock.Now()
	m := e.sendUrgent(svc)
	e.waitFor("the first pushes and the retry job", func() bool {
		at, ok := e.nextPush()
		return ok && at.Equal(t0.Add(pushBackoffBase)) && len(e.fakes.pushes(phoneKey)) == 1 && len(e.fakes.pushes(flakyKey)) == 1
	})

	a, err := svc.RespondVia(context.Background(), e.ann, service.Via{Device: phone.ID}, m.ID, "acknowledge", nil)
	if err != nil || a.AlertState != store.AlertAcknowledged || a.Status != store.StatePending {
		t.Fatalf("acknowledge: %+v, %v; want the alert acknowledged and the message pending", a, err)
	}
	e.fakes.answer(flakyKey, 0)
	e.clock.Advance(pushBackoffBase + time.Second)
	e.st.Poke(store.TopicPush)
	e.waitIdle("the retry, dropped", func() bool { return pushOutcomes(t, reg, "settled") == 1 })
	if n := len(e.fakes.pushes(flakyKey)); n != 1 {
		t.Fatalf("the flaky phone got %d pushes, want 1: the retry came after the acknowledgement", n)
	}
	if _, ok := e.nextPush(); ok {
		t.Fatal("a push job is left after the dropped retry")
	}
}

func TestUrgentAlertEscalatesToSecondPerson(t *testing.T) {
	e := newPWEnv(t)
	svc := newAlertService(e)
	bob := e.user("bob@example.com")
	e.urgentChannel(svc, 90, bob)
	_, annKey := e.device(e.ann, "ios", "ann-phone")
	bobPhone, bobKey := e.device(bob, "android", "bob-phone")
	e.run(e.fakes.dispatcher(true, true, true))
	start := e.clock.Now()
	m := e.sendUrgent(svc)
	e.waitIdle("the first push", func() bool { return len(e.fakes.pushes(annKey)) == 1 })

	e.sweepAt(svc, start, time.Minute)
	e.waitIdle("the first repeat", func() bool { return len(e.fakes.pushes(annKey)) == 2 })
	e.wantPushes(bobKey)
	// At +90 s bob is reached: his phone alone gets a push.
	if r := e.sweepAt(svc, start, 90*time.Second); r.Escalated != 1 || r.Repeated != 0 {
		t.Fatalf("sweep at +90 s = %+v, want one escalation", r)
	}
	e.waitIdle("bob's push", func() bool { return len(e.fakes.pushes(bobKey)) == 1 })
	e.wantPushes(annKey, m.ID, m.ID)
	// Repeats now reach both.
	e.sweepAt(svc, start, 2*time.Minute)
	e.waitIdle("a repeat to both", func() bool {
		return len(e.fakes.pushes(annKey)) == 3 && len(e.fakes.pushes(bobKey)) == 2
	})

	// bob sees the message and acknowledges it.
	if _, _, err := svc.MessageFor(context.Background(), bob, m.ID); err != nil {
		t.Fatalf("bob cannot see the message that reached him: %v", err)
	}
	if _, err := svc.RespondVia(context.Background(), bob, service.Via{Device: bobPhone.ID}, m.ID, "acknowledge", nil); err != nil {
		t.Fatal(err)
	}
	a, err := e.st.Alert(context.Background(), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.State != store.AlertAcknowledged || a.AcknowledgedBy.ID != bob.ID || len(a.Alerted) != 2 ||
		a.Alerted[0].ID != e.ann.ID || a.Alerted[1].ID != bob.ID || a.Alerted[1].Level != 1 ||
		!a.Alerted[1].AlertedAt.Equal(start.Add(90*time.Second)) {
		t.Fatalf("alert = %+v", a)
	}
}

func TestUrgentAlertExpiresAndCancels(t *testing.T) {
	e := newPWEnv(t)
	svc := newAlertService(e)
	e.urgentChannel(svc, 0)
	_, ios := e.device(e.ann, "ios", "ann-phone")
	e.run(e.fakes.dispatcher(true, true, true))
	start := e.clock.Now()
	expiring, cancelled := e.sendUrgent(svc), e.sendUrgent(svc)
	e.waitIdle("the first pushes", func() bool { return len(e.fakes.pushes(ios)) == 2 })

	a, err := svc.CancelAlertBySender(context.Background(), e.ch, cancelled.ID)
	if err != nil || a.State != store.AlertCancelled || a.CancelledBy != "sender" {
		t.Fatalf("cancel = %+v, %v", a, err)
	}
	// 9 repeats (+1 to +9 min) of the one not cancelled, then it expired.
	// Each push is done before the clock moves on: a job still leased
	// when the clock passes its lease would look abandoned.
	for at := time.Minute; at <= 10*time.Minute; at += time.Minute {
		e.sweepAt(svc, start, at)
		want := 2 + min(int(at/time.Minute), 9)
		e.waitIdle("the repeats", func() bool { return len(e.fakes.pushes(ios)) == want })
	}
	got, err := e.st.Alert(context.Background(), expiring.ID)
	if err != nil || got.State != store.AlertExpired || got.Repeats != 9 {
		t.Fatalf("alert = %+v, %v; want expired after 9 repeats", got, err)
	}
	e.sweepAt(svc, start, time.Hour)
	e.waitIdle("nothing more", func() bool { return true })
	if n := len(e.fakes.pushes(ios)); n != 11 {
		t.Fatalf("%d pushes, want 11", n)
	}
}

// TestUrgentAlertSurvivesRestart: the store, the service and the pusher
// stop in the middle of an alert and start again on the same database: the
// repeats go on, none twice and none missing beyond the interval.
func TestUrgentAlertSurvivesRestart(t *testing.T) {
	e := newPWEnv(t)
	svc := newAlertService(e)
	e.urgentChannel(svc, 0)
	_, ios := e.device(e.ann, "ios", "ann-phone")
	stop := e.run(e.fakes.dispatcher(true, true, true))
	start := e.clock.Now()
	m := e.sendUrgent(svc)
	e.sweepAt(svc, start, time.Minute)
	e.waitIdle("two pushes", func() bool { return len(e.fakes.pushes(ios)) == 2 })

	stop()
	if err := e.st.Close(); err != nil {
		t.Fatal(err)
	}
	// Down from +1 to +3.5 min: on the way back one repeat makes up the
	// missed ones, and the next is on the grid.
	e.clock.Set(start.Add(210 * time.Second))
	st, err := store.Open(context.Background(), e.dsn, store.Options{Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e.st = st
	svc = newAlertService(e)
	e.run(e.fakes.dispatcher(true, true, true))
	for _, at := range []time.Duration{210 * time.Second, 230 * time.Second, 4 * time.Minute} {
		e.sweepAt(svc, start, at)
	}
	e.waitIdle("the repeats after the restart", func() bool { return len(e.fakes.pushes(ios)) == 4 })
	a, err := st.Alert(context.Background(), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Repeats != 3 || !a.NextRepeatAt.Equal(start.Add(5*time.Minute)) {
		t.Fatalf("alert after the restart = %+v; want 3 repeats, the next at +5 min", a)
	}
}
