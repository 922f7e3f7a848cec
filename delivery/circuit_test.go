package delivery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/push"
	"github.com/heraldhq/herald/store"
)

// TestCircuitRestsHostsThatKeepNotAnswering walks one host through its
// rests: three attempts in a row without an answer start a 30 s rest;
// when it ends one probe goes through while the others wait; a probe that
// fails doubles the rest, up to 10 minutes; an answer of any kind ends it.
// Another host is never affected, and an attempt that says nothing of its
// host (cut short) neither counts nor holds the probe.
func TestCircuitRestsHostsThatKeepNotAnswering(t *testing.T) {
	clk := testkit.NewClockAt(time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC))
	c := newCircuit(clk.Now)
	const dead, other = "http://tarpit.example:8080", "http://tarpit.example:8081"
	allowed := func(what, host string, want bool) time.Time {
		t.Helper()
		at, ok := c.allow(host)
		if ok != want {
			t.Fatalf("%s: allow(%s) = %v, want %v", what, host, ok, want)
		}
		return at
	}
	for i := range hostFailures {
		allowed(fmt.Sprint("attempt ", i+1), dead, true)
		if rests := c.done(dead, hostUnreachable); rests != (i == hostFailures-1) {
			t.Fatalf("failure %d started a rest: %v", i+1, rests)
		}
	}
	if at := allowed("resting", dead, false); !at.Equal(clk.Now().Add(hostRestBase)) {
		t.Errorf("deferred until %s, want %s", at, clk.Now().Add(hostRestBase))
	}
	allowed("another port of the same machine", other, true)
	c.done(other, hostAnswered)

	rest := hostRestBase
	for range 8 {
		clk.Advance(rest)
		allowed("the probe", dead, true)
		if at := allowed("while the probe is out", dead, false); !at.Equal(clk.Now().Add(rest)) {
			t.Errorf("while probing, deferred until %s, want %s", at, clk.Now().Add(rest))
		}
		if !c.done(dead, hostUnreachable) {
			t.Fatal("a failed probe did not lengthen the rest")
		}
		rest = min(2*rest, hostRestMax)
		if at := allowed("after a failed probe", dead, false); !at.Equal(clk.Now().Add(rest)) {
			t.Errorf("after a failed probe, deferred until %s, want %s (rest %s)", at, clk.Now().Add(rest), rest)
		}
	}
	if rest != hostRestMax {
		t.Fatalf("the rest grew to %s, want capped at %s", rest, hostRestMax)
	}

	clk.Advance(rest)
	allowed("a probe cut short", dead, true)
	c.done(dead, hostUnknown)
	allowed("the next probe", dead, true)
	c.done(dead, hostAnswered) // it answers again, whatever it said
	for i := range hostFailures + 1 {
		allowed(fmt.Sprint("after the answer, attempt ", i+1), dead, true)
		if i < hostFailures-1 {
			c.done(dead, hostUnreachable) // counting from zero again
		} else {
			c.done(dead, hostAnswered)
		}
	}
}

