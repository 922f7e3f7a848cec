package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/store"
)

// heartbeat keeps idle streams (and the proxies in front of them) open.
const heartbeat = 15 * time.Second

func (s *Server) handleVAPIDKey(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	pub, _, err := s.svc.VAPIDKeys(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"public_key": pub})
	return nil
}

// CloseStreams ends every live stream; the HTTP server calls it when it
// shuts down, since it does not end long-lived requests by itself.
func (s *Server) CloseStreams() { s.closeStreams.Do(func() { close(s.streamsDone) }) }

// handleStream is GET /v1/stream: Server-Sent Events of the user's messages
// being created, updated and deleted. Events come from the database, so a
// client that reconnects with Last-Event-ID misses nothing kept since.
func (s *Server) handleStream(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	ctx := r.Context()
	after, reset, err := s.streamStart(r)
	if err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the server's write timeout
	wake, cancel := s.st.Subscribe(store.TopicEvents)
	defer cancel()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 2000\n: connected\n\n")
	if reset == "" {
		// Where the stream starts, as an event with no data: clients keep
		// the id without dispatching anything, so one that reconnects
		// before its first message still resumes exactly here.
		fmt.Fprintf(w, "id: %d\n\n", after)
	}
	if reset != "" {
		// No id: the client keeps its Last-Event-ID until the replay
		// that follows hands it a new one.
		b, _ := json.Marshal(map[string]string{"reason": reset,
			"message": "events after Last-Event-ID are no longer kept; what is kept follows; reload to see everything"})
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", eventReset, b)
	}
	if err := rc.Flush(); err != nil {
		return nil
	}
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		events, err := s.st.EventsAfter(ctx, who.user.ID, after, 200)
		if err != nil {
			if ctx.Err() == nil {
				s.log.ErrorContext(ctx, "stream: read events", "err", err)
			}
			return nil // the status is sent; the client reconnects
		}
		// A credential revoked since the stream opened (logout, a revoked
		// key, a deleted user) must stop working at once, here too.
		if len(events) > 0 && !s.stillSignedIn(r, who) {
			return nil
		}
		for _, e := range events {
			if err := s.writeEvent(w, r, who, e); err != nil {
				return nil
			}
			after = e.ID
		}
		if len(events) > 0 {
			if err := rc.Flush(); err != nil {
				return nil
			}
			if len(events) == 200 {
				continue
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.streamsDone:
			return nil
		case <-wake:
		case <-beat.C:
			if !s.stillSignedIn(r, who) {
				return nil
			}
			if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
				return nil
			}
			if err := rc.Flush(); err != nil {
				return nil
			}
		}
	}
}

// stillSignedIn reports whether the credential that opened a stream still
// authenticates as the same user.
func (s *Server) stillSignedIn(r *http.Request, who *principal) bool {
	again, err := s.authenticate(r)
	return err == nil && again.user.ID == who.user.ID
}

// eventReset tells a resuming client that its Last-Event-ID cannot be
// served exactly; the kept events follow it.
const eventReset = "stream.reset"

// Reasons of a stream.reset event.
const (
	resetHistoryGone = "history_gone"     // events after Last-Event-ID were swept
	resetUnknownID   = "unknown_event_id" // Last-Event-ID is newer than any event
)

// streamStart is where a stream begins: after Last-Event-ID (or the
// last_event_id query parameter, for clients that cannot set headers), else
// after the newest event, so a fresh stream shows what happens from now on.
// A Last-Event-ID the kept history cannot continue exactly (the events after
// it were swept, or it is newer than any event, say from another database)
// starts at the oldest kept event, with reset naming why.
func (s *Server) streamStart(r *http.Request) (after int64, reset string, err error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("last_event_id")
	}
	h, err := s.st.EventHistory(r.Context())
	if err != nil {
		return 0, "", err
	}
	if v == "" {
		return h.Last, "", nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, "", errInvalidPayload("Last-Event-ID must be a non-negative integer")
	}
	switch {
	case n > h.Last:
		return h.Floor, resetUnknownID, nil
	case n < h.Floor:
		return h.Floor, resetHistoryGone, nil
	}
	return n, "", nil
}

// writeEvent writes one event with the message as it is now; a message
// deleted since is sent as its ids only.
func (s *Server) writeEvent(w http.ResponseWriter, r *http.Request, who *principal, e store.Event) error {
	var data any = map[string]string{"id": e.MessageID, "channel_id": e.ChannelID}
	if e.Type != store.EventDeleted {
		m, err := s.st.Message(r.Context(), e.MessageID)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return err
		default:
			out, err := s.renderMessages(r.Context(), who.user.ID, []store.Message{*m})
			if err != nil {
				return err
			}
			data = out[0]
		}
	}
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.ID, e.Type, b)
	return err
}
