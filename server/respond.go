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
	var req struct {
		respondRequest
		// DeviceID names the caller's device that answered, recorded on
		// an urgent message's acknowledgement.
		DeviceID string `json:"device_id"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	via, err := s.svc.ViaOf(r.Context(), who.user, req.DeviceID, who.keyID)
	if err != nil {
		return err
	}
	a, err := s.svc.RespondVia(r.Context(), who.user, via, p.ByName("id"), req.Action, req.Responses)
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
	if a.AlertState != "" {
		out["alert_state"] = a.AlertState
	}
	writeJSON(w, http.StatusOK, out)
}
