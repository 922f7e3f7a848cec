package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/push"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

func at(t *testing.T, zoneName, wall string) time.Time {
	t.Helper()
	loc, err := time.LoadLocation(zoneName)
	if err != nil {
		t.Fatal(err)
	}
	v, err := time.ParseInLocation("2006-01-02 15:04", wall, loc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestQuietDecision: the decision alone, across midnight, daylight saving
// changes (the night an hour shorter or longer, an end the change skips)
// and time zones far from the server's.
func TestQuietDecision(t *testing.T) {
	night := func(zone, mode string) *store.QuietHours {
		return &store.QuietHours{Enabled: true, Start: "22:00", End: "07:00", TimeZone: zone, Mode: mode}
	}
	berlin, ny := "Europe/Berlin", "America/New_York"
	tests := []struct {
		name     string
		q        *store.QuietHours
		now      time.Time
		priority string
		want     quietAction
		until    time.Time
	}{
		{"none", nil, at(t, berlin, "2026-01-15 23:00"), "normal", pushNow, time.Time{}},
		{"disabled", &store.QuietHours{Start: "22:00", End: "07:00", TimeZone: berlin, Mode: "hold"},
			at(t, berlin, "2026-01-15 23:00"), "normal", pushNow, time.Time{}},
		{"evening, held until tomorrow morning", night(berlin, "hold"), at(t, berlin, "2026-01-15 23:00"), "normal",
			pushHeld, at(t, berlin, "2026-01-16 07:00")},
		{"at the start", night(berlin, "hold"), at(t, berlin, "2026-01-15 22:00"), "low",
			pushHeld, at(t, berlin, "2026-01-16 07:00")},
		{"just after midnight, held until this morning", night(berlin, "hold"), at(t, berlin, "2026-01-16 00:00"), "high",
			pushHeld, at(t, berlin, "2026-01-16 07:00")},
		{"a minute before the end", night(berlin, "hold"), at(t, berlin, "2026-01-16 06:59"), "normal",
			pushHeld, at(t, berlin, "2026-01-16 07:00")},
		{"at the end", night(berlin, "hold"), at(t, berlin, "2026-01-16 07:00"), "normal", pushNow, time.Time{}},
		{"a minute before the start", night(berlin, "hold"), at(t, berlin, "2026-01-15 21:59"), "normal", pushNow, time.Time{}},
		{"urgent goes through", night(berlin, "hold"), at(t, berlin, "2026-01-15 23:00"), "urgent", pushNow, time.Time{}},
		{"urgent goes through silent mode too", night(berlin, "silent"), at(t, berlin, "2026-01-15 23:00"), "urgent", pushNow, time.Time{}},
		{"silent mode", night(berlin, "silent"), at(t, berlin, "2026-01-15 23:00"), "high", pushSilent, time.Time{}},
		{"silent mode outside the hours", night(berlin, "silent"), at(t, berlin, "2026-01-15 12:00"), "high", pushNow, time.Time{}},
		{"the server's clock in another zone", night("Asia/Tokyo", "hold"), time.Date(2026, 1, 15, 14, 0, 0, 0, time.UTC), "normal",
			pushHeld, at(t, "Asia/Tokyo", "2026-01-16 07:00")}, // 23:00 in Tokyo
		{"daytime hours", &store.QuietHours{Enabled: true, Start: "13:00", End: "15:00", TimeZone: "Asia/Tokyo", Mode: "hold"},
			at(t, "Asia/Tokyo", "2026-01-15 14:30"), "normal", pushHeld, at(t, "Asia/Tokyo", "2026-01-15 15:00")},
		{"daytime hours, after", &store.QuietHours{Enabled: true, Start: "13:00", End: "15:00", TimeZone: "Asia/Tokyo", Mode: "hold"},
			at(t, "Asia/Tokyo", "2026-01-15 23:00"), "normal", pushNow, time.Time{}},
		{"a zone 14 hours ahead", night("Pacific/Kiritimati", "hold"), time.Date(2026, 1, 15, 9, 30, 0, 0, time.UTC), "normal",
			pushHeld, time.Date(2026, 1, 15, 17, 0, 0, 0, time.UTC)},
		// 2026-03-08: New York springs forward at 02:00; the night is 8
		// hours on the clock and 7 in fact.
		{"spring forward", night(ny, "hold"), at(t, ny, "2026-03-07 23:00"), "normal",
			pushHeld, time.Date(2026, 3, 8, 11, 0, 0, 0, time.UTC)},
		// 2026-11-01: New York falls back at 02:00; 9 hours in fact.
		{"fall back", night(ny, "hold"), at(t, ny, "2026-10-31 23:00"), "normal",
			pushHeld, time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)},
		{"fall back, in the repeated hour", night(ny, "hold"), time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC), "normal", // 01:30 EST
			pushHeld, time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)},
		// An end at 02:30 on the night 02:00-03:00 does not exist: held a
		// minute at a time until the clock jumps past it.
		{"an end the change skips", &store.QuietHours{Enabled: true, Start: "00:00", End: "02:30", TimeZone: ny, Mode: "hold"},
			time.Date(2026, 3, 8, 6, 45, 10, 0, time.UTC), "normal", pushHeld, time.Date(2026, 3, 8, 6, 46, 0, 0, time.UTC)}, // 01:45 EST
		{"past the skipped end", &store.QuietHours{Enabled: true, Start: "00:00", End: "02:30", TimeZone: ny, Mode: "hold"},
			time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC), "normal", pushNow, time.Time{}}, // 03:00 EDT
		{"an unknown zone holds nothing", night("Mars/Olympus_Mons", "hold"), time.Date(2026, 1, 15, 23, 0, 0, 0, time.UTC), "normal",
			pushNow, time.Time{}},
		{"the server's zone is no user's", night("Local", "hold"), time.Date(2026, 1, 15, 23, 0, 0, 0, time.UTC), "normal",
			pushNow, time.Time{}},
		{"start equal to end holds nothing", &store.QuietHours{Enabled: true, Start: "07:00", End: "07:00", TimeZone: "UTC", Mode: "hold"},
			time.Date(2026, 1, 15, 8, 0, 0, 0, time.UTC), "normal", pushNow, time.Time{}},
		{"a bad time holds nothing", &store.QuietHours{Enabled: true, Start: "24:00", End: "07:00", TimeZone: "UTC", Mode: "hold"},
			time.Date(2026, 1, 15, 3, 0, 0, 0, time.UTC), "normal", pushNow, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, until := quietDecision(tt.q, tt.now, tt.priority)
			if got != tt.want || !until.Equal(tt.until) {
				t.Errorf("quietDecision at %v = %v until %v, want %v until %v", tt.now, got, until.UTC(), tt.want, tt.until.UTC())
			}
		})
	}
}

