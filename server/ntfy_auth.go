package server

import (
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"github.com/heraldhq/herald/service"
)

// Reading through ntfy's doors takes the user's own credential: a topic
// (a channel's webhook token) lets anyone who knows it publish, never
// read. ntfy clients send it as ntfy does: Authorization Basic or Bearer,
// or, where a client cannot set headers (a browser's WebSocket), ?auth=,
// the base64url of the header's value.

// ntfyRealm is the realm of the 401's challenge: Basic, so that clients
// that wait for a challenge (.NET's NetworkCredential) send their password.
const ntfyRealm = `Basic realm="Herald"`

// ntfyReader is who an ntfy request reads as, and with which credential.
type ntfyReader struct {
	who  *principal
	cred service.Credential
	// token is the bearer token (an API key or a session's access token)
	// it signed in with; hash, the password hash it signed in against.
	token, hash string
}

// errNtfyUnauthorized is the 401 of a missing or wrong credential.
func errNtfyUnauthorized(format string, args ...any) *apiError {
	return newError(http.StatusUnauthorized, "invalid_token", format, args...)
}

// ntfyAuthHeader is the request's Authorization value: from ?auth= (or
// ?authorization=) when given, else the header.
func ntfyAuthHeader(r *http.Request) (string, error) {
	q := r.URL.Query()
	v := q.Get("auth")
	if v == "" {
		v = q.Get("authorization")
	}
	if v == "" {
		return r.Header.Get("Authorization"), nil
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(v, "="))
	if err != nil {
		return "", errNtfyUnauthorized("auth must be the base64url of an Authorization header, such as Basic ... or Bearer ...")
	}
	return string(b), nil
}

// ntfyAuthenticate signs an ntfy request in: Basic with an account's email
// and password (throttled as the local sign-in is), Basic with an API key
// or a session token as the password (whatever the user name, so that
// OIDC users, who have no password, sign in with a key), or Bearer with an
// API key or a session token. No credential, or a wrong one, is 401.
func (s *Server) ntfyAuthenticate(w http.ResponseWriter, r *http.Request) (*ntfyReader, error) {
	h, err := ntfyAuthHeader(r)
	if err != nil {
		return nil, err
	}
	scheme, value, _ := strings.Cut(strings.TrimSpace(h), " ")
	value = strings.TrimSpace(value)
	switch {
	case strings.EqualFold(scheme, "Bearer") && value != "":
		return s.ntfyToken(r, value)
	case strings.EqualFold(scheme, "Basic"):
		b, err := base64.StdEncoding.DecodeString(value)
		if err != nil {
			return nil, errNtfyUnauthorized("the Basic credential is not base64 of user:password")
		}
		user, pass, ok := strings.Cut(string(b), ":")
		if !ok || pass == "" {
			return nil, errNtfyUnauthorized("the Basic credential is not user:password")
		}
		if user == "" || strings.HasPrefix(pass, service.APIKeyPrefix) {
			return s.ntfyToken(r, pass)
		}
		return s.ntfyPassword(w, r, user, pass)
	}
	return nil, errNtfyUnauthorized("reading needs your credential: Basic with your email and password or an API key, " +
		"or Bearer with an API key")
}

// ntfyToken signs in with an API key or a session's access token.
func (s *Server) ntfyToken(r *http.Request, token string) (*ntfyReader, error) {
	who, err := s.tokenPrincipal(r.Context(), token)
	if err != nil {
		return nil, err
	}
	cred := service.Credential{Kind: service.CredentialKey, ID: who.keyID}
	if who.sessionID != "" {
		cred = service.Credential{Kind: service.CredentialSession, ID: who.sessionID}
	}
	return &ntfyReader{who: who, cred: cred, token: token}, nil
}

// ntfyPassword signs in with an email and a password, as POST
// /v1/auth/local does: the same check and the same throttles.
func (s *Server) ntfyPassword(w http.ResponseWriter, r *http.Request, email, password string) (*ntfyReader, error) {
	if !s.cfg.Auth.LocalPasswords {
		return nil, errNtfyUnauthorized("passwords are turned off on this server: use an API key as the password")
	}
	u, err := s.throttledPassword(w, r, email, password)
	if err != nil {
		return nil, err
	}
	return &ntfyReader{who: &principal{user: u}, cred: service.Credential{Kind: service.CredentialPassword}, hash: u.PasswordHash}, nil
}

// ntfyStillReads reports whether the credential a subscription opened
// with still works, and until when it does for certain: a token as the
// native stream checks it; a password by its stored hash, unchanged (a
// password check per heartbeat would cost every stream a second of CPU).
func (s *Server) ntfyStillReads(r *http.Request, rd *ntfyReader) (bool, time.Time) {
	if rd.cred.Kind != service.CredentialPassword {
		again, err := s.tokenPrincipal(r.Context(), rd.token)
		if err != nil || again.user.ID != rd.who.user.ID {
			return false, time.Time{}
		}
		return true, again.expires
	}
	u, err := s.st.UserByID(r.Context(), rd.who.user.ID)
	if err != nil {
		return false, time.Time{}
	}
	return subtle.ConstantTimeCompare([]byte(u.PasswordHash), []byte(rd.hash)) == 1, time.Time{}
}

// handleNtfyAuth is GET /<topics>/auth, which the ntfy app calls when a
// subscription is added: {"success":true} when the credential reads every
// topic, else 401 (no or a wrong credential) or 404 (a topic it may not
// read, as if it did not exist).
func (s *Server) handleNtfyAuth(w http.ResponseWriter, r *http.Request, topics []string) {
	rd, err := s.ntfyAuthenticate(w, r)
	if err == nil {
		err = s.rateLimit(w, r, "api|"+rd.who.user.ID+"|ntfy auth", s.cfg.Plans.Limits(rd.who.user.Plan).APIPerMinute)
	}
	if err == nil {
		_, err = s.svc.ChannelsToRead(r.Context(), rd.who.user, topics)
	}
	if err != nil {
		s.writeNtfyError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"success": true})
}
