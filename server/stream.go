package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/hub"
)

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
func (s *Server) CloseStreams() { s.closeStreams() }

// handleStream is GET /v1/stream: Server-Sent Events of the user's messages
// being created, updated and deleted. Live events come from the hub, which
// reads and encodes each event once for every stream; events before the
// hub's position (a resume with Last-Event-ID) come from the database, so a
// client that reconnects misses nothing kept since.
func (s *Server) handleStream(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	ctx := r.Context()
	release, err := s.holdStream(w, who)
	if err != nil {
		return err
	}
	defer release()
	after, reset, err := s.streamStart(r)
	if err != nil {
		return err
	}
	// Before the first read: every event after pos arrives from the hub,
	// every one up to pos is read here, and none is lost in between.
	sub, pos, err := s.subscribeHub(w, r, who)
	if sub == nil {
		return err
	}
	defer sub.Close()
	out := newSSEOut(w)
	ls := s.newLiveStream(out, r, who, sub, after)
	// A stream outlives the server's write timeout: each write gets its
	// own (arm), and so does the end of the response.
	out.arm()
	defer out.arm()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	if r.ProtoMajor == 1 {
		// Over HTTP/1.1 the frames go out as they are, not chunked, and
		// the connection closing ends the stream (net/http does this for
		// "identity"). Chunking would add a formatted, allocated chunk
		// header and two more buffered writes to every flush of every
		// stream. HTTP/2 frames the data itself and takes no such header.
		h.Set("Transfer-Encoding", "identity")
	}
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
	if err := out.flush(); err != nil {
		return nil
	}
	if err := ls.catchUp(ctx, pos); err != nil {
		ls.ended(err)
		return nil
	}
	ls.ended(ls.run(ctx))
	return nil
}

// subscribeHub registers a live stream of who with the hub (see
// hub.Subscribe). A nil sub with a nil error: the client left meanwhile.
func (s *Server) subscribeHub(w http.ResponseWriter, r *http.Request, who *principal) (*hub.Sub, int64, error) {
	sub, pos, err := s.hub.Subscribe(r.Context(), who.user.ID)
	if err != nil {
		if r.Context().Err() != nil {
			return nil, 0, nil
		}
		w.Header().Set("Retry-After", "1")
		return nil, 0, newError(http.StatusServiceUnavailable, "server_busy", "the server is shutting down; reconnect in a moment")
	}
	return sub, pos, nil
}

// stillSignedIn reports whether the credential that opened a stream still
// authenticates as the same user, and until when it does for certain
// (zero: no expiry of its own).
func (s *Server) stillSignedIn(r *http.Request, who *principal) (bool, time.Time) {
	again, err := s.authenticate(r)
	if err != nil || again.user.ID != who.user.ID {
		return false, time.Time{}
	}
	return true, again.expires
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
