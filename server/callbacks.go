package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/store"
)

// Callback event names.
const (
	eventResponse = "response.received"
	eventApproval = "approval.resolved"
)

// responseEvent is the body of a response.received callback (SPEC.md "Events").
type responseEvent struct {
	Event       string                     `json:"event"`
	MessageID   string                     `json:"message_id"`
	ChannelID   string                     `json:"channel_id"`
	Timestamp   string                     `json:"timestamp"`
	TriggeredBy string                     `json:"triggered_by"`
	Responses   map[string]json.RawMessage `json:"responses"`
	Metadata    *struct{}                  `json:"metadata"` // reserved; always null
}

// callbackFor returns the delivery job for event with body, or nil when the
// message has no callback_url. The store commits it with the response.
func callbackFor(m *store.Message, event string, body any) (*store.NewDelivery, error) {
	if m.CallbackURL == nil {
		return nil, nil
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return &store.NewDelivery{ChannelID: m.ChannelID, Event: event, URL: *m.CallbackURL, Body: b}, nil
}

type deliveryJSON struct {
	State          string  `json:"state"`
	Attempts       int     `json:"attempts"`
	LastStatusCode *int    `json:"last_status_code"`
	NextAttemptAt  *string `json:"next_attempt_at"`
}

func renderDelivery(d *store.DeliveryStatus) *deliveryJSON {
	if d == nil {
		return nil
	}
	return &deliveryJSON{State: d.State, Attempts: d.Attempts, LastStatusCode: d.LastStatusCode, NextAttemptAt: tsPtr(d.NextAttemptAt)}
}

type attemptJSON struct {
	Attempt    int    `json:"attempt"`
	At         string `json:"at"`
	StatusCode *int   `json:"status_code"`
	Error      string `json:"error"`
	DurationMS int64  `json:"duration_ms"`
}

// handleDeliveries is GET /v1/messages/:id/deliveries: the callback's status
// and every attempt, oldest first.
func (s *Server) handleDeliveries(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	m, ch, err := s.messageAccess(r, p.ByName("id"), who)
	if err != nil {
		return err
	}
	if ch.UserID != who.user.ID {
		return errForbidden("only the channel's owner can read its delivery log")
	}
	st, attempts, err := s.st.DeliveryLog(r.Context(), m.ID)
	if err != nil {
		return err
	}
	out := make([]attemptJSON, len(attempts))
	for i, a := range attempts {
		out[i] = attemptJSON{Attempt: a.Attempt, At: ts(a.At), StatusCode: a.StatusCode, Error: a.Error, DurationMS: a.Duration.Milliseconds()}
	}
	writeJSON(w, http.StatusOK, map[string]any{"delivery": renderDelivery(st), "deliveries": out})
	return nil
}

// handleRedeliver is POST /v1/messages/:id/redeliver: a dead-lettered (or
// delivered) callback is queued again with a fresh set of attempts.
func (s *Server) handleRedeliver(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	m, ch, err := s.messageAccess(r, p.ByName("id"), who)
	if err != nil {
		return err
	}
	if ch.UserID != who.user.ID {
		return errForbidden("only the channel's owner can redeliver its callbacks")
	}
	err = s.st.Redeliver(r.Context(), m.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errNotFound("message %s has no callback delivery", m.ID)
	case errors.Is(err, store.ErrDeliveryPending):
		return errInvalidPayload("the delivery is still pending; it will be retried on its schedule")
	case err != nil:
		return err
	}
	m, err = s.st.Message(r.Context(), m.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "delivery": renderDelivery(m.Delivery)})
	return nil
}
