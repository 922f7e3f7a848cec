package store

import (
	"context"
	"database/sql"
	"fmt"
)

// EnsureSetting returns the stored value of key, first storing gen() when
// there is none. Concurrent callers (two processes at first start) agree on
// one value: the first insert wins and everyone reads it back.
func (s *Store) EnsureSetting(ctx context.Context, key string, gen func() ([]byte, error)) ([]byte, error) {
	var v []byte
	err := s.read.QueryRowContext(ctx, "SELECT value FROM settings WHERE key = ?", key).Scan(&v)
	if err == nil {
		return v, nil
	}
	if err != sql.ErrNoRows {
		return nil, fmt.Errorf("store: setting %s: %w", key, err)
	}
	fresh, err := gen()
	if err != nil {
		return nil, fmt.Errorf("store: generate setting %s: %w", key, err)
	}
	err = s.update(ctx, func(tx *writeTx) error {
		if _, err := tx.Exec("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING", key, fresh); err != nil {
			return err
		}
		return tx.QueryRow("SELECT value FROM settings WHERE key = ?", key).Scan(&v)
	})
	if err != nil {
		return nil, fmt.Errorf("store: setting %s: %w", key, err)
	}
	return v, nil
}
