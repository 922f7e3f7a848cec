package server

import (
	"crypto/rand"
	"errors"
	"net/http"

	"github.com/heraldhq/herald/ntfy"
	"github.com/heraldhq/herald/store"
)

// handleNtfyClear is ntfy's DELETE /<topic>/<sequence id> (how "delete":
// the sequence's messages are deleted) and PUT /<topic>/<sequence
// id>/clear (how "clear": its notification is read and dismissed). The
// topic is a channel's webhook token, which alone authorises it, as it
// does a publish. The answer is the event ntfy would answer with.
func (s *Server) handleNtfyClear(w http.ResponseWriter, r *http.Request, topic, sequenceID, how string) {
	ch, err := s.sendTarget(w, r, topic)
	if err != nil {
		s.writeNtfyClearError(w, r, err)
		return
	}
	event := ntfy.EventMessageClear
	if how == "delete" {
		event = ntfy.EventMessageDelete
		_, err = s.svc.DeleteSequence(r.Context(), ch, sequenceID)
	} else {
		err = s.svc.ClearSequence(r.Context(), ch, sequenceID)
	}
	if errors.Is(err, store.ErrNotFound) {
		err = errInvalidToken("no channel has this webhook token") // deleted meanwhile
	}
	if err != nil {
		s.writeNtfyClearError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ntfy.Message{ID: newNtfyID(), Time: s.now().Unix(), Event: event,
		Topic: topic, SequenceID: sequenceID})
}

// writeNtfyClearError answers err in ntfy's error shape: its code is the
// HTTP status followed by two digits. An internal error is logged, and
// shown only as such.
func (s *Server) writeNtfyClearError(w http.ResponseWriter, r *http.Request, err error) {
	ae := s.shownError(r, err)
	if ae.status == http.StatusUnauthorized {
		// ntfy's clients take 401 as "log in"; a token nobody has is not
		// a topic at all.
		ae = newError(http.StatusNotFound, ae.code, "%s", ae.message)
	}
	writeJSON(w, ae.status, ntfy.Error{Code: ae.status*100 + 1, HTTP: ae.status, Error: ae.message})
}

// newNtfyID is a new id for an event that is no message of Herald's: 12
// characters of ntfy's alphabet, as ntfy's own ids.
func newNtfyID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
