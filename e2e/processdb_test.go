package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/store"
)

// procDB is the database a process test runs herald serve on: the SQLite
// file in the data directory, or a PostgreSQL database of the test's own.
type procDB struct {
	url string // the PostgreSQL URL; "" for SQLite
}

// forEachDatabase runs body twice, as the subtests sqlite and postgres: the
// promises the process tests check hold on both. The PostgreSQL run needs
// HERALD_TEST_DATABASE_URL (internal/pgtest).
func forEachDatabase(t *testing.T, body func(t *testing.T, db procDB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { body(t, procDB{}) })
	t.Run("postgres", func(t *testing.T) { body(t, procDB{url: pgtest.NewDatabase(t)}) })
}

// postgres reports whether the run is on PostgreSQL.
func (d procDB) postgres() bool { return d.url != "" }

// env is what herald serve and the CLI need, beside the data directory, to
// use this database.
func (d procDB) env() []string {
	if d.url == "" {
		return nil
	}
	return []string{"HERALD_DATABASE_URL=" + d.url}
}

// open opens the database directly, as a second process would; on SQLite
// it is dataDir's herald.db. It is closed at the end of the test.
func (d procDB) open(t *testing.T, dataDir string) *store.Store {
	t.Helper()
	dsn := d.url
	if dsn == "" {
		dsn = filepath.Join(dataDir, "herald.db")
	}
	st, err := store.Open(context.Background(), dsn, store.Options{})
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// leaseWait is how long a callback claimed by a killed process may stay
// claimed. SQLite has one process: a restarted server frees the claims at
// once. On PostgreSQL a starting server cannot tell a dead replica's claims
// from a live one's, so they come back when their lease ends:
// 2 × delivery.timeout + 30 s (delivery/queue.go), which leaseEnv shortens
// as far as the configuration allows.
func (d procDB) leaseWait() time.Duration {
	if d.postgres() {
		return 2*2*time.Second + 30*time.Second
	}
	return 0
}

// leaseEnv is the configuration that keeps leaseWait short.
func (d procDB) leaseEnv() []string {
	if d.postgres() {
		return []string{"HERALD_DELIVERY_TIMEOUT=2s"}
	}
	return nil
}
