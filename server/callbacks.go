package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/store"
)

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
	Event      string `json:"event"` // the callback's event, or action.http for a tapped http action's request
	Attempt    int    `json:"attempt"`
	At         string `json:"at"`
	StatusCode *int   `json:"status_code"`
	Error      string `json:"error"`
	DurationMS int64  `json:"duration_ms"`
}

// handleDeliveries is GET /v1/messages/:id/deliveries: the callback's status
// (else a tapped http action's) and every attempt of both, oldest first.
func (s *Server) handleDeliveries(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	st, attempts, err := s.svc.DeliveryLog(r.Context(), who.user, p.ByName("id"))
	if err != nil {
		return err
	}
	out := make([]attemptJSON, len(attempts))
	for i, a := range attempts {
		out[i] = attemptJSON{Event: a.Event, Attempt: a.Attempt, At: ts(a.At), StatusCode: a.StatusCode, Error: a.Error, DurationMS: a.Duration.Milliseconds()}
	}
	writeJSON(w, http.StatusOK, map[string]any{"delivery": renderDelivery(st), "deliveries": out})
	return nil
}

// handleRedeliver is POST /v1/messages/:id/redeliver: a dead-lettered (or
// delivered) callback is queued again with a fresh set of attempts.
func (s *Server) handleRedeliver(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	d, err := s.svc.Redeliver(r.Context(), who.user, p.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "delivery": renderDelivery(d)})
	return nil
}