// TestOutcomeOf: only an attempt that got no answer from its host counts
// against it.
func TestOutcomeOf(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, tc := range []struct {
		name string
		err  error
		cut  bool
		want hostOutcome
	}{
		{"answered", nil, false, hostAnswered},
		{"refused", refused, false, hostUnreachable},
		{"deadline", context.DeadlineExceeded, false, hostUnreachable},
		{"closed without an answer", io.ErrUnexpectedEOF, false, hostUnreachable},
		{"wrapped", fmt.Errorf("push: webpush: Post https://push.example: %w", refused), false, hostUnreachable},
		{"shutting down", context.Canceled, true, hostUnknown},
		{"blocked", &netguard.BlockedError{}, false, hostUnknown},
		{"no connection made", errors.New("read channel secret"), false, hostUnknown},
	} {
		if got := outcomeOf(tc.err, tc.cut); got != tc.want {
			t.Errorf("%s: outcomeOf(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
	if got, want := hostOf("HTTPS://Hooks.Example.com:8443/h?token=s3cret"), "https://hooks.example.com:8443"; got != want {
		t.Errorf("hostOf = %q, want %q", got, want)
	}
}

// TestQueueRestsTarpitHost: after three callbacks to a receiver that never
// answers time out, the other callbacks to that host are handed back, due
// when its rest ends, with no attempt made or counted; a callback to
// another host goes out meanwhile.
func TestQueueRestsTarpitHost(t *testing.T) {
	clk := testkit.NewClockAt(time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC))
	tarpit := testkit.NewTarpit(t)
	st, _, first := atEnv(t, clk, "http://"+tarpit.Addr()+"/hook/first")
	u := &store.User{Email: "other@example.com", Plan: "free"}
	if err := st.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	ch := &store.Channel{UserID: u.ID, Name: "jobs"}
	if err := st.CreateChannel(context.Background(), ch); err != nil {
		t.Fatal(err)
	}
	stuck := []string{first}
	for i := range 5 {
		stuck = append(stuck, answered(t, st, clk.Now(), ch, fmt.Sprintf("http://%s/hook/%d", tarpit.Addr(), i), 1)...)
	}
	rc := newQTReceiver(t, 0)
	fine := answered(t, st, clk.Now(), ch, rc.URL+"/hook", 1)[0]

	var logs lockedBuffer
	atRun(t, st, Config{Workers: 1, Timeout: 5 * time.Second, FirstByte: 200 * time.Millisecond,
		BackoffBase: time.Hour, BackoffMax: time.Hour, MaxAttempts: 8, Guard: netguard.Policy{AllowLoopback: true}},
		Options{Now: clk.Now, Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	qtWaitFor(t, 10*time.Second, "the other host's callback", func() bool {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return rc.got[fine] == 1
	})
	restEnd := clk.Now().Add(hostRestBase)
	qtWaitFor(t, 10*time.Second, "every tarpit callback tried or deferred", func() bool {
		for _, id := range stuck {
			d, _, err := st.DeliveryLog(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if d.NextAttemptAt == nil || !d.NextAttemptAt.After(clk.Now()) {
				return false
			}
		}
		return true
	})
	tried, deferred := 0, 0
	for _, id := range stuck {
		d, attempts, _ := st.DeliveryLog(context.Background(), id)
		switch {
		case len(attempts) == 1 && attempts[0].Error == errTimedOut && d.NextAttemptAt.Equal(clk.Now().Add(time.Hour)):
			tried++
		case len(attempts) == 0 && d.Attempts == 0 && d.NextAttemptAt.Equal(restEnd):
			deferred++
		default:
			t.Errorf("callback %s: %+v, attempts %+v; want one timed out, or none and due at the rest's end %s", id, d, attempts, restEnd)
		}
	}
	if got := tarpit.Accepted(); got != hostFailures {
		t.Errorf("the tarpit took %d connections, want %d", got, hostFailures)
	}
	if tried != hostFailures || deferred != len(stuck)-hostFailures {
		t.Errorf("of %d callbacks to the tarpit, %d tried and %d deferred; want %d tried", len(stuck), tried, deferred, hostFailures)
	}
	if !strings.Contains(logs.String(), "receiver's host keeps not answering") {
		t.Errorf("the rest was not logged:\n%s", logs.String())
	}
}

// TestPusherRestsTarpitHost: once a Web Push host timed out three times,
// the next pushes to its endpoints are queued again for when its rest
// ends, with no attempt counted and no connection made, while the other
// browsers get theirs.
func TestPusherRestsTarpitHost(t *testing.T) {
	e := newPWEnv(t)
	tarpit := testkit.NewTarpit(t)
	e.webDevices(e.ann, "http://"+tarpit.Addr(), 5)
	browser, web := e.device(e.ann, "web", "ann-firefox")
	client := netguard.Policy{AllowLoopback: true}.ClientWith(netguard.Limits{FirstByte: 200 * time.Millisecond, Total: 5 * time.Second})
	stop := e.runWith(push.NewDispatcher(nil, nil, push.NewWebPush("mailto:ops@example.com", e.fakes.vapidPub, e.fakes.vapidPriv, client)),
		PushConfig{Workers: 1})

	first := e.message("first")
	e.waitFor("the first push", func() bool { return len(e.fakes.pushes(web)) == 1 && tarpit.Accepted() == 5 })
	second := e.message("second")
	e.waitFor("the second push", func() bool { return len(e.fakes.pushes(web)) == 2 })
	stop() // once the job in flight has queued its retries
	if got := tarpit.Accepted(); got != 5 {
		t.Errorf("the tarpit took %d connections, want 5 (the first push only)", got)
	}
	e.clock.Advance(hostRestBase)
	jobs, err := e.st.ClaimPushJobs(context.Background(), 100, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	byMessage := map[string][]int{}
	for _, j := range jobs {
		if j.DeviceID != browser.ID { // its push may be cut by the stop, and kept
			byMessage[j.MessageID] = append(byMessage[j.MessageID], j.Attempts)
		}
	}
	if fmt.Sprint(byMessage[first]) != "[1 1 1 1 1]" || fmt.Sprint(byMessage[second]) != "[0 0 0 0 0]" {
		t.Errorf("retries by message: first %v, second %v; want 5 after one attempt, and 5 with none counted",
			byMessage[first], byMessage[second])
	}
}
