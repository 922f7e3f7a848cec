package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// principal is the authenticated caller of a request.
type principal struct {
	user      *store.User
	sessionID string    // set when a session token was used
	keyID     string    // set when an API key was used
	expires   time.Time // when a session's access token expires; zero for a key
}

// authenticate resolves the Authorization header to a user. Tokens are looked
// up by their SHA-256, so no stored secret is ever compared byte by byte.
// Every request reads the user afresh: a plan change, a revoked key or a
// deleted user takes effect on the next request.
func (s *Server) authenticate(r *http.Request) (*principal, error) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if h == "" {
		return s.authenticateCookie(r)
	}
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return nil, errInvalidToken("the Authorization header must be: Bearer <token>")
	}
	return s.tokenPrincipal(r.Context(), strings.TrimSpace(token))
}

// tokenPrincipal resolves a bearer token: an API key or a session's access
// token.
func (s *Server) tokenPrincipal(ctx context.Context, token string) (*principal, error) {
	if strings.HasPrefix(token, service.APIKeyPrefix) {
		c, err := s.svc.KeyCaller(ctx, token)
		if errors.Is(err, service.ErrNotFound) {
			return nil, errInvalidToken("invalid or revoked API key")
		}
		return callerPrincipal(c, err)
	}
	c, err := s.svc.SessionCaller(ctx, token)
	if errors.Is(err, service.ErrNotFound) {
		return nil, errInvalidToken("invalid or expired access token")
	}
	return callerPrincipal(c, err)
}

// callerPrincipal is the principal of a caller the service found.
func callerPrincipal(c *service.Caller, err error) (*principal, error) {
	if err != nil {
		return nil, err
	}
	return &principal{user: c.User, sessionID: c.SessionID, keyID: c.KeyID, expires: c.Expires}, nil
}

// authenticateCookie signs in a browser by its session cookie; requests
// that change state must also carry the CSRF token.
func (s *Server) authenticateCookie(r *http.Request) (*principal, error) {
	who, err := s.cookiePrincipal(r)
	if err != nil {
		return nil, err
	}
	if err := s.checkCSRF(r, who.sessionID); err != nil {
		return nil, err
	}
	return who, nil
}

// cookiePrincipal is the browser signed in by the session cookie, before
// any CSRF check.
func (s *Server) cookiePrincipal(r *http.Request) (*principal, error) {
	c, err := r.Cookie(cookieSession)
	if err != nil || c.Value == "" {
		return nil, errInvalidToken("missing credentials: send Authorization: Bearer <token>, or sign in from a browser")
	}
	caller, err := s.svc.SessionCaller(r.Context(), c.Value)
	if errors.Is(err, service.ErrNotFound) {
		return nil, errInvalidToken("session cookie is invalid or expired; sign in again")
	}
	return callerPrincipal(caller, err)
}
