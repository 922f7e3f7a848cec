package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"
)

// ntfyAnswerPath is where the answer capabilities of buttons streamed to
// ntfy apps point (service.AnswerCapabilities); the access log hides the
// capability (redactPath).
const ntfyAnswerPath = "/v1/ntfy/answer/"

// handleNtfyAnswer is POST /v1/ntfy/answer/:capability: a button tapped in
// an ntfy app. The capability is the credential: it answers one message
// with one action, as the user whose subscription it was streamed to, the
// same answer as POST /v1/messages/:id/respond (with the same 409s). A
// capability that does not check out is 403. Rate limited per client
// address, as the default plan limits a user's requests, since nothing
// about the caller is known before the capability is checked.
func (s *Server) handleNtfyAnswer(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	limit := s.cfg.Plans.Limits(s.cfg.DefaultPlan).APIPerMinute
	if err := s.rateLimit(w, r, "ntfy answer|"+clientKey(r), limit); err != nil {
		return err
	}
	a, err := s.svc.RespondByCapability(r.Context(), p.ByName("capability"))
	if err != nil {
		return err
	}
	writeAnswer(w, a)
	return nil
}
