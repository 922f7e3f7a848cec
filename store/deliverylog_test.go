package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestDeliveryLogNextAttempt: a pending delivery shows when it is due
// again; a finished one shows no next attempt, whatever the row holds.
func TestDeliveryLogNextAttempt(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		f := newPollFixture(t, dsn)
		body := json.RawMessage(`{"action":"approve"}`)
		if err := f.s.Respond(ctx, f.msg, body, time.Now(), &NewDelivery{ChannelID: f.channel, Event: "response.received",
			URL: "https://hooks.example.com/h", Body: body}); err != nil {
			t.Fatal(err)
		}
		code := 500
		for _, step := range []struct {
			res   AttemptResult
			state string
			next  bool
		}{
			{AttemptResult{At: time.Now(), StatusCode: code, Error: "receiver answered 500"}, DeliveryPending, true},
			{AttemptResult{At: time.Now(), StatusCode: 200, Success: true}, DeliveryDelivered, false},
		} {
			jobs, err := f.s.ClaimDeliveries(ctx, 1, time.Minute)
			if err != nil || len(jobs) != 1 {
				t.Fatalf("claim: %v, %v", jobs, err)
			}
			retryAt := time.Now().Add(time.Hour).Truncate(time.Millisecond)
			if state, err := f.s.RecordAttempt(ctx, &jobs[0], step.res, 5, retryAt); err != nil || state != step.state {
				t.Fatalf("record attempt: %q, %v; want %q", state, err, step.state)
			}
			st, attempts, err := f.s.DeliveryLog(ctx, f.msg)
			if err != nil || st.State != step.state || len(attempts) != jobs[0].Attempts+1 {
				t.Fatalf("log: %+v, %d attempts, %v", st, len(attempts), err)
			}
			if step.next && (st.NextAttemptAt == nil || !st.NextAttemptAt.Equal(retryAt)) {
				t.Errorf("%s delivery: next attempt %v, want %s", st.State, st.NextAttemptAt, retryAt)
			}
			if !step.next && st.NextAttemptAt != nil {
				t.Errorf("%s delivery: next attempt %v, want none", st.State, st.NextAttemptAt)
			}
			// The pending one is due again only at retryAt: bring it forward.
			if err := f.s.update(ctx, func(tx *writeTx) error {
				_, err := tx.Exec("UPDATE deliveries SET next_attempt_at = 0")
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
	})
}
