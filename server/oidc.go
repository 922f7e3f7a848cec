package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/julienschmidt/httprouter"
	"golang.org/x/oauth2"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/store"
)

// Cookie names of the browser sign-in.
const (
	cookieSession = "herald_session"
	cookieCSRF    = "herald_csrf"
	cookieState   = "herald_oidc"
	headerCSRF    = "X-CSRF-Token"
	stateLifetime = 10 * time.Minute
)

// providerError maps a sign-in failure to its API error.
func providerError(err error) error {
	switch {
	case errors.Is(err, auth.ErrUnavailable):
		return newError(http.StatusServiceUnavailable, "provider_unavailable",
			"the identity provider cannot be reached right now; try again shortly")
	case errors.Is(err, auth.ErrInvalid):
		return errInvalidToken("%s", err.Error())
	case errors.Is(err, store.ErrSignupDisabled):
		return errForbidden("sign-up through this provider is turned off; ask an administrator to create your account")
	case errors.Is(err, store.ErrEmailTaken):
		return errForbidden("an account with this email already exists; an administrator can enable link_by_email")
	case errors.Is(err, store.ErrEmailUnverified):
		return errForbidden("the identity provider has not verified this email address; Herald signs up and links only verified addresses")
	case errors.Is(err, store.ErrEmailRequired):
		return errInvalidToken("the ID token has no email claim; request the email scope")
	}
	return err
}

// signInWith finds or creates the user for verified claims.
func (s *Server) signInWith(ctx context.Context, p *auth.Provider, c *auth.Claims) (*store.User, error) {
	cfg := s.providerConfig(p.Name())
	u, created, err := s.svc.SignInOIDC(ctx, store.OIDCSignIn{Provider: cfg.Name, Subject: c.Subject, Email: c.Email,
		EmailVerified: c.EmailVerified, Name: c.Name, AdminManaged: cfg.AdminClaim != "", Admin: c.Admin, AllowSignup: cfg.SignupAllowed(),
		LinkByEmail: cfg.LinkByEmail, Plan: s.cfg.DefaultPlan})
	if err != nil {
		return nil, providerError(err)
	}
	if created {
		s.log.InfoContext(ctx, "user signed up", "provider", cfg.Name, "user", u.ID, "admin", u.IsAdmin)
	}
	return u, nil
}

