package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/pgtest"
)

// TestCLIOnPostgres: with HERALD_DATABASE_URL the commands work on
// PostgreSQL, and the ones only a SQLite file can do say what to do
// instead, changing nothing.
func TestCLIOnPostgres(t *testing.T) {
	t.Parallel()
	env := newCLIEnv(t)
	env["HERALD_DATABASE_URL"] = pgtest.NewDatabase(t)

	out := mustCLI(t, env, "correct horse battery\n", "user", "add", "ops@example.com", "--password-stdin")
	if !strings.Contains(out, "ops@example.com") {
		t.Fatalf("user add: %q", out)
	}
	if out := mustCLI(t, env, "", "user", "list"); !strings.Contains(out, "ops@example.com") {
		t.Errorf("user list on PostgreSQL: %q", out)
	}
	if _, err := os.Stat(filepath.Join(env["HERALD_DATA_DIR"], "herald.db")); !os.IsNotExist(err) {
		t.Errorf("a SQLite file was made in data_dir beside PostgreSQL: %v", err)
	}

	dst := filepath.Join(t.TempDir(), "backup.db")
	_, _, err := runCLI(t, env, "", "backup", dst)
	if err == nil || !strings.Contains(err.Error(), "pg_dump") {
		t.Errorf("backup on PostgreSQL: %v, want an error pointing at pg_dump", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Errorf("backup on PostgreSQL left a file: %v", err)
	}
	if _, _, err := runCLI(t, env, "", "vacuum"); err == nil || !strings.Contains(err.Error(), "autovacuum") {
		t.Errorf("vacuum on PostgreSQL: %v, want an error naming autovacuum", err)
	}
}
