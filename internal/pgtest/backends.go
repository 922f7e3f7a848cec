package pgtest

import (
	"path/filepath"
	"testing"
)

// ForEachBackend runs body twice, as the subtests sqlite and postgres,
// each on an empty database of its own that dsn names (a file in
// t.TempDir(), or NewDatabase's): what a test checks holds on both. The
// PostgreSQL run needs EnvURL.
func ForEachBackend(t *testing.T, body func(t *testing.T, dsn string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { body(t, filepath.Join(t.TempDir(), "herald.db")) })
	t.Run("postgres", func(t *testing.T) { body(t, NewDatabase(t)) })
}