// handleOIDCSignIn is POST /v1/auth/{idp} for a provider: an app presents
// the ID token it got, or a code for Herald to exchange.
func (s *Server) handleOIDCSignIn(w http.ResponseWriter, r *http.Request, p *auth.Provider) error {
	var req struct {
		IDToken      string `json:"id_token"`
		Nonce        string `json:"nonce"`
		Code         string `json:"code"`
		CodeVerifier string `json:"code_verifier"`
		RedirectURI  string `json:"redirect_uri"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	var claims *auth.Claims
	var err error
	switch {
	case req.IDToken != "":
		claims, err = p.Verify(r.Context(), req.IDToken, req.Nonce)
	case req.Code != "":
		if req.RedirectURI == "" {
			return errInvalidPayload("redirect_uri is required with code")
		}
		claims, err = p.Exchange(r.Context(), req.Code, req.CodeVerifier, req.RedirectURI, req.Nonce)
	default:
		return errInvalidPayload("send id_token, or code with code_verifier and redirect_uri")
	}
	if err != nil {
		if errors.Is(err, auth.ErrUnavailable) {
			s.log.WarnContext(r.Context(), "identity provider unavailable", "provider", p.Name(), "err", err)
		}
		return providerError(err)
	}
	u, err := s.signInWith(r.Context(), p, claims)
	if err != nil {
		return err
	}
	return s.startSession(w, r, u)
}

func mac(key []byte, parts ...string) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

// loginState is what the state cookie carries between login and callback.
type loginState struct {
	Provider string `json:"p"`
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Expires  int64  `json:"e"`
}

func (s *Server) secureCookies() bool { return strings.HasPrefix(s.baseURL, "https://") }

// setCookie sets a cookie with what every Herald cookie shares: SameSite=Lax,
// and Secure when base_url is https. A negative lifetime deletes it.
func (s *Server) setCookie(w http.ResponseWriter, name, value, path string, lifetime time.Duration, httpOnly bool) {
	c := &http.Cookie{Name: name, Value: value, Path: path, HttpOnly: httpOnly,
		Secure: s.secureCookies(), SameSite: http.SameSiteLaxMode}
	if lifetime < 0 {
		c.MaxAge = -1
	} else {
		c.MaxAge = int(lifetime.Seconds())
		c.Expires = s.now().Add(lifetime)
	}
	http.SetCookie(w, c)
}

func (s *Server) redirectURL(idp string) string { return s.baseURL + "/auth/" + idp + "/callback" }

// handleLogin is GET /auth/{idp}/login: it starts the authorization-code
// flow with PKCE (S256), state and nonce kept in a signed, short-lived cookie.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	p, ok := s.providers[ps.ByName("idp")]
	if !ok {
		return errNotFound("no identity provider named %q", ps.ByName("idp"))
	}
	oc, err := p.OAuth2(r.Context(), s.redirectURL(p.Name()))
	if err != nil {
		return providerError(err)
	}
	key, err := s.svc.CookieKey(r.Context())
	if err != nil {
		return err
	}
	st := loginState{Provider: p.Name(), State: store.NewToken(32), Nonce: store.NewToken(32),
		Verifier: oauth2.GenerateVerifier(), Expires: s.now().Add(stateLifetime).Unix()}
	payload, _ := json.Marshal(st)
	enc := base64.RawURLEncoding
	value := enc.EncodeToString(payload) + "." + enc.EncodeToString(mac(key, "state", string(payload)))
	s.setCookie(w, cookieState, value, "/auth/", stateLifetime, true)
	http.Redirect(w, r, oc.AuthCodeURL(st.State, oauth2.S256ChallengeOption(st.Verifier), oidc.Nonce(st.Nonce)), http.StatusFound)
	return nil
}

// readState checks the state cookie's signature and lifetime.
func (s *Server) readState(r *http.Request, key []byte) (*loginState, error) {
	c, err := r.Cookie(cookieState)
	if err != nil {
		return nil, errInvalidToken("sign-in state cookie missing or expired; start again at /auth/{idp}/login")
	}
	enc := base64.RawURLEncoding
	b64, sig, ok := strings.Cut(c.Value, ".")
	payload, err1 := enc.DecodeString(b64)
	got, err2 := enc.DecodeString(sig)
	if !ok || err1 != nil || err2 != nil || !hmac.Equal(got, mac(key, "state", string(payload))) {
		return nil, errInvalidToken("sign-in state cookie is not valid")
	}
	var st loginState
	if err := json.Unmarshal(payload, &st); err != nil || s.now().Unix() > st.Expires {
		return nil, errInvalidToken("sign-in state expired; start again")
	}
	return &st, nil
}

// handleCallback is GET /auth/{idp}/callback: it checks state, exchanges the
// code with the PKCE verifier, verifies the ID token and its nonce, and
// signs the browser in with a session cookie.
func (s *Server) handleCallback(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	p, ok := s.providers[ps.ByName("idp")]
	if !ok {
		return errNotFound("no identity provider named %q", ps.ByName("idp"))
	}
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		return errInvalidToken("the identity provider refused the sign-in: %s", e)
	}
	key, err := s.svc.CookieKey(r.Context())
	if err != nil {
		return err
	}
	st, err := s.readState(r, key)
	if err != nil {
		return err
	}
	if st.Provider != p.Name() || !hmac.Equal([]byte(q.Get("state")), []byte(st.State)) {
		return errInvalidToken("state does not match this sign-in")
	}
	s.setCookie(w, cookieState, "", "/auth/", -1, true)
	if q.Get("code") == "" {
		return errInvalidPayload("code is missing")
	}
	claims, err := p.Exchange(r.Context(), q.Get("code"), st.Verifier, s.redirectURL(p.Name()), st.Nonce)
	if err != nil {
		return providerError(err)
	}
	u, err := s.signInWith(r.Context(), p, claims)
	if err != nil {
		return err
	}
	if err := s.startBrowserSession(w, r, u); err != nil {
		return err
	}
	http.Redirect(w, r, "/", http.StatusFound)
	return nil
}

// startBrowserSession signs a browser in as u: an HttpOnly session cookie,
// and the CSRF token in a cookie the page's script reads and sends back in
// X-CSRF-Token. A browser session lives as long as a refresh token would;
// its refresh token is never handed out.
func (s *Server) startBrowserSession(w http.ResponseWriter, r *http.Request, u *store.User) error {
	key, err := s.svc.CookieKey(r.Context())
	if err != nil {
		return err
	}
	lifetime := s.cfg.Auth.RefreshTTL.Duration
	g, err := s.svc.StartBrowserSession(r.Context(), u.ID)
	if err != nil {
		return err
	}
	s.setCookie(w, cookieSession, g.AccessToken, "/", lifetime, true)
	s.setCookie(w, cookieCSRF, csrfToken(key, g.SessionID), "/", lifetime, false)
	return nil
}

// csrfToken is bound to the session: a token planted by another site or
// subdomain for a different session does not match.
func csrfToken(key []byte, sessionID string) string {
	return base64.RawURLEncoding.EncodeToString(mac(key, "csrf", sessionID))
}

// checkCSRF requires a cookie-authenticated request that changes state to
// come from this server's own origin and to repeat the CSRF token in a
// header: another site can make the browser send the cookie, but cannot
// read the token.
func (s *Server) checkCSRF(r *http.Request, sessionID string) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if err := s.checkOrigin(r); err != nil {
		return err
	}
	key, err := s.svc.CookieKey(r.Context())
	if err != nil {
		return err
	}
	if !hmac.Equal([]byte(r.Header.Get(headerCSRF)), []byte(csrfToken(key, sessionID))) {
		return errForbidden("missing or wrong %s header (send the %s cookie's value)", headerCSRF, cookieCSRF)
	}
	return nil
}

// handleBrowserLogout is POST /auth/logout: it ends the cookie session. It
// takes no body; like the sign-in that sets the cookies, it refuses other
// sites and any body that is not declared JSON.
func (s *Server) handleBrowserLogout(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if err := s.checkOrigin(r); err != nil {
		return err
	}
	if err := requireJSON(r, true); err != nil {
		return err
	}
	if c, err := r.Cookie(cookieSession); err == nil && c.Value != "" {
		caller, err := s.svc.SessionCaller(r.Context(), c.Value)
		if err == nil {
			if err := s.checkCSRF(r, caller.SessionID); err != nil {
				return err
			}
			if err := s.svc.EndSession(r.Context(), caller.SessionID); err != nil {
				return err
			}
		}
	}
	s.setCookie(w, cookieSession, "", "/", -1, true)
	s.setCookie(w, cookieCSRF, "", "/", -1, false)
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}

// warmProviders tries each provider's discovery once at start, so the log
// says which are reachable; failures are retried at sign-in.
func (s *Server) warmProviders(ctx context.Context) {
	for _, p := range s.providers {
		if err := p.Warm(ctx); err != nil {
			s.log.Warn("identity provider not reachable yet; will retry at sign-in", "provider", p.Name(), "err", err)
		}
	}
}

// providerConfig is the configuration of the provider named name (the
// sign-up rules auth does not need).
func (s *Server) providerConfig(name string) config.Provider {
	for _, pc := range s.cfg.Auth.Providers {
		if pc.Name == name {
			return pc
		}
	}
	return config.Provider{Name: name}
}
