package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// TestNewReaderDuringWrite: a reader connection the pool opens while a
// write transaction is open reads at once. Reads never wait for the
// writer (that is WAL's promise); a new connection's set-up must not
// either, or every read that needs a fresh connection during a long
// write (a sweep, a backup) waited for the busy timeout and failed.
func TestNewReaderDuringWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openFoundation(t, filepath.Join(t.TempDir(), "herald.db"), Options{BusyTimeout: 3 * time.Second})
	if err := s.CreateUser(ctx, &User{Email: "reader@example.com", Plan: "free"}); err != nil {
		t.Fatal(err)
	}
	started, stop := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.update(ctx, func(tx *writeTx) error {
			if _, err := tx.Exec("UPDATE users SET name = 'writing'"); err != nil {
				return err
			}
			close(started)
			<-stop
			return nil
		})
	}()
	<-started
	defer func() {
		close(stop)
		if err := <-done; err != nil {
			t.Errorf("the write: %v", err)
		}
	}()

	// Every connection the pool may hold, each opened now, reads at once.
	var conns []*sql.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range s.read.Stats().MaxOpenConnections {
		start := time.Now()
		c, err := s.read.Conn(ctx)
		if err != nil {
			t.Fatalf("reader connection %d: %v", i, err)
		}
		conns = append(conns, c)
		var name string
		if err := c.QueryRowContext(ctx, "SELECT name FROM users").Scan(&name); err != nil {
			t.Fatalf("reader connection %d: %v after %v", i, err, time.Since(start))
		}
		if name == "writing" {
			t.Fatalf("reader %d sees the uncommitted write", i)
		}
		if took := time.Since(start); took > time.Second {
			t.Fatalf("reader connection %d took %v: it waited for the writer", i, took)
		}
	}
}
