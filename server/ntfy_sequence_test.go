package server

import (
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/ntfy"
	"github.com/heraldhq/herald/store"
)

// TestNtfySequencesAndSchedule: a message with a sender's sequence id
// streams under it, and so does its deletion, read once the message is
// gone; a scheduled message is held back unless scheduled=1; a cleared
// event (the sequence rules' message.cleared) is ntfy's message_clear.
func TestNtfySequencesAndSchedule(t *testing.T) {
	t.Parallel()
	f := ntfySetup(t)
	env := f.env
	c := ntfyOpen(env, "/"+f.token+"/json", f.auth)
	c.next() // open
	db := env.rawDB(t)
	defer db.Close()

	// A scheduled message: its creation is streamed at send time, before
	// it is due, only to scheduled=1.
	later := env.do(200, "POST", "/v1/send/"+f.token, map[string]any{"title": "later"}, "").Str("id")
	due := env.clock.Now().Add(time.Hour)
	if _, err := db.Exec(`UPDATE messages SET deliver_at = $1, sequence_id = 'backup-nightly' WHERE id = $2`, due.UnixMilli(), later); err != nil {
		t.Fatal(err)
	}
	if got := ntfyPoll(env, "/"+f.token+"/json?poll=1", f.auth); len(got) != 0 {
		t.Fatalf("poll before it is due: %v, want nothing", got)
	}
	got := ntfyPoll(env, "/"+f.token+"/json?poll=1&scheduled=1", f.auth)
	if len(got) != 1 || got[0].str("sequence_id") != "backup-nightly" || got[0]["time"] != float64(due.Unix()) {
		t.Fatalf("poll with scheduled=1: %v, want the message at its time", got)
	}

	// Streamed under its sequence, then deleted: the deletion names it.
	seqd := streamSend(env, f.token, "in a sequence")
	if _, err := db.Exec(`UPDATE messages SET sequence_id = 'disk-alert' WHERE id = $1`, seqd); err != nil {
		t.Fatal(err)
	}
	env.do(200, "POST", "/v1/messages/"+seqd+"/respond", map[string]any{"action": "ack"}, f.ann.Token)
	for l := c.next(); l.str("sequence_id") != "disk-alert"; l = c.next() {
	}
	env.do(200, "DELETE", "/v1/messages/"+seqd, nil, f.ann.Token)
	l := c.next()
	for l.str("event") == ntfy.EventMessage {
		l = c.next()
	}
	wantLine(t, l, ntfy.EventMessageDelete, "disk-alert")

	// message.cleared, as the sequence rules will write it.
	fe := &frameEvent{event: store.Event{ID: 77, UserID: f.ann.ID, Type: store.EventCleared, MessageID: later, ChannelID: f.chID,
		CreatedAt: env.clock.Now()}, msg: &store.Message{ID: later, ChannelID: f.chID, SequenceID: "backup-nightly"}}
	n := &ntfySub{s: env.s, viewer: f.ann.User, topics: map[string]string{f.chID: f.token}}
	b, msg, ok := n.line(&hub.Frame{ID: 77, User: f.ann.ID, Meta: fe})
	if !ok || msg.Event != ntfy.EventMessageClear || msg.SequenceID != "backup-nightly" || msg.ID != ntfyEventID(77) {
		t.Fatalf("cleared: %s, want message_clear of backup-nightly", b)
	}
	if id, ok := parseNtfyEventID(ntfyEventID(1 << 40)); !ok || id != 1<<40 {
		t.Fatalf("event id %s does not read back", strconv.FormatInt(1<<40, 10))
	}
}

// TestNtfySeveralTopics: one subscription to two channels names each
// line's channel by the token the client used, and skips other channels.
func TestNtfySeveralTopics(t *testing.T) {
	t.Parallel()
	f := ntfySetup(t)
	_, second := streamChannel(f.env, f.ann, "second")
	_, third := streamChannel(f.env, f.ann, "not subscribed")
	c := ntfyOpen(f.env, "/"+f.token+","+second+"/json", f.auth)
	if open := c.next(); open.str("topic") != f.token+","+second {
		t.Fatalf("open %v, want both topics", open)
	}
	streamSend(f.env, third, "elsewhere")
	id := streamSend(f.env, second, "to the second")
	l := c.next()
	wantLine(t, l, ntfy.EventMessage, id)
	if l.str("topic") != second {
		t.Fatalf("topic %q, want the second channel's token", l.str("topic"))
	}
	id = streamSend(f.env, f.token, "to the first")
	if l := c.next(); l.str("sequence_id") != id || l.str("topic") != f.token {
		t.Fatalf("line %v, want the first channel's message under its token", l)
	}
}

