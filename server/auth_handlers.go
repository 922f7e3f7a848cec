package server

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

type sessionJSON struct {
	AccessToken  string   `json:"access_token"`
	RefreshToken string   `json:"refresh_token"`
	TokenType    string   `json:"token_type"`
	ExpiresAt    string   `json:"expires_at"`
	User         userJSON `json:"user"`
}

// handleAuthPost dispatches POST /v1/auth/:idp: refresh, logout and
// logout-all are reserved names; anything else is a sign-in provider.
// logout-all is session-only, like sessionOnly routes.
func (s *Server) handleAuthPost(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	switch idp := p.ByName("idp"); idp {
	case "refresh":
		return s.handleRefresh(w, r)
	case "logout":
		return s.withAuth("POST /v1/auth/logout", false, s.handleLogout)(w, r, p)
	case "logout-all":
		return s.withAuth("POST /v1/auth/logout-all", true, s.handleLogoutAll)(w, r, p)
	case "local":
		if !s.cfg.Auth.LocalPasswords {
			return errNotFound("local password sign-in is turned off on this server")
		}
		return s.handleLocalSignIn(w, r)
	default:
		p, ok := s.providers[idp]
		if !ok {
			return errNotFound("no identity provider named %q", idp)
		}
		return s.handleOIDCSignIn(w, r, p)
	}
}

func (s *Server) handleLocalSignIn(w http.ResponseWriter, r *http.Request) error {
	u, err := s.checkPassword(w, r)
	if err != nil {
		return err
	}
	return s.startSession(w, r, u)
}

// handleBrowserLocalSignIn is POST /auth/local: the admin UI's password
// sign-in. Same body and checks as POST /v1/auth/local, but the browser
// gets the session cookie and CSRF cookie of the OIDC browser sign-in
// instead of tokens, and the answer is {user}. Since it sets the session
// cookie, it takes only JSON and only from this server's own pages: else
// another site could sign the browser in to an account of its choosing.
func (s *Server) handleBrowserLocalSignIn(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if !s.cfg.Auth.LocalPasswords {
		return errNotFound("local password sign-in is turned off")
	}
	if err := s.checkOrigin(r); err != nil {
		return err
	}
	if err := requireJSON(r, false); err != nil {
		return err
	}
	u, err := s.checkPassword(w, r)
	if err != nil {
		return err
	}
	if err := s.startBrowserSession(w, r, u); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"user": renderUser(u)})
	return nil
}

// handleProviders is GET /v1/auth/providers: how the sign-in page offers to
// sign in. Public: it names only what the login page shows anyway.
func (s *Server) handleProviders(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	list := make([]map[string]string, 0, len(s.providers))
	for _, pc := range s.cfg.Auth.Providers {
		if _, ok := s.providers[pc.Name]; ok {
			list = append(list, map[string]string{"name": pc.Name, "login_url": "/auth/" + pc.Name + "/login"})
		}
	}
	// setup_needed lets the sign-in page say how to make the first user:
	// until one exists nobody can sign in, and only the operator's
	// command line can make one (sign-up through a provider aside).
	has, err := s.st.HasUsers(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"local": s.cfg.Auth.LocalPasswords, "providers": list, "setup_needed": !has})
	return nil
}

// checkPassword reads {email, password} and returns the user they sign in.
// Failed checks are throttled per account and address, per address, and per
// account (see signin_throttle.go); a success, or a check that did not run,
// costs nothing.
func (s *Server) checkPassword(w http.ResponseWriter, r *http.Request) (*store.User, error) {
	var req struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Email) == "" || req.Password == "" {
		return nil, errInvalidPayload("email and password are required")
	}
	return s.throttledPassword(w, r, req.Email, req.Password)
}

// throttledPassword returns the user that email and password sign in,
// with the failed attempts throttled (see signin_throttle.go).
func (s *Server) throttledPassword(w http.ResponseWriter, r *http.Request, email, password string) (*store.User, error) {
	account, address := strings.ToLower(strings.TrimSpace(email)), clientKey(r)
	giveBack, refused := s.signins.reserve(account, address)
	if refused != nil {
		return nil, errThrottled(w, refused)
	}
	u, err := s.svc.CheckPassword(r.Context(), email, password)
	if errors.Is(err, service.ErrWrongPassword) {
		return nil, errInvalidToken("wrong email or password")
	}
	giveBack()
	if err != nil {
		return nil, passwordCheckError(w, err)
	}
	s.signins.succeeded(account, address)
	return u, nil
}

// passwordCheckError answers a password check that did not run: the server
// was checking as many as it has cores, with a full queue behind them (or the
// client left while it waited; nobody reads that answer). 503 with
// Retry-After, since this is the server's load, not the client's rate.
func passwordCheckError(w http.ResponseWriter, err error) error {
	if errors.Is(err, auth.ErrBusy) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		w.Header().Set("Retry-After", "1")
		return newError(http.StatusServiceUnavailable, "server_busy",
			"too many sign-ins are being checked right now; retry in a second")
	}
	return err
}

// startSession signs u in and answers with the session shape.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, u *store.User) error {
	g, err := s.svc.StartSession(r.Context(), u.ID)
	if err != nil {
		return err
	}
	writeSession(w, g, u)
	return nil
}

func writeSession(w http.ResponseWriter, g *service.Grant, u *store.User) {
	writeJSON(w, http.StatusOK, sessionJSON{AccessToken: g.AccessToken, RefreshToken: g.RefreshToken, TokenType: "Bearer",
		ExpiresAt: ts(g.AccessExpiresAt), User: renderUser(u)})
}

func (s *Server) handleRefresh(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		RefreshToken string `json:"refresh_token"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	g, u, err := s.svc.RefreshSession(r.Context(), req.RefreshToken)
	if errors.Is(err, service.ErrRefreshReused) {
		s.log.WarnContext(r.Context(), "refresh token reused; session revoked", "request_id", requestID(r.Context()))
	}
	if err != nil {
		return err
	}
	writeSession(w, g, u)
	return nil
}

func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	if who.sessionID == "" {
		return errForbidden("logout ends a session; this request used an API key (revoke it with DELETE /v1/keys/:id)")
	}
	if err := s.svc.EndSession(r.Context(), who.sessionID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}

func (s *Server) handleLogoutAll(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	if err := s.svc.EndUserSessions(r.Context(), who.user.ID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}

func (s *Server) handleMe(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	writeJSON(w, http.StatusOK, renderUser(who.user))
	return nil
}

func (s *Server) handleDeleteUser(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	if err := s.svc.DeleteAccount(r.Context(), who.user); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}
