package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestSQLiteRolledBackBatchSaysWhy: when one write's error makes SQLite
// roll the whole transaction back (here a conflict clause, which only
// SQLite has), that write gets its own error, and every other write of the
// batch an error that says the batch was rolled back and by what.
func TestSQLiteRolledBackBatchSaysWhy(t *testing.T) {
	ctx := context.Background()
	s := openFoundation(t, filepath.Join(t.TempDir(), "herald.db"), Options{})
	if err := s.CreateUser(ctx, &User{Email: "taken@example.com", Plan: "free"}); err != nil {
		t.Fatal(err)
	}
	release, held := holdBatch(t, s)
	culprit := make(chan error, 1)
	go func() {
		culprit <- s.update(ctx, func(tx *writeTx) error {
			_, err := tx.Exec(`INSERT OR ROLLBACK INTO users (id, email, plan, created_at)
				SELECT 'usr_dup', email, plan, 0 FROM users WHERE email = 'taken@example.com'`)
			return err
		})
	}()
	waitQueued(t, s, 1)
	release()
	if err := <-culprit; !isUnique(err) {
		t.Errorf("the rolling-back write was told %v, want its own UNIQUE violation", err)
	}
	err := <-held
	if !errors.Is(err, errRolledBack) || !isUnique(err) {
		t.Errorf("another write of the batch was told %v, want the rollback and its cause", err)
	}
}
