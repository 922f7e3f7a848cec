package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrRefreshReused is returned when a refresh token that was already
// exchanged is presented again; the whole session has been revoked.
var ErrRefreshReused = errors.New("store: refresh token reused")

// Session is a signed-in client. Token hashes never leave the store.
type Session struct {
	ID               string
	UserID           string
	AccessExpiresAt  time.Time
	RefreshExpiresAt time.Time
	CreatedAt        time.Time
}

// SessionTokens are the SHA-256 hashes and lifetimes of a new token pair.
type SessionTokens struct {
	AccessHash       []byte
	RefreshHash      []byte
	AccessExpiresAt  time.Time
	RefreshExpiresAt time.Time
}

// CreateSession starts a session for userID.
func (s *Store) CreateSession(ctx context.Context, userID string, t SessionTokens) (*Session, error) {
	sess := &Session{ID: NewID("ses_"), UserID: userID, AccessExpiresAt: t.AccessExpiresAt,
		RefreshExpiresAt: t.RefreshExpiresAt, CreatedAt: s.now().UTC()}
	err := s.update(ctx, func(tx *writeTx) error {
		_, err := tx.Exec(`INSERT INTO sessions
			(id, user_id, access_hash, access_expires_at, refresh_hash, refresh_expires_at, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`,
			sess.ID, userID, t.AccessHash, ms(t.AccessExpiresAt), t.RefreshHash, ms(t.RefreshExpiresAt), ms(sess.CreatedAt))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: create session: %w", err)
	}
	return sess, nil
}

// SessionByAccessHash returns the live session whose access token hashes to
// hash, with its user. An unknown or expired token is ErrNotFound.
func (s *Store) SessionByAccessHash(ctx context.Context, hash []byte) (*Session, *User, error) {
	var sess Session
	var aexp, rexp, created int64
	u, err := scanUser(s.read.QueryRowContext(ctx, "SELECT "+userCols+`, s.id, s.access_expires_at, s.refresh_expires_at, s.created_at
		FROM sessions s JOIN users u ON u.id = s.user_id
		WHERE s.access_hash = ? AND s.access_expires_at > ?`, hash, ms(s.now())),
		&sess.ID, &aexp, &rexp, &created)
	if err != nil {
		return nil, nil, fmt.Errorf("store: session: %w", err)
	}
	sess.UserID = u.ID
	sess.AccessExpiresAt, sess.RefreshExpiresAt, sess.CreatedAt = fromMS(aexp), fromMS(rexp), fromMS(created)
	return &sess, u, nil
}

// RotateSession exchanges a refresh token for a new token pair. The old
// refresh token is remembered as spent: presenting it again deletes the
// session (ErrRefreshReused), since one of the two holders is a thief.
// An unknown or expired refresh token is ErrNotFound.
func (s *Store) RotateSession(ctx context.Context, refreshHash []byte, t SessionTokens) (*Session, error) {
	var sess Session
	var reused bool
	err := s.update(ctx, func(tx *writeTx) error {
		now := ms(s.now())
		err := tx.QueryRow(`SELECT id, user_id FROM sessions WHERE refresh_hash = ? AND refresh_expires_at > ?`,
			refreshHash, now).Scan(&sess.ID, &sess.UserID)
		if errors.Is(err, sql.ErrNoRows) {
			var sid string
			err := tx.QueryRow(`SELECT session_id FROM spent_refresh_tokens WHERE hash = ?`, refreshHash).Scan(&sid)
			if errors.Is(err, sql.ErrNoRows) {
				return ErrNotFound
			}
			if err != nil {
				return err
			}
			reused = true
			_, err = tx.Exec(`DELETE FROM sessions WHERE id = ?`, sid)
			return err
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO spent_refresh_tokens (hash, session_id, spent_at) VALUES (?, ?, ?)`,
			refreshHash, sess.ID, now); err != nil {
			return err
		}
		_, err = tx.Exec(`UPDATE sessions SET access_hash = ?, access_expires_at = ?, refresh_hash = ?, refresh_expires_at = ?
			WHERE id = ?`, t.AccessHash, ms(t.AccessExpiresAt), t.RefreshHash, ms(t.RefreshExpiresAt), sess.ID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: rotate session: %w", err)
	}
	if reused {
		return nil, fmt.Errorf("store: rotate session: %w", ErrRefreshReused)
	}
	sess.AccessExpiresAt, sess.RefreshExpiresAt = t.AccessExpiresAt, t.RefreshExpiresAt
	return &sess, nil
}

// DeleteSession ends one session.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	return s.updateOne(ctx, "delete session", "DELETE FROM sessions WHERE id = ?", id)
}

// DeleteUserSessions ends every session of a user. API keys are untouched.
func (s *Store) DeleteUserSessions(ctx context.Context, userID string) error {
	_, err := s.sweep(ctx, "delete sessions", "DELETE FROM sessions WHERE user_id = ?", userID)
	return err
}
