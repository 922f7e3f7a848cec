package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/store"
)

// hubPage bounds how many events the hub reads at once.
const hubPage = 512

// newHub returns the stream hub over the store: fed by the writer's commits,
// loading every user's events of a range in one read.
func (s *Server) newHub(buffer int) *hub.Hub {
	return hub.New(hub.FeedFunc(s.st.FollowEvents), s.loadFrames, hub.Options{Buffer: buffer, Logger: s.log})
}

// streamMetrics exposes the hub's state: how many streams are open, and how
// many events streams that fell behind had to read from the database.
func (s *Server) streamMetrics(reg *prometheus.Registry) {
	// A second server on the same registry (tests) skips them.
	_ = reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "herald_streams_open",
		Help: "Live streams (GET /v1/stream) open now.",
	}, func() float64 { return float64(s.hub.Subscribers()) }))
	_ = reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "herald_stream_events_dropped_total",
		Help: "Events not queued for a live stream whose buffer was full; the stream read them from the database.",
	}, func() float64 { return float64(s.hub.Dropped()) }))
}

// loadFrames is the hub's Loader. It also reads how often credentials have
// changed, before its frames are handed out, so that a stream re-checks
// its credential before it writes the first event committed after one
// changed.
func (s *Server) loadFrames(ctx context.Context, after, upTo int64) ([]*hub.Frame, int64, error) {
	events, err := s.st.EventsBetween(ctx, after, upTo, hubPage)
	if err != nil {
		return nil, 0, err
	}
	changes, err := s.st.CredentialChanges(ctx)
	if err != nil {
		return nil, 0, err
	}
	s.credChanges.Store(changes)
	frames, err := s.encodeEvents(ctx, events)
	if err != nil {
		return nil, 0, err
	}
	reached := upTo
	if len(events) == hubPage {
		reached = events[len(events)-1].ID
	}
	return frames, reached, nil
}

// encodeEvents encodes events as Server-Sent Events frames with each
// message as it is now; a message deleted since is sent as its ids only.
// Each message is read once and encoded at most twice, whoever the events
// are for: as its owner sees it (with callback_url) and as its approvers
// do.
func (s *Server) encodeEvents(ctx context.Context, events []store.Event) ([]*hub.Frame, error) {
	var ids []string
	seen := map[string]bool{}
	for _, e := range events {
		if e.Type != store.EventDeleted && !seen[e.MessageID] {
			seen[e.MessageID] = true
			ids = append(ids, e.MessageID)
		}
	}
	found, err := s.st.MessagesByIDs(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("stream: read messages: %w", err)
	}
	msgs := make([]store.Message, 0, len(found))
	for _, id := range ids {
		if m, ok := found[id]; ok {
			msgs = append(msgs, *m)
		}
	}
	// Rendered for nobody in particular: the view without callback_url.
	views, err := s.renderMessages(ctx, "", msgs)
	if err != nil {
		return nil, fmt.Errorf("stream: render messages: %w", err)
	}
	type key struct {
		id    string
		owner bool
	}
	byID := make(map[string]int, len(msgs))
	for i := range msgs {
		byID[msgs[i].ID] = i
	}
	encoded := map[key][]byte{}
	frames := make([]*hub.Frame, 0, len(events))
	for _, e := range events {
		var data []byte
		fe := &frameEvent{event: e}
		i, ok := byID[e.MessageID]
		if ok {
			fe.msg, fe.view = &msgs[i], &views[i]
		}
		switch {
		case e.Type == store.EventDeleted || !ok:
			gone := map[string]string{"id": e.MessageID, "channel_id": e.ChannelID}
			if e.SequenceID != "" {
				gone["sequence_id"] = e.SequenceID // the notification to remove
			}
			data, err = json.Marshal(gone)
		default:
			k := key{e.MessageID, msgs[i].OwnerID == e.UserID}
			if data, ok = encoded[k]; !ok {
				v := views[i]
				if k.owner {
					v.CallbackURL = msgs[i].CallbackURL
				}
				data, err = json.Marshal(v)
				encoded[k] = data
			}
		}
		if err != nil {
			return nil, fmt.Errorf("stream: encode event %d: %w", e.ID, err)
		}
		frames = append(frames, &hub.Frame{ID: e.ID, User: e.UserID, Data: sseFrame(e.ID, e.Type, data), Meta: fe})
	}
	return frames, nil
}

// frameEvent is a frame's Meta: its event and the message as the frame
// shows it (nil once deleted), for streams that write another format than
// the frame's Data. It is shared by every stream of the frame's user.
type frameEvent struct {
	event store.Event
	msg   *store.Message
	view  *messageJSON
	ntfy  ntfyEncoding // made by the first ntfy stream that writes the frame
}

// sseFrame is "id: N\nevent: TYPE\ndata: JSON\n\n". JSON from
// encoding/json has no raw newline, so one data line carries it.
func sseFrame(id int64, typ string, data []byte) []byte {
	b := make([]byte, 0, len(data)+len(typ)+40)
	b = append(b, "id: "...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, "\nevent: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}
