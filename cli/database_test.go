package cli

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIBackupRemovesStaleTemporary: `herald backup FILE` removes the
// temporary copy a killed backup to FILE left beside it (it holds every
// secret), and writes a complete, owner-only backup.
func TestCLIBackupRemovesStaleTemporary(t *testing.T) {
	t.Parallel()
	env := newCLIEnv(t)
	mustCLI(t, env, "", "user", "add", "kept@example.com")
	out := t.TempDir()
	dst := filepath.Join(out, "nightly.db")
	stale := filepath.Join(out, ".nightly.db.herald-backup-killed.tmp")
	if err := os.WriteFile(stale, []byte("whsec_every_secret"), 0o644); err != nil {
		t.Fatal(err)
	}

	if got := mustCLI(t, env, "", "backup", dst); !strings.Contains(got, "backup written to "+dst) {
		t.Errorf("backup printed %q", got)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the killed backup's temporary is still there (%v)", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Errorf("backup directory holds %d files, want only the backup", len(entries))
	}
	info, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Errorf("backup has mode %v, want 0600", mode)
	}
	db, err := sql.Open("sqlite", "file:"+dst+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check, email string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("backup integrity_check = %q, %v", check, err)
	}
	if err := db.QueryRow("SELECT email FROM users").Scan(&email); err != nil || email != "kept@example.com" {
		t.Fatalf("backup's user = %q, %v; want kept@example.com", email, err)
	}
}
