package server

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// streamEmptyEvents runs the events sweep with a cutoff in the future, so
// that it deletes every event, as it does after a quiet day.
func streamEmptyEvents(t *testing.T, env *testEnv) {
	t.Helper()
	if _, err := env.st.DeleteEventsBefore(context.Background(), env.clock.Now().Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n := oidcCount(t, env, "SELECT count(*) FROM events"); n != 0 {
		t.Fatalf("%d events left after the sweep", n)
	}
}

func eventID(t *testing.T, ev sseEvent) int64 {
	t.Helper()
	n, err := strconv.ParseInt(ev.ID, 10, 64)
	if err != nil {
		t.Fatalf("event id %q: %v", ev.ID, err)
	}
	return n
}

// streamSendSeen sends n messages and returns the id of the last event the
// stream c received for them.
func streamSendSeen(t *testing.T, env *testEnv, c *sseClient, token string, n int) int64 {
	t.Helper()
	var last int64
	for i := range n {
		id := streamSend(env, token, "message "+strconv.Itoa(i))
		ev := c.next(streamWait)
		streamWantEvent(t, ev, "message.created", id)
		last = eventID(t, ev)
	}
	return last
}

// TestStreamResumeAfterEventsSwept: once the sweep has emptied the events
// table, new events still get ids above every id handed out before, so a
// client resuming from its last id receives every new event.
func TestStreamResumeAfterEventsSwept(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("resume@example.com")
	_, token := streamChannel(env, u, "resume")
	first := streamOpen(env, u.Token)
	first.waitComment("connected")
	last := streamSendSeen(t, env, first, token, 5)
	first.close()

	streamEmptyEvents(t, env)
	var want []string
	for i := range 3 {
		want = append(want, streamSend(env, token, "after "+strconv.Itoa(i)))
	}
	again := streamOpen(env, u.Token, "Last-Event-ID", strconv.FormatInt(last, 10))
	for _, id := range want {
		ev := again.next(streamWait)
		streamWantEvent(t, ev, "message.created", id)
		if n := eventID(t, ev); n <= last {
			t.Fatalf("new event id %d is not above the last one seen, %d", n, last)
		}
	}
}

// TestStreamResumeBeyondHistory: a Last-Event-ID whose successors are no
// longer kept, or that is newer than any event, gets a stream.reset event
// saying why, then every kept event of the user.
func TestStreamResumeBeyondHistory(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("history@example.com")
	_, token := streamChannel(env, u, "history")
	c := streamOpen(env, u.Token)
	c.waitComment("connected")
	early := streamSendSeen(t, env, c, token, 3)
	streamEmptyEvents(t, env)
	kept := []string{streamSend(env, token, "kept 1"), streamSend(env, token, "kept 2")}

	for _, tc := range []struct {
		name, lastID, reason string
	}{
		{"history swept", strconv.FormatInt(early-1, 10), "history_gone"},
		{"newer than any event", "999999", "unknown_event_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := streamOpen(env, u.Token, "Last-Event-ID", tc.lastID)
			reset := s.next(streamWait)
			if reset.Event != "stream.reset" || reset.ID != "" {
				t.Fatalf("first event = %s (id %q), want stream.reset without id", reset.Event, reset.ID)
			}
			if got := reset.JSON(t)["reason"]; got != tc.reason {
				t.Fatalf("reset reason %v, want %s", got, tc.reason)
			}
			for _, id := range kept {
				streamWantEvent(t, s.next(streamWait), "message.created", id)
			}
		})
	}

	// The last id seen is still served exactly: no reset.
	s := streamOpen(env, u.Token, "Last-Event-ID", strconv.FormatInt(early, 10))
	streamWantEvent(t, s.next(streamWait), "message.created", kept[0])
}
