package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/service"
)

// handleChannelEscalations is GET /v1/channels/:id/escalations: the
// entries of the channel's escalation list and where each invitation
// stands, for the channel's owner, shown as the approvers are
// (handleChannelApprovers).
func (s *Server) handleChannelEscalations(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	list, err := s.svc.Escalations(r.Context(), who.user.ID, p.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"escalations": renderInvitees(list)})
	return nil
}

// handleCancelAlert is POST /v1/messages/:id/alert/cancel: the channel's
// owner stops an urgent message's alert.
func (s *Server) handleCancelAlert(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	a, err := s.svc.CancelAlert(r.Context(), who.user, p.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "alert": service.RenderAlert(a)})
	return nil
}

// handleSenderCancelAlert is POST /v1/callback/{token}/{message_id}/alert/cancel:
// the sender stops an urgent message's alert (the problem went away) with
// nothing but the webhook token, as it polls.
func (s *Server) handleSenderCancelAlert(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	ctx := r.Context()
	ch, err := s.senderChannel(ctx, p.ByName("token"))
	if err != nil {
		return err
	}
	a, err := s.svc.CancelAlertBySender(ctx, ch, p.ByName("message_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "alert": service.RenderAlert(a)})
	return nil
}
