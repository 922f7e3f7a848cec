package server

import (
	"encoding/json"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/service"
)

type respondRequest struct {
	Action    string                     `json:"action"`
	Responses map[string]json.RawMessage `json:"responses"`
}

// handleRespond is what the app calls when a person taps a button or submits
// a form: POST /v1/messages/:id/respond. On an approval message it is a vote.
func (s *Server) handleRespond(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	var req respondRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	a, err := s.svc.Respond(r.Context(), who.user, p.ByName("id"), req.Action, req.Responses)
	if err != nil {
		return err
	}
	writeAnswer(w, a)
	return nil
}

// writeAnswer reports where a message stands after an answer.
func writeAnswer(w http.ResponseWriter, a service.Answer) {
	out := map[string]any{"ok": true, "status": a.Status}
	if a.ApprovalStatus != "" {
		out["approval_status"] = a.ApprovalStatus
	}
	writeJSON(w, http.StatusOK, out)
}
