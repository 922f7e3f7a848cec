package service

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/store"
)

// Token lengths in base62 characters (~190 and ~285 bits).
const (
	accessTokenLen  = 32
	refreshTokenLen = 48
)

// ErrWrongPassword is CheckPassword's answer to an unknown email, a user
// without a password, or a wrong password: the three look the same.
var ErrWrongPassword = errors.New("wrong email or password")

// ErrRefreshReused is in the refusal of a refresh token that was already
// exchanged: the session it belonged to has been ended.
var ErrRefreshReused = store.ErrRefreshReused

// Grant is a new session's credentials as the client is given them, once:
// only their hashes are stored.
type Grant struct {
	SessionID        string
	AccessToken      string
	RefreshToken     string
	AccessExpiresAt  time.Time
	RefreshExpiresAt time.Time
}

// Caller is who a credential signs in: a user through a session (SessionID,
// and Expires, when its access token stops working) or an API key (KeyID).
type Caller struct {
	User      *store.User
	SessionID string
	KeyID     string
	Expires   time.Time
}

// CheckPassword returns the user whom email and password sign in, or
// ErrWrongPassword. An unknown email, or a user without a password, costs a
// password check too, so that the time taken does not tell whether the
// account exists. auth.ErrBusy (or the context's error) means the check did
// not run.
func (s *Service) CheckPassword(ctx context.Context, email, password string) (*store.User, error) {
	u, err := s.st.UserByEmail(ctx, email)
	if errors.Is(err, store.ErrNotFound) || (err == nil && u.PasswordHash == "") {
		if err := auth.CheckNoUser(ctx, password); err != nil {
			return nil, err
		}
		return nil, ErrWrongPassword
	}
	if err != nil {
		return nil, err
	}
	ok, err := auth.CheckPassword(ctx, u.PasswordHash, password)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrWrongPassword
	}
	return u, nil
}

// newGrant makes a fresh access/refresh pair and their stored form: the
// access token lives accessTTL, the refresh token the refresh lifetime.
func (s *Service) newGrant(accessTTL time.Duration) (*Grant, store.SessionTokens) {
	now := s.now().UTC()
	g := &Grant{AccessToken: store.NewToken(accessTokenLen), RefreshToken: store.NewToken(refreshTokenLen),
		AccessExpiresAt: now.Add(accessTTL), RefreshExpiresAt: now.Add(s.opts.RefreshTTL)}
	return g, store.SessionTokens{AccessHash: store.HashToken(g.AccessToken), RefreshHash: store.HashToken(g.RefreshToken),
		AccessExpiresAt: g.AccessExpiresAt, RefreshExpiresAt: g.RefreshExpiresAt}
}

// StartSession signs userID in: an access token that lives the session
// lifetime, and a refresh token that lives the refresh lifetime.
func (s *Service) StartSession(ctx context.Context, userID string) (*Grant, error) {
	return s.startSession(ctx, userID, s.opts.SessionTTL)
}

// StartBrowserSession signs a browser in as userID. Its access token,
// kept in a cookie, lives as long as a refresh token would; the browser is
// never given the refresh token.
func (s *Service) StartBrowserSession(ctx context.Context, userID string) (*Grant, error) {
	g, err := s.startSession(ctx, userID, s.opts.RefreshTTL)
	if err != nil {
		return nil, err
	}
	g.RefreshToken = ""
	return g, nil
}

func (s *Service) startSession(ctx context.Context, userID string, accessTTL time.Duration) (*Grant, error) {
	g, t := s.newGrant(accessTTL)
	sess, err := s.st.CreateSession(ctx, userID, t)
	if err != nil {
		return nil, err
	}
	g.SessionID = sess.ID
	return g, nil
}

// RefreshSession exchanges a refresh token for a new pair, and returns it
// with the session's user. A refresh token works once: presenting it again
// ends the session (a refusal that wraps ErrRefreshReused), since one of its
// two holders is a thief. An unknown or expired one is refused too.
func (s *Service) RefreshSession(ctx context.Context, refreshToken string) (*Grant, *store.User, error) {
	if refreshToken == "" {
		return nil, nil, invalid("refresh_token is required")
	}
	g, t := s.newGrant(s.opts.SessionTTL)
	sess, err := s.st.RotateSession(ctx, store.HashToken(refreshToken), t)
	switch {
	case errors.Is(err, store.ErrRefreshReused):
		return nil, nil, &Error{Kind: Unauthenticated, cause: ErrRefreshReused,
			Message: "refresh token was already used; the session has been revoked, sign in again"}
	case errors.Is(err, store.ErrNotFound):
		return nil, nil, unauthenticated("invalid or expired refresh token")
	case err != nil:
		return nil, nil, err
	}
	g.SessionID = sess.ID
	u, err := s.st.UserByID(ctx, sess.UserID)
	if err != nil {
		return nil, nil, err
	}
	return g, u, nil
}

// SessionCaller returns who a session's access token signs in, while it
// lives; an unknown or expired one is ErrNotFound.
func (s *Service) SessionCaller(ctx context.Context, accessToken string) (*Caller, error) {
	sess, u, err := s.st.SessionByAccessHash(ctx, store.HashToken(accessToken))
	if err != nil {
		return nil, err
	}
	return &Caller{User: u, SessionID: sess.ID, Expires: sess.AccessExpiresAt}, nil
}

// KeyCaller returns who an API key signs in; an unknown or revoked key is
// ErrNotFound. Its use is noted, and written later by FlushKeyUse: signing
// in with a key is a read, not a write.
func (s *Service) KeyCaller(ctx context.Context, key string) (*Caller, error) {
	k, u, err := s.st.APIKeyByHash(ctx, store.HashToken(key))
	if err != nil {
		return nil, err
	}
	s.keyUse.mark(k.ID, s.now())
	return &Caller{User: u, KeyID: k.ID}, nil
}

// EndSession ends one session (sign-out); one already ended is no error.
func (s *Service) EndSession(ctx context.Context, sessionID string) error {
	if err := s.st.DeleteSession(ctx, sessionID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// EndUserSessions ends every session of userID (sign-out everywhere). API
// keys keep working.
func (s *Service) EndUserSessions(ctx context.Context, userID string) error {
	return s.st.DeleteUserSessions(ctx, userID)
}

// CookieKey returns the server's key for signing cookies, made on first use
// and kept in the database so that restarts do not sign everyone out.
func (s *Service) CookieKey(ctx context.Context) ([]byte, error) {
	return s.st.EnsureSetting(ctx, "cookie_key", func() ([]byte, error) {
		k := make([]byte, 32)
		_, err := rand.Read(k)
		return k, err
	})
}

// FlushKeyUse writes the API key use times noted since the last flush, in
// one write. On failure they are kept for the next.
func (s *Service) FlushKeyUse(ctx context.Context) error {
	used := s.keyUse.take()
	if err := s.st.TouchAPIKeys(ctx, used); err != nil {
		for id, t := range used {
			s.keyUse.mark(id, t)
		}
		return err
	}
	return nil
}

// keyUse buffers API key use times between flushes.
type keyUse struct {
	mu   sync.Mutex
	used map[string]time.Time
}

func newKeyUse() *keyUse { return &keyUse{used: map[string]time.Time{}} }

// mark notes a use of key id at t; a later use replaces an earlier one.
func (k *keyUse) mark(id string, t time.Time) {
	k.mu.Lock()
	if prev, ok := k.used[id]; !ok || t.After(prev) {
		k.used[id] = t
	}
	k.mu.Unlock()
}

func (k *keyUse) take() map[string]time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := k.used
	k.used = map[string]time.Time{}
	return out
}