func (e *pwEnv) quietHours(u *store.User, q store.QuietHours) {
	e.t.Helper()
	if err := e.st.SetQuietHours(context.Background(), u.ID, q); err != nil {
		e.t.Fatal(err)
	}
}

// TestPusherQuietHours: with the hours on in hold mode, a push at 23:00
// reaches none of the user's devices and is queued for 07:00 with no
// attempt counted, while an approver without quiet hours gets it at once;
// an urgent message goes through; at 07:00 the held push arrives, once per
// device. In silent mode a push goes out at once, marked silent.
func TestPusherQuietHours(t *testing.T) {
	e := newPWEnv(t)
	e.clock.Set(at(t, "Europe/Berlin", "2026-01-15 23:00"))
	morning := at(t, "Europe/Berlin", "2026-01-16 07:00")
	_, ios := e.device(e.ann, "ios", "ann-iphone")
	_, android := e.device(e.ann, "android", "ann-pixel")
	_, web := e.device(e.ann, "web", "ann-firefox")
	bob := e.user("bob@example.com")
	_, bobWeb := e.device(bob, "web", "bob-chrome")
	rule := e.approvers(bob)
	e.quietHours(e.ann, store.QuietHours{Enabled: true, Start: "22:00", End: "07:00", TimeZone: "Europe/Berlin", Mode: store.QuietHold})
	e.run(e.fakes.dispatcher(true, true, true))

	held := e.message("nightly backup failed", func(m *store.Message) { m.Approval = rule })
	e.waitFor("the held push's retries", func() bool {
		next, ok := e.nextPush()
		return ok && next.Equal(morning) && e.inFlight() == 0 && len(e.fakes.pushes(bobWeb)) == 1
	})
	jobs, err := e.st.ClaimPushJobs(context.Background(), 10, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 0 {
		t.Fatalf("push jobs due at 23:00: %+v, want none", jobs)
	}
	e.wantPushes(ios)
	e.wantPushes(android)
	e.wantPushes(web)
	e.wantPushes(bobWeb, held)

	urgent := e.message("UPS on battery", func(m *store.Message) { m.Priority = "urgent" })
	e.waitFor("the urgent push", func() bool {
		return len(e.fakes.pushes(ios)) == 1 && len(e.fakes.pushes(android)) == 1 && len(e.fakes.pushes(web)) == 1
	})
	e.wantPushes(ios, urgent)

	e.clock.Set(morning)
	e.st.Poke(store.TopicPush)
	e.waitIdle("the held pushes at 07:00", func() bool { return len(e.fakes.pushes(web)) == 2 })
	e.wantPushes(ios, urgent, held)
	e.wantPushes(android, urgent, held)
	e.wantPushes(web, urgent, held)
	e.wantPushes(bobWeb, held)
	for _, p := range e.fakes.webPayloads(web) {
		if p["silent"] != nil {
			t.Errorf("a held push arrived marked silent: %v", p)
		}
	}

	e.clock.Set(at(t, "Europe/Berlin", "2026-01-16 23:30"))
	e.quietHours(e.ann, store.QuietHours{Enabled: true, Start: "22:00", End: "07:00", TimeZone: "Europe/Berlin", Mode: store.QuietSilent})
	silent := e.message("disk 91% full", func(m *store.Message) { m.Priority = "high" })
	e.waitIdle("the silent push", func() bool { return len(e.fakes.pushes(web)) == 3 })
	e.wantPushes(ios, urgent, held, silent)
	e.wantPushes(android, urgent, held, silent)
	if p := e.fakes.webPayloads(web)[2]; p["message_id"] != silent || p["silent"] != true {
		t.Errorf("web payload in silent mode = %v, want message %s marked silent", p, silent)
	}
}

// TestPusherQuietHoursSettled: pushes held by quiet hours in hold mode
// whose question is settled before the hours end (buttons answered, an
// approval resolved) reach no device at 07:00 and leave no job; a message
// without buttons, held the same way, is pushed at 07:00. A browser is
// told of each answer at once (an update push, which replaces only a
// notification it shows), never of the question.
func TestPusherQuietHoursSettled(t *testing.T) {
	e := newPWEnv(t)
	reg := prometheus.NewRegistry()
	e.registry = reg
	svc := service.New(e.st, service.Options{Now: e.clock.Now})
	e.clock.Set(at(t, "Europe/Berlin", "2026-01-15 23:00"))
	morning := at(t, "Europe/Berlin", "2026-01-16 07:00")
	_, ios := e.device(e.ann, "ios", "ann-iphone")
	_, android := e.device(e.ann, "android", "ann-pixel")
	_, web := e.device(e.ann, "web", "ann-firefox")
	rule := e.approvers(e.ann)
	e.quietHours(e.ann, store.QuietHours{Enabled: true, Start: "22:00", End: "07:00", TimeZone: "Europe/Berlin", Mode: store.QuietHold})
	e.run(e.fakes.dispatcher(true, true, true))

	question := e.message("restart nginx?", func(m *store.Message) {
		m.Actions = json.RawMessage(`[{"type":"button","key":"restart","label":"Restart"},{"type":"button","key":"leave","label":"Leave it"}]`)
	})
	approval := e.message("deploy to prod?", func(m *store.Message) { m.Approval = rule })
	news := e.message("nightly backup done")
	held := func(what string) {
		e.waitFor(what, func() bool {
			next, ok := e.nextPush()
			return ok && next.Equal(morning) && e.inFlight() == 0
		})
	}
	held("the held pushes")
	if got := e.fakes.total(); got != 0 {
		t.Fatalf("pushes during quiet hours: %v", e.fakes.snapshot())
	}

	ctx := context.Background()
	if a, err := svc.Respond(ctx, e.ann, question, "restart", nil); err != nil || a.Status != store.StateSubmitted {
		t.Fatalf("answer the question: %+v, %v", a, err)
	}
	if a, err := svc.Respond(ctx, e.ann, approval, service.ActionApprove, nil); err != nil || a.ApprovalStatus != store.ApprovalApproved {
		t.Fatalf("approve: %+v, %v", a, err)
	}
	held("the answers' update pushes")

	e.clock.Set(morning)
	e.st.Poke(store.TopicPush)
	e.waitIdle("the held pushes at 07:00", func() bool {
		return slices.Contains(e.fakes.pushes(ios), news) && slices.Contains(e.fakes.pushes(android), news)
	})
	e.wantPushes(ios, news)
	e.wantPushes(android, news)
	var shown []string
	for _, p := range e.fakes.webPayloads(web) {
		if p["type"] != push.KindUpdate {
			shown = append(shown, fmt.Sprint(p["message_id"]))
		}
	}
	if strings.Join(shown, ",") != news {
		t.Errorf("the browser was shown %v, want only %s", shown, news)
	}
	if got := pushOutcomes(t, reg, "settled"); got != 6 {
		t.Errorf("%v settled pushes counted, want 6 (two messages, three devices)", got)
	}
}

// pushOutcomes is the count of herald_pushes_total with outcome, summed
// over the platforms.
func pushOutcomes(t *testing.T, reg *prometheus.Registry, outcome string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0.0
	for _, f := range families {
		if f.GetName() != "herald_pushes_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

// TestSettled: which messages no longer wait for an answer, so that a held
// or retried push of them is dropped.
func TestSettled(t *testing.T) {
	buttons := json.RawMessage(`[{"type":"button","key":"ok","label":"OK"}]`)
	rule := &store.ApprovalRule{RequiredCount: 1}
	tests := []struct {
		name string
		m    store.Message
		want bool
	}{
		{"buttons, pending", store.Message{State: store.StatePending, Actions: buttons}, false},
		{"buttons, submitted", store.Message{State: store.StateSubmitted, Actions: buttons}, true},
		{"buttons, already read", store.Message{State: store.StateAlreadyRead, Actions: buttons}, true},
		{"buttons, expired", store.Message{State: store.StateExpired, Actions: buttons}, true},
		{"buttons, failed", store.Message{State: store.StateFailed, Actions: buttons}, true},
		{"plain, pending", store.Message{State: store.StatePending, Actions: json.RawMessage("[]")}, false},
		{"plain, not pending", store.Message{State: store.StateExpired, Actions: json.RawMessage(" [ ] ")}, false},
		{"no actions stored", store.Message{State: store.StateSubmitted}, false},
		{"links only, expired", store.Message{State: store.StateExpired, Actions: json.RawMessage(`[{"type":"url","label":"Open","value":"https://example.com"}]`)}, false},
		{"form, expired", store.Message{State: store.StateExpired, Actions: json.RawMessage(`[{"type":"form","key":"f","label":"F","fields":[]}]`)}, true},
		{"approval open", store.Message{State: store.StatePending, Actions: json.RawMessage("[]"), Approval: rule}, false},
		{"approval resolved", store.Message{State: store.StateSubmitted, Approval: rule, ApprovalStatus: store.ApprovalApproved}, true},
		{"approval expired", store.Message{State: store.StateExpired, Approval: rule, ApprovalStatus: store.ApprovalExpired}, true},
	}
	for _, tt := range tests {
		if got := settled(&tt.m); got != tt.want {
			t.Errorf("%s: settled = %v, want %v", tt.name, got, tt.want)
		}
	}
}
