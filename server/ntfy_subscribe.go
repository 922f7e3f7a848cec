package server

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/ntfy"
	"github.com/heraldhq/herald/store"
)

// ntfy subscriptions: GET /<topics>/json, /sse, /raw and /ws, where each
// topic is a channel's webhook token. A subscription is a live stream of
// the user's events (the hub's, like GET /v1/stream, and so across
// replicas), written as ntfy's lines, of the channels it names only: an
// open event first, then what since= asks for from the stream's history,
// then every event as it commits, with a keepalive when idle. poll=1 writes
// what since= asks for and ends.

// ntfyKeepalives is how many of the native stream's heartbeat intervals
// separate an ntfy stream's keepalives: 45 s, as ntfy's, which the ntfy
// app's 77-second read timeout was made for; fewer wake-ups of phones.
const ntfyKeepalives = 3

// ntfyParams are a subscription's parameters.
type ntfyParams struct {
	poll, scheduled bool
	since           string
	filter          ntfyFilter
}

// ntfyParam reads a parameter as ntfy does: the first of the headers
// named, else the first of the lower-case query parameters.
func ntfyParam(r *http.Request, names ...string) string {
	for _, n := range names {
		if v := r.Header.Get(n); v != "" {
			return strings.TrimSpace(v)
		}
	}
	q := r.URL.Query()
	for _, n := range names {
		if v := q.Get(strings.ToLower(n)); v != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func ntfyBool(r *http.Request, names ...string) bool {
	switch strings.ToLower(ntfyParam(r, names...)) {
	case "1", "yes", "true":
		return true
	}
	return false
}

// parseNtfyParams reads poll, scheduled, since and the filters.
func parseNtfyParams(r *http.Request) (ntfyParams, error) {
	p := ntfyParams{
		poll:      ntfyBool(r, "X-Poll", "Poll", "Po"),
		scheduled: ntfyBool(r, "X-Scheduled", "Scheduled", "Sched"),
		since:     ntfyParam(r, "X-Since", "Since", "Si"),
	}
	f, err := parseNtfyFilter(r)
	p.filter = f
	return p, err
}

// ntfyFilter is a subscription's filters; they apply to message events.
type ntfyFilter struct {
	id, message, title string
	tags               []string // all of them
	priorities         []int    // any of them
}

// ntfyPriorityNames are ntfy's priority words.
var ntfyPriorityNames = map[string]int{"min": 1, "low": 2, "default": 3, "high": 4, "max": 5, "urgent": 5}

func parseNtfyFilter(r *http.Request) (ntfyFilter, error) {
	f := ntfyFilter{id: ntfyParam(r, "X-ID", "ID"), message: ntfyParam(r, "X-Message", "Message", "M"),
		title: ntfyParam(r, "X-Title", "Title", "T")}
	for t := range strings.SplitSeq(ntfyParam(r, "X-Tags", "Tags", "Tag", "Ta"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			f.tags = append(f.tags, t)
		}
	}
	for p := range strings.SplitSeq(ntfyParam(r, "X-Priority", "Priority", "Prio", "P"), ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" {
			continue
		}
		n, ok := ntfyPriorityNames[p]
		if !ok {
			v, err := strconv.Atoi(p)
			if err != nil || v < 1 || v > 5 {
				return f, errInvalidPayload("priority %q is not one of 1-5, min, low, default, high, max or urgent", p)
			}
			n = v
		}
		f.priorities = append(f.priorities, n)
	}
	return f, nil
}

// pass reports whether msg passes the filters; they let every event that
// is not a message through.
func (f *ntfyFilter) pass(msg *ntfy.Message) bool {
	if msg.Event != ntfy.EventMessage {
		return true
	}
	prio := msg.Priority
	if prio == 0 {
		prio = 3
	}
	return (f.id == "" || msg.ID == f.id) && (f.message == "" || msg.Message == f.message) &&
		(f.title == "" || msg.Title == f.title) &&
		(len(f.priorities) == 0 || slices.Contains(f.priorities, prio)) &&
		!slices.ContainsFunc(f.tags, func(t string) bool { return !slices.Contains(msg.Tags, t) })
}

// ntfyStart is the place in the stream's history after which since= asks
// for the user's events: all (what the history keeps, EventHistory), none
// (from now; the default of a stream), latest (the newest message of the
// topics), the id of an ntfy line (after it: a resume), a Herald message
// id (after its creation), a Unix time or a duration ago.
func (s *Server) ntfyStart(ctx context.Context, who *store.User, channelIDs []string, p ntfyParams) (int64, error) {
	h, err := s.st.EventHistory(ctx)
	if err != nil {
		return 0, err
	}
	since := p.since
	if since == "" {
		since = "none"
		if p.poll {
			since = "all"
		}
	}
	kept := func(id int64, ok bool, err error) (int64, error) {
		if !ok || err != nil {
			return h.Last, err
		}
		return max(id-1, h.Floor), nil
	}
	switch since {
	case "all":
		return h.Floor, nil
	case "none":
		return h.Last, nil
	case "latest":
		return kept(s.st.LastUserMessageEventIn(ctx, who.ID, channelIDs))
	}
	if id, ok := parseNtfyEventID(since); ok {
		if id > h.Last || id < h.Floor {
			return h.Floor, nil // unknown or swept: what is kept follows
		}
		return id, nil
	}
	if strings.HasPrefix(since, "msg_") {
		id, ok, err := s.st.FirstUserEventOf(ctx, who.ID, since)
		if err != nil {
			return 0, err
		}
		if ok {
			return id, nil
		}
		// No event of it yet: a scheduled message (its line's id,
		// ntfyScheduled), after whose creation the rest is.
		created, ok, err := s.svc.ScheduledCreation(ctx, who, since)
		if err != nil || !ok {
			return h.Floor, err
		}
		return kept(s.st.FirstUserEventSince(ctx, who.ID, created))
	}
	var t time.Time
	if n, err := strconv.ParseInt(since, 10, 64); err == nil {
		t = time.Unix(min(max(n, 0), ntfy.MaxUnixTime), 0)
	} else if d, err := time.ParseDuration(since); err == nil && d >= 0 {
		t = s.now().Add(-d)
	} else {
		return 0, errInvalidPayload("since must be all, latest, none, the id of a message, a Unix time or a duration such as 10m")
	}
	return kept(s.st.FirstUserEventSince(ctx, who.ID, t))
}

// handleNtfySubscribe answers GET /<topics>/json, /sse, /raw and /ws.
func (s *Server) handleNtfySubscribe(w http.ResponseWriter, r *http.Request, topics []string, format string) {
	if err := s.ntfySubscribe(w, r, topics, format); err != nil {
		s.writeNtfyError(w, r, err)
	}
}

func (s *Server) ntfySubscribe(w http.ResponseWriter, r *http.Request, topics []string, format string) error {
	ctx := r.Context()
	rd, err := s.ntfyAuthenticate(w, r)
	if err != nil {
		return err
	}
	if err := s.rateLimit(w, r, "api|"+rd.who.user.ID+"|ntfy subscribe", s.cfg.Plans.Limits(rd.who.user.Plan).APIPerMinute); err != nil {
		return err
	}
	p, err := parseNtfyParams(r)
	if err != nil {
		return err
	}
	channels, err := s.svc.ChannelsToRead(ctx, rd.who.user, topics)
	if err != nil {
		return err
	}
	capability, err := s.svc.AnswerCapabilities(ctx, rd.who.user, rd.cred)
	if err != nil {
		return err
	}
	n := &ntfySub{s: s, viewer: rd.who.user, topics: map[string]string{}, all: strings.Join(topics, ","),
		filter: p.filter, scheduled: p.scheduled, capability: capability}
	var ids []string
	for i, ch := range channels {
		n.topics[ch.ID] = topics[i]
		ids = append(ids, ch.ID)
	}
	after, err := s.ntfyStart(ctx, rd.who.user, ids, p)
	if err != nil {
		return err
	}
	if n.pending, err = s.ntfyScheduled(ctx, rd.who.user, channels, p); err != nil {
		return err
	}
	if format == "ws" {
		return s.ntfyWebSocket(w, r, rd, n, p, after)
	}
	out := &ntfyHTTPOut{sseOut: newSSEOut(w), n: n, format: format}
	h := w.Header()
	h.Set("Content-Type", ntfyContentTypes[format])
	if p.poll {
		w.WriteHeader(http.StatusOK)
		return s.ntfyPoll(ctx, rd, n, after, out.write)
	}
	return s.ntfyLive(w, r, rd, after, n.pending, out, func() (context.Context, error) {
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		if r.ProtoMajor == 1 {
			h.Set("Transfer-Encoding", "identity") // as GET /v1/stream: see handleStream
		}
		w.WriteHeader(http.StatusOK)
		out.arm()
		return ctx, out.write(n.notice(ntfy.EventOpen))
	})
}

// ntfyContentTypes are the subscription formats' content types; ntfy
// names the charset, which Android's clients need.
var ntfyContentTypes = map[string]string{
	"json": "application/x-ndjson; charset=utf-8",
	"sse":  "text/event-stream; charset=utf-8",
	"raw":  "text/plain; charset=utf-8",
}

// ntfyLive runs a live subscription from after on out: open (which starts
// the response, writes the open event and returns the context that ends
// with the connection) runs once the hub has the subscriber, then the
// history since after, then the scheduled messages asked for (pending),
// then the live events.
func (s *Server) ntfyLive(w http.ResponseWriter, r *http.Request, rd *ntfyReader, after int64, pending []*hub.Frame,
	out streamOut, open func() (context.Context, error)) error {
	release, err := s.holdStream(w, rd.who)
	if err != nil {
		return err
	}
	defer release()
	sub, pos, err := s.subscribeHub(w, r, rd.who)
	if sub == nil {
		return err
	}
	defer sub.Close()
	ls := s.newLiveStream(out, r, rd.who, sub, after)
	ls.check = func() (bool, time.Time) { return s.ntfyStillReads(r, rd) }
	ls.every *= ntfyKeepalives
	defer out.arm()
	ctx, err := open()
	if err != nil {
		return nil
	}
	if err := ls.flush(); err != nil {
		return nil
	}
	if err := ls.catchUp(ctx, pos); err != nil {
		ls.ended(err)
		return nil
	}
	for _, f := range pending {
		if err := out.frame(f); err != nil {
			return nil
		}
	}
	if len(pending) > 0 {
		if err := out.flush(); err != nil {
			return nil
		}
	}
	ls.ended(ls.run(ctx))
	return nil
}

// ntfyScheduledMax bounds the scheduled messages a subscription writes
// per channel: the newest sent.
const ntfyScheduledMax = 100

// ntfyScheduled is what scheduled=1 adds to a subscription that asks for
// what is kept (since= other than none): the messages of its channels
// that wait for their time and the user may read, as message lines, in the
// order they go out. A scheduled message has no stream event before it
// goes out, so its line carries the message's id (which since= also takes)
// and its time is when it goes out, as ntfy's; when it goes out, a line of
// its event follows, with the same sequence_id, which replaces it.
func (s *Server) ntfyScheduled(ctx context.Context, who *store.User, channels []*store.Channel, p ntfyParams) ([]*hub.Frame, error) {
	if !p.scheduled || p.since == "none" || (p.since == "" && !p.poll) {
		return nil, nil
	}
	var events []store.Event
	for _, ch := range channels {
		page, err := s.svc.ListMessages(ctx, who, store.MessageQuery{ChannelID: ch.ID, State: store.StateScheduled, Limit: ntfyScheduledMax})
		if err != nil {
			return nil, err
		}
		for _, m := range page.Messages {
			if m.DeliverAt == nil {
				continue // gone out between the two reads
			}
			events = append(events, store.Event{UserID: who.ID, Type: store.EventCreated, MessageID: m.ID,
				ChannelID: m.ChannelID, CreatedAt: *m.DeliverAt})
		}
	}
	slices.SortStableFunc(events, func(a, b store.Event) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return s.encodeEvents(ctx, events)
}

// ntfyPoll writes the subscription's lines of the user's events after
// after, up to the newest, with one line per message: its last (ntfy's
// poll answers every message once).
func (s *Server) ntfyPoll(ctx context.Context, rd *ntfyReader, n *ntfySub, after int64, write func([]byte, *ntfy.Message) error) error {
	h, err := s.st.EventHistory(ctx)
	if err != nil {
		return err
	}
	type line struct {
		b   []byte
		msg *ntfy.Message
	}
	var lines []line
	last := map[string]int{} // message id → its line
	for after < h.Last {
		events, err := s.st.UserEventsBetween(ctx, rd.who.user.ID, after, h.Last, catchUpPage)
		if err != nil {
			return err
		}
		frames, err := s.encodeEvents(ctx, events)
		if err != nil {
			return err
		}
		for _, f := range frames {
			b, msg, ok := n.line(f)
			if !ok {
				continue
			}
			id := f.Meta.(*frameEvent).event.MessageID
			if i, ok := last[id]; ok {
				lines[i].b = nil
			}
			last[id] = len(lines)
			lines = append(lines, line{b, msg})
		}
		if len(events) < catchUpPage {
			break
		}
		after = events[len(events)-1].ID
	}
	for _, f := range n.pending {
		b, msg, ok := n.line(f)
		if !ok {
			continue
		}
		if _, sent := last[f.Meta.(*frameEvent).event.MessageID]; sent {
			continue // went out meanwhile: its event's line is above
		}
		lines = append(lines, line{b, msg})
	}
	for _, l := range lines {
		if l.b == nil {
			continue
		}
		if err := write(l.b, l.msg); err != nil {
			return nil // the client left
		}
	}
	return nil
}

// ntfyHTTPOut writes an ntfy subscription's lines as json, sse or raw.
type ntfyHTTPOut struct {
	*sseOut
	n      *ntfySub
	format string
}

func (o *ntfyHTTPOut) frame(f *hub.Frame) error {
	b, msg, ok := o.n.line(f)
	if !ok {
		return nil
	}
	return o.write(b, msg)
}

func (o *ntfyHTTPOut) heartbeat() error { return o.write(o.n.notice(ntfy.EventKeepalive)) }

// write writes one line: a JSON object and its message, in the format.
func (o *ntfyHTTPOut) write(b []byte, msg *ntfy.Message) error {
	var out []byte
	switch o.format {
	case "sse":
		if msg.Event != ntfy.EventMessage {
			out = append(append(append(out, "event: "...), msg.Event...), '\n')
		}
		out = append(append(append(out, "data: "...), b...), "\n\n"...)
	case "raw":
		if msg.Event == ntfy.EventMessage {
			out = append(out, strings.ReplaceAll(msg.Message, "\n", " ")...)
		}
		out = append(out, '\n')
	default:
		out = append(b, '\n')
	}
	_, err := o.w.Write(out)
	return err
}
