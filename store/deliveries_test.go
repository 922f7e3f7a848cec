package store

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestRecordAttemptLogged: the delivery log shows each attempt as recorded:
// when, how long, what error, and the status code, which an attempt that
// got no answer has none of; the delivery shows the last attempt's code.
func TestRecordAttemptLogged(t *testing.T) {
	ctx := context.Background()
	f := newPairFixture(t)
	m := &Message{ChannelID: f.channel.ID, Title: "Deploy?", Priority: "normal"}
	if err := f.s.CreateMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	body := json.RawMessage(`{"action":"approve"}`)
	if err := f.s.Respond(ctx, m.ID, body, time.Now(), &NewDelivery{ChannelID: f.channel.ID, Event: "response.received",
		URL: "https://hooks.example.com/h", Body: body}); err != nil {
		t.Fatal(err)
	}
	for i, step := range []struct {
		res  AttemptResult
		code *int
	}{
		{AttemptResult{At: time.Now(), Error: "connection refused", Duration: 1500 * time.Millisecond}, nil},
		{AttemptResult{At: time.Now().Add(time.Second), StatusCode: 503, Error: "receiver answered 503", Duration: 20 * time.Millisecond}, new(503)},
	} {
		jobs, err := f.s.ClaimDeliveries(ctx, 1, time.Minute)
		if err != nil || len(jobs) != 1 {
			t.Fatalf("claim: %v, %v", jobs, err)
		}
		if state, err := f.s.RecordAttempt(ctx, &jobs[0], step.res, 5, time.Now().Add(-time.Second)); err != nil || state != DeliveryPending {
			t.Fatalf("record attempt: %q, %v; want %q", state, err, DeliveryPending)
		}
		st, attempts, err := f.s.DeliveryLog(ctx, m.ID)
		if err != nil || len(attempts) != i+1 {
			t.Fatalf("log: %+v, %d attempts, %v", st, len(attempts), err)
		}
		a := attempts[i]
		if a.Attempt != i+1 || !a.At.Equal(step.res.At.Truncate(time.Millisecond)) || a.Duration != step.res.Duration || a.Error != step.res.Error {
			t.Errorf("attempt %d logged as %+v, want %+v", i+1, a, step.res)
		}
		if got := a.StatusCode; !sameCode(got, step.code) {
			t.Errorf("attempt %d: status code %s, want %s", i+1, showCode(got), showCode(step.code))
		}
		if got := st.LastStatusCode; !sameCode(got, step.code) {
			t.Errorf("after attempt %d: last status code %s, want %s", i+1, showCode(got), showCode(step.code))
		}
	}
}

func sameCode(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func showCode(c *int) string {
	if c == nil {
		return "none"
	}
	return fmt.Sprint(*c)
}

// TestRecordAttemptMovesMessage: each attempt moves the delivery on and
// the message's stream: the first attempt, delivery and dead-lettering
// each record a message.updated event (a further retry does not), and
// only dead-lettering turns the message's polling state to failed.
func TestRecordAttemptMovesMessage(t *testing.T) {
	ctx := context.Background()
	f := newPairFixture(t)
	const maxAttempts = 3
	for _, c := range []struct {
		name    string
		results []bool // success of each attempt
		states  []string
		events  []int // events recorded by each attempt
		polling string
	}{
		{"delivered at once", []bool{true}, []string{DeliveryDelivered}, []int{1}, StateSubmitted},
		{"delivered on the second attempt", []bool{false, true}, []string{DeliveryPending, DeliveryDelivered}, []int{1, 1}, StateSubmitted},
		{"dead-lettered", []bool{false, false, false}, []string{DeliveryPending, DeliveryPending, DeliveryFailed}, []int{1, 0, 1}, StateFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &Message{ChannelID: f.channel.ID, Title: c.name, Priority: "normal"}
			if err := f.s.CreateMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
			body := json.RawMessage(`{"action":"approve"}`)
			if err := f.s.Respond(ctx, m.ID, body, time.Now(), &NewDelivery{ChannelID: f.channel.ID, Event: "response.received",
				URL: "https://hooks.example.com/h", Body: body}); err != nil {
				t.Fatal(err)
			}
			last := lastEventID(t, f.s, f.owner.ID)
			for i, ok := range c.results {
				jobs, err := f.s.ClaimDeliveries(ctx, 1, time.Minute)
				if err != nil || len(jobs) != 1 || jobs[0].MessageID != m.ID {
					t.Fatalf("attempt %d: claim: %v, %v", i+1, jobs, err)
				}
				res := AttemptResult{At: time.Now(), StatusCode: 500, Error: "receiver answered 500", Success: ok}
				if ok {
					res = AttemptResult{At: time.Now(), StatusCode: 200, Success: true}
				}
				state, err := f.s.RecordAttempt(ctx, &jobs[0], res, maxAttempts, time.Now().Add(-time.Second))
				if err != nil || state != c.states[i] {
					t.Fatalf("attempt %d: %q, %v; want %q", i+1, state, err, c.states[i])
				}
				events, err := f.s.EventsAfter(ctx, f.owner.ID, last, 100)
				if err != nil {
					t.Fatal(err)
				}
				if len(events) != c.events[i] {
					t.Fatalf("attempt %d: events %+v, want %d", i+1, events, c.events[i])
				}
				for _, e := range events {
					if e.Type != EventUpdated || e.MessageID != m.ID {
						t.Errorf("attempt %d: event %+v, want %s of %s", i+1, e, EventUpdated, m.ID)
					}
					last = e.ID
				}
				st, _, err := f.s.DeliveryLog(ctx, m.ID)
				if err != nil || st.State != c.states[i] || st.Attempts != i+1 {
					t.Fatalf("attempt %d: delivery %+v, %v; want %s after %d attempts", i+1, st, err, c.states[i], i+1)
				}
			}
			got, err := f.s.Message(ctx, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != c.polling {
				t.Errorf("polling state = %q, want %q", got.State, c.polling)
			}
			if hasResponse := got.Response != nil; hasResponse != (c.polling == StateSubmitted) {
				t.Errorf("polling state %s with response %s", got.State, got.Response)
			}
		})
	}
}
