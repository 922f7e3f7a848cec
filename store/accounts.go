package store

import (
	"context"
	"database/sql"
	"fmt"
)

// What the operator's command line needs beyond what the API does: whether
// the instance has any user yet, a password reset, and keys found by id
// alone (the operator may revoke any user's key).

// HasUsers reports whether any user exists.
func (s *Store) HasUsers(ctx context.Context) (bool, error) {
	var exists bool
	if err := s.read.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM users)").Scan(&exists); err != nil {
		return false, fmt.Errorf("store: has users: %w", err)
	}
	return exists, nil
}

// SetUserPassword replaces a user's password hash and, in the same
// transaction, ends every session of the user, so whoever signed in with the
// old password is signed out. API keys stay.
func (s *Store) SetUserPassword(ctx context.Context, userID, hash string) error {
	err := s.update(ctx, func(tx *writeTx) error {
		if err := execOne(tx, "UPDATE users SET password_hash = ? WHERE id = ?", hash, userID); err != nil {
			return err
		}
		_, err := tx.Exec("DELETE FROM sessions WHERE user_id = ?", userID)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: set password of %s: %w", userID, err)
	}
	return nil
}

// APIKeyByID returns an active key and its user.
func (s *Store) APIKeyByID(ctx context.Context, id string) (*APIKey, *User, error) {
	k, u, err := s.activeAPIKey(ctx, "k.id = ?", id)
	if err != nil {
		return nil, nil, fmt.Errorf("store: api key %s: %w", id, err)
	}
	return k, u, nil
}

// activeAPIKey returns the unrevoked key that matches cond and its user.
func (s *Store) activeAPIKey(ctx context.Context, cond string, arg any) (*APIKey, *User, error) {
	var k APIKey
	var created int64
	var used sql.NullInt64
	u, err := scanUser(s.read.QueryRowContext(ctx, "SELECT "+userCols+`, k.id, k.name, k.prefix, k.created_at, k.last_used_at
		FROM api_keys k JOIN users u ON u.id = k.user_id
		WHERE `+cond+` AND k.revoked_at IS NULL`, arg),
		&k.ID, &k.Name, &k.Prefix, &created, &used)
	if err != nil {
		return nil, nil, err
	}
	k.UserID, k.CreatedAt, k.LastUsedAt = u.ID, fromMS(created), nullTime(used)
	return &k, u, nil
}
