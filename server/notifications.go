package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"
)

// serviceWorker registers an endpoint that a browser's service worker calls
// for its signed-in user: with the session cookie, which a service worker's
// same-origin requests carry, but without the CSRF header, since a service
// worker cannot read the CSRF cookie. The handler must check the device
// credential the body carries instead (service.RespondFromNotification,
// service.ResubscribeDevice): it is bound to the cookie's session, and no
// other site can know it. As for every cookie change, another site's
// request is refused by its Origin, and a body must be declared JSON (which
// another site cannot send without a CORS preflight that Herald never
// grants). Rate limited like the other endpoints.
func (s *Server) serviceWorker(method, path string, h authedFunc) {
	route := method + " " + path
	s.handle(method, path, func(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
		if err := s.checkOrigin(r); err != nil {
			return err
		}
		if err := requireJSON(r, false); err != nil {
			return err
		}
		who, err := s.cookiePrincipal(r)
		if err != nil {
			return err
		}
		if err := s.rateLimit(w, r, "api|"+who.user.ID+"|"+route, s.cfg.Plans.Limits(who.user.Plan).APIPerMinute); err != nil {
			return err
		}
		return h(w, r, p, who)
	})
}

// deviceCredential is the proof a service worker sends for its device.
type deviceCredential struct {
	DeviceID string `json:"device_id"`
	Token    string `json:"token"`
}

func (c deviceCredential) check() error {
	if c.DeviceID == "" || c.Token == "" {
		return errInvalidPayload("device_id and token are required: the credential the notification or registration carried")
	}
	return nil
}

// handleNotificationResponse is POST /v1/messages/:id/notification-response:
// an answer tapped on a notification, sent by the service worker. The same
// answer as POST /v1/messages/:id/respond, with the same rules and
// conflicts.
func (s *Server) handleNotificationResponse(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	var req struct {
		respondRequest
		deviceCredential
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if err := req.deviceCredential.check(); err != nil {
		return err
	}
	a, err := s.svc.RespondFromNotification(r.Context(), who.user, who.sessionID, req.DeviceID, req.Token, p.ByName("id"),
		req.Action, req.Responses)
	if err != nil {
		return err
	}
	writeAnswer(w, a)
	return nil
}

// handleResubscribe is POST /v1/devices/:id/subscription: the service
// worker hands in the subscription the browser replaced
// (pushsubscriptionchange), with the worker_token of the registration.
func (s *Server) handleResubscribe(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	var req struct {
		Token     string `json:"token"`
		PushToken string `json:"push_token"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	cred := deviceCredential{DeviceID: p.ByName("id"), Token: req.Token}
	if err := cred.check(); err != nil {
		return err
	}
	d, err := s.svc.ResubscribeDevice(r.Context(), who.user, who.sessionID, cred.DeviceID, cred.Token, req.PushToken)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderDevice(d))
	return nil
}
