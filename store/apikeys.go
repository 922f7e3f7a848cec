package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// APIKey is a long-lived credential for scripts. Only its SHA-256 is stored.
type APIKey struct {
	ID         string
	UserID     string
	Name       string
	Prefix     string
	CreatedAt  time.Time
	LastUsedAt *time.Time
}

// CreateAPIKey stores a new key for k.UserID with the given hash, filling ID
// and CreatedAt. When the user already has max active keys it is ErrLimit;
// the count and the insert share one transaction, so concurrent creations
// cannot both slip under the limit.
func (s *Store) CreateAPIKey(ctx context.Context, k *APIKey, hash []byte, max int) error {
	k.ID = NewID("key_")
	k.CreatedAt = s.now().UTC().Truncate(time.Millisecond)
	err := s.update(ctx, func(tx *writeTx) error {
		var n int
		if err := tx.QueryRow("SELECT count(*) FROM api_keys WHERE user_id = ? AND revoked_at IS NULL", k.UserID).Scan(&n); err != nil {
			return err
		}
		if n >= max {
			return ErrLimit
		}
		_, err := tx.Exec(`INSERT INTO api_keys (id, user_id, name, key_hash, prefix, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			k.ID, k.UserID, k.Name, hash, k.Prefix, ms(k.CreatedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: create api key: %w", err)
	}
	return nil
}

// ListAPIKeys returns a user's active keys, oldest first.
func (s *Store) ListAPIKeys(ctx context.Context, userID string) ([]APIKey, error) {
	out, _, err := s.ListAPIKeysPage(ctx, userID, Page{})
	return out, err
}

// ListAPIKeysPage returns a page of a user's active keys, oldest first, and
// the cursor of the next page (zero on the last).
func (s *Store) ListAPIKeysPage(ctx context.Context, userID string, p Page) ([]APIKey, Cursor, error) {
	where, args, limit := p.clauses("created_at", "id")
	rows, err := s.read.QueryContext(ctx, `SELECT id, user_id, name, prefix, created_at, last_used_at
		FROM api_keys WHERE user_id = ? AND revoked_at IS NULL`+where+" ORDER BY created_at, id"+limit,
		append([]any{userID}, args...)...)
	if err != nil {
		return nil, Cursor{}, fmt.Errorf("store: list api keys: %w", err)
	}
	defer rows.Close()
	out := []APIKey{}
	for rows.Next() {
		var k APIKey
		var created int64
		var used sql.NullInt64
		if err := rows.Scan(&k.ID, &k.UserID, &k.Name, &k.Prefix, &created, &used); err != nil {
			return nil, Cursor{}, fmt.Errorf("store: list api keys: %w", err)
		}
		k.CreatedAt, k.LastUsedAt = fromMS(created), nullTime(used)
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, Cursor{}, fmt.Errorf("store: list api keys: %w", err)
	}
	out, next := cut(out, p, func(k *APIKey) Cursor { return Cursor{Key: ms(k.CreatedAt), ID: k.ID} })
	return out, next, nil
}

// RevokeAPIKey revokes a user's active key; it stops authenticating at once.
func (s *Store) RevokeAPIKey(ctx context.Context, userID, id string) error {
	return s.updateOne(ctx, "revoke api key",
		"UPDATE api_keys SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL", ms(s.now()), id, userID)
}

// APIKeyByHash returns the active key with this hash and its user.
func (s *Store) APIKeyByHash(ctx context.Context, hash []byte) (*APIKey, *User, error) {
	k, u, err := s.activeAPIKey(ctx, "k.key_hash = ?", hash)
	if err != nil {
		return nil, nil, fmt.Errorf("store: api key: %w", err)
	}
	return k, u, nil
}

// TouchAPIKeys records last use times, many keys in one write. A time never
// moves backwards.
func (s *Store) TouchAPIKeys(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	err := s.update(ctx, func(tx *writeTx) error {
		for id, t := range used {
			if _, err := tx.Exec(`UPDATE api_keys SET last_used_at = ?
				WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`, ms(t), id, ms(t)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: touch api keys: %w", err)
	}
	return nil
}
