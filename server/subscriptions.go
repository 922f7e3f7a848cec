package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"
)

// handleSubscription is GET /v1/subscriptions: the user's plan and its
// limits. App-store purchases are not verified yet, so status is "none" and
// the plan is the one an administrator set.
func (s *Server) handleSubscription(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	limits := s.cfg.Plans.Limits(who.user.Plan)
	writeJSON(w, http.StatusOK, map[string]any{
		"plan": who.user.Plan, "status": "none", "store": nil, "product_id": nil, "expires_at": nil,
		"limits": map[string]int{"send_per_minute": limits.SendPerMinute, "api_per_minute": limits.APIPerMinute},
	})
	return nil
}
