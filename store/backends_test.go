package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/internal/testkit"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.AnnounceSkips("herald/store")
	os.Exit(code)
}

// forEachBackend runs body twice, as the subtests sqlite and postgres, each
// on an empty database of its own that dsn names: the store's guarantees
// are the same on both. The PostgreSQL run needs HERALD_TEST_DATABASE_URL
// (internal/pgtest).
func forEachBackend(t *testing.T, body func(t *testing.T, dsn string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { body(t, filepath.Join(t.TempDir(), "herald.db")) })
	t.Run("postgres", func(t *testing.T) { body(t, pgtest.NewDatabase(t)) })
}

// onPostgres reports whether s is on PostgreSQL, for a test whose own SQL
// differs.
func onPostgres(s *Store) bool {
	_, ok := s.dialect.(postgresDialect)
	return ok
}

// freshDSN names another empty database of the kind dsn names, for a test
// that needs several.
func freshDSN(t *testing.T, dsn string) string {
	t.Helper()
	if IsPostgresURL(dsn) {
		return pgtest.NewDatabase(t)
	}
	return filepath.Join(t.TempDir(), "herald.db")
}