// TestNtfyScheduledBeforeItGoesOut: scheduled=1 shows a message published
// with a delay while it waits, as ntfy does, in a poll and at the start of
// a live stream that asks for what is kept; without scheduled=1, or from
// now on (since=none), it shows only when it goes out. Once out, its
// event's line replaces it.
func TestNtfyScheduledBeforeItGoesOut(t *testing.T) {
	t.Parallel()
	f := ntfySetup(t)
	env := f.env
	sent := streamSend(env, f.token, "sent at once")
	env.clock.Advance(time.Second)
	pub, _ := ntfyPublish(t, env, 200, "POST", "/"+f.token, []byte("backup in two hours"), "In", "2h")
	stored, err := env.st.ListMessages(t.Context(), store.MessageQuery{UserID: f.ann.ID, ChannelID: f.chID, State: store.StateScheduled, Limit: 10})
	if err != nil || len(stored.Messages) != 1 {
		t.Fatalf("scheduled messages %v, %v: want the one published with In: 2h", stored, err)
	}
	later := stored.Messages[0]
	due := later.DeliverAt.Unix()
	if pub.Time != due {
		t.Fatalf("publish answered time %d, want %d (when it goes out)", pub.Time, due)
	}

	if got := ntfyPoll(env, "/"+f.token+"/json?poll=1", f.auth); len(got) != 1 || got[0].str("sequence_id") != sent {
		t.Fatalf("poll without scheduled=1: %v, want only the message sent at once", got)
	}
	got := ntfyPoll(env, "/"+f.token+"/json?poll=1&scheduled=1", f.auth)
	if len(got) != 2 || got[0].str("sequence_id") != sent {
		t.Fatalf("poll with scheduled=1: %v, want the message sent, then the scheduled one", got)
	}
	if l := got[1]; l.str("id") != later.ID || l.str("sequence_id") != later.ID || l["time"] != float64(due) ||
		l.str("message") != "backup in two hours" || l.str("topic") != f.token {
		t.Fatalf("scheduled line %v, want message %s at %d", l, later.ID, due)
	}
	if got := ntfyPoll(env, "/"+f.token+"/json?poll=1&scheduled=1&since=none", f.auth); len(got) != 0 {
		t.Fatalf("poll since=none: %v, want nothing", got)
	}
	// since= takes the scheduled line's id as any other: what came after.
	if got := ntfyPoll(env, "/"+f.token+"/json?poll=1&since="+later.ID, f.auth); len(got) != 0 {
		t.Fatalf("poll since the scheduled message: %v, want nothing", got)
	}

	// A live stream asking for what is kept: the history, the scheduled
	// message, then what comes.
	c := ntfyOpen(env, "/"+f.token+"/json?since=all&sched=1", f.auth)
	c.next() // open
	wantLine(t, c.next(), ntfy.EventMessage, sent)
	if l := c.next(); l.str("id") != later.ID || l["time"] != float64(due) {
		t.Fatalf("live stream: %v, want the scheduled message", l)
	}
	now := ntfyOpen(env, "/"+f.token+"/json?scheduled=1", f.auth)
	now.next() // open

	// It goes out: both streams get its event's line, under its sequence.
	env.clock.Advance(3 * time.Hour)
	if _, err := env.s.svc.ReleaseScheduled(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*ntfyStream{c, now} {
		l := s.next()
		wantLine(t, l, ntfy.EventMessage, later.ID)
		if l.str("id") == later.ID {
			t.Fatalf("line %v after it went out, want its event's id", l)
		}
	}
	got = ntfyPoll(env, "/"+f.token+"/json?poll=1&scheduled=1", f.auth)
	if len(got) != 2 || got[1].str("sequence_id") != later.ID || got[1].str("id") == later.ID {
		t.Fatalf("poll after it went out: %v, want its event's line once", got)
	}
}
