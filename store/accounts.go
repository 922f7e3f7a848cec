package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Identity is a sign-in through an OIDC provider linked to a user.
type Identity struct {
	Provider  string
	Email     string
	CreatedAt time.Time
}

// Identities returns the OIDC identities linked to a user, oldest first.
// The provider's subject stays in the database: it is the provider's
// account id and the user needs none of it.
func (s *Store) Identities(ctx context.Context, userID string) ([]Identity, error) {
	rows, err := s.read.QueryContext(ctx,
		"SELECT provider, email, created_at FROM identities WHERE user_id = ? ORDER BY created_at, provider", userID)
	if err != nil {
		return nil, fmt.Errorf("store: identities of %s: %w", userID, err)
	}
	defer rows.Close()
	var out []Identity
	for rows.Next() {
		var id Identity
		var created int64
		if err := rows.Scan(&id.Provider, &id.Email, &created); err != nil {
			return nil, fmt.Errorf("store: identities of %s: %w", userID, err)
		}
		id.CreatedAt = fromMS(created)
		out = append(out, id)
	}
	return out, rows.Err()
}

// SetUserPassword replaces a user's local password hash and ends every
// session of the user but keep (a session id, or "" for none): whoever
// knew the old password is signed out.
func (s *Store) SetUserPassword(ctx context.Context, id, hash, keep string) error {
	defer s.tokens.invalidate()
	err := s.update(ctx, func(tx *writeTx) error {
		if err := execOne(tx, "UPDATE users SET password_hash = ? WHERE id = ?", hash, id); err != nil {
			return err
		}
		_, err := tx.Exec("DELETE FROM sessions WHERE user_id = ? AND id != ?", id, keep)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: set password of %s: %w", id, err)
	}
	return nil
}

// UsersByEmails returns the users among emails (matched as stored, after
// trimming) that exist, in no particular order.
func (s *Store) UsersByEmails(ctx context.Context, emails []string) ([]User, error) {
	if len(emails) == 0 {
		return nil, nil
	}
	args := make([]any, len(emails))
	for i, e := range emails {
		args[i] = strings.TrimSpace(e)
	}
	col, arg := s.dialect.userEmail()
	q := "SELECT " + userCols + " FROM users u WHERE " + col + " IN (" + arg + strings.Repeat(", "+arg, len(emails)-1) + ")"
	return s.queryUsers(ctx, q, args...)
}

// DeadLetteredDeliveries counts callback deliveries that gave up.
func (s *Store) DeadLetteredDeliveries(ctx context.Context) (int, error) {
	var n int
	err := s.read.QueryRowContext(ctx, "SELECT count(*) FROM deliveries WHERE state = ?", DeliveryFailed).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count dead-lettered deliveries: %w", err)
	}
	return n, nil
}

// HasUsers reports whether any user exists.
func (s *Store) HasUsers(ctx context.Context) (bool, error) {
	var exists bool
	if err := s.read.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM users)").Scan(&exists); err != nil {
		return false, fmt.Errorf("store: has users: %w", err)
	}
	return exists, nil
}

// HasAdmins reports whether any user is an administrator.
func (s *Store) HasAdmins(ctx context.Context) (bool, error) {
	var exists bool
	if err := s.read.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM users WHERE is_admin = 1)").Scan(&exists); err != nil {
		return false, fmt.Errorf("store: has admins: %w", err)
	}
	return exists, nil
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
