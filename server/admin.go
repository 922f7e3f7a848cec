package server

import (
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/service"
)

// adminOnly registers an endpoint for administrators signed in with a
// session: anyone else, an API key included, gets 403. An administrator's
// API key is a script's credential and administers nothing.
func (s *Server) adminOnly(method, path string, h authedFunc) {
	s.sessionOnly(method, path, func(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
		if !who.user.IsAdmin {
			return errForbidden("%s %s is for administrators", method, path)
		}
		return h(w, r, p, who)
	})
}

func (s *Server) handleAdminListUsers(w http.ResponseWriter, r *http.Request, _ httprouter.Params, _ *principal) error {
	page, err := listPage(r, "users")
	if err != nil {
		return err
	}
	users, next, err := s.st.ListUsersPage(r.Context(), page)
	if err != nil {
		return err
	}
	out := make([]userJSON, len(users))
	for i := range users {
		out[i] = renderUser(&users[i])
	}
	writeJSON(w, http.StatusOK, pageBody(map[string]any{"users": out}, "users", next))
	return nil
}

func (s *Server) handleAdminCreateUser(w http.ResponseWriter, r *http.Request, _ httprouter.Params, _ *principal) error {
	var req struct {
		Email    string `json:"email"`
		Name     string `json:"name"`
		Password string `json:"password"`
		Plan     string `json:"plan"`
		IsAdmin  bool   `json:"is_admin"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	u, err := s.svc.CreateUser(r.Context(), service.NewUser{Email: req.Email, Name: req.Name, Password: req.Password,
		Plan: req.Plan, Admin: req.IsAdmin})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, renderUser(u))
	return nil
}

// handleAdminUpdateUser is PATCH /v1/admin/users/:id: {plan} and/or
// {is_admin}; the user as it now stands is the answer.
func (s *Server) handleAdminUpdateUser(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	var req struct {
		Plan    *string `json:"plan"`
		IsAdmin *bool   `json:"is_admin"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if req.Plan == nil && req.IsAdmin == nil {
		return errInvalidPayload("nothing to change: send plan and/or is_admin")
	}
	id := p.ByName("id")
	if _, err := s.st.UserByID(r.Context(), id); err != nil {
		return err
	}
	if req.IsAdmin != nil {
		if err := s.svc.SetAdmin(r.Context(), who.user, id, *req.IsAdmin); err != nil {
			return err
		}
	}
	if req.Plan != nil {
		if err := s.svc.SetPlan(r.Context(), id, *req.Plan); err != nil {
			return err
		}
	}
	u, err := s.st.UserByID(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderUser(u))
	return nil
}

func (s *Server) handleAdminResetPassword(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ *principal) error {
	var req struct {
		Password string `json:"password"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if err := s.svc.ResetPassword(r.Context(), p.ByName("id"), req.Password); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}

func (s *Server) handleAdminDeleteUser(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	if err := s.svc.DeleteUser(r.Context(), who.user, p.ByName("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}

// serverJSON is GET /v1/admin/server: what the process and the queues say
// about themselves, the figures /metrics exports, in one answer.
type serverJSON struct {
	Version          string           `json:"version"`
	StartedAt        string           `json:"started_at"`
	UptimeSeconds    int64            `json:"uptime_seconds"`
	Users            int              `json:"users"`
	CallbackQueue    int              `json:"callback_queue_depth"`
	DeadLettered     int              `json:"dead_lettered_deliveries"`
	DeliveryOutcomes map[string]int64 `json:"delivery_outcomes"`
	PushOutcomes     []pushOutcome    `json:"push_outcomes"`
	Push             pushConfigured   `json:"push"`
}

type pushOutcome struct {
	Platform string `json:"platform"`
	Outcome  string `json:"outcome"`
	Count    int64  `json:"count"`
}

type pushConfigured struct {
	APNs           bool `json:"apns"`
	FCM            bool `json:"fcm"`
	WebPush        bool `json:"webpush"`
	WebPushSubject bool `json:"webpush_subject"`
}

func (s *Server) handleAdminServer(w http.ResponseWriter, r *http.Request, _ httprouter.Params, _ *principal) error {
	ctx := r.Context()
	users, err := s.st.ListUsers(ctx)
	if err != nil {
		return err
	}
	queue, err := s.st.PendingDeliveries(ctx)
	if err != nil {
		return err
	}
	dead, err := s.st.DeadLetteredDeliveries(ctx)
	if err != nil {
		return err
	}
	now := s.now()
	out := serverJSON{Version: s.version, StartedAt: ts(s.started), UptimeSeconds: int64(now.Sub(s.started) / time.Second),
		Users: len(users), CallbackQueue: queue, DeadLettered: dead, DeliveryOutcomes: map[string]int64{},
		PushOutcomes: []pushOutcome{},
		Push: pushConfigured{APNs: s.cfg.Push.APNs.KeyFile != "", FCM: s.cfg.Push.FCM.CredentialsFile != "",
			WebPush: true, WebPushSubject: s.cfg.Push.WebPush.Subject != ""}}
	families, err := s.registry.Gather()
	if err != nil {
		return err
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			n := int64(m.GetCounter().GetValue())
			switch f.GetName() {
			case "herald_deliveries_total":
				out.DeliveryOutcomes[labels["outcome"]] = n
			case "herald_pushes_total":
				out.PushOutcomes = append(out.PushOutcomes, pushOutcome{Platform: labels["platform"], Outcome: labels["outcome"], Count: n})
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
