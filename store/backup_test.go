package store

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestBackupRemovesStaleTemporaries: a backup killed midway leaves a
// full-size temporary copy with every secret in it. The next backup to the
// same file removes those (its own naming, and an earlier Herald's), leaves
// alone a running backup's (locked) and anything else in the directory,
// and writes a complete owner-only copy.
func TestBackupRemovesStaleTemporaries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openFoundation(t, filepath.Join(t.TempDir(), "herald.db"), Options{})
	if err := s.CreateUser(ctx, &User{Email: "kept@example.com", Plan: "free"}); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	dst := filepath.Join(out, "backup.db")
	plant := func(name string, mode os.FileMode) string {
		t.Helper()
		path := filepath.Join(out, name)
		if err := os.WriteFile(path, []byte("whsec_every_secret"), mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	stale := []string{
		plant(".backup.db.herald-backup-killed01.tmp", 0o600),
		plant(".backup.db.herald-backup-killed02.tmp", 0o644),
		plant("backup.db.tmp-AbC123xy", 0o600), // an earlier Herald's
	}
	kept := []string{
		plant(".other.db.herald-backup-running.tmp", 0o600), // another target's
		plant("backup.db.tmp-abc", 0o600),
		plant("notes.txt", 0o600),
	}
	if backupLocks {
		// A backup to the same file running beside this one holds its lock.
		running := plant(".backup.db.herald-backup-running1.tmp", 0o600)
		f, err := os.OpenFile(running, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if err := lockBackup(f, true); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, running)
	}

	if err := s.Backup(ctx, dst); err != nil {
		t.Fatal(err)
	}
	for _, path := range stale {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("stale temporary %s is still there (%v)", filepath.Base(path), err)
		}
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var names, want []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	for _, path := range append(kept, dst) {
		want = append(want, filepath.Base(path))
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("backup directory holds %q, want %q", names, want)
	}
	info, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Errorf("backup has mode %v, want 0600", mode)
	}
	if n := backupUsers(t, dst); n != 1 {
		t.Errorf("backup holds %d users, want 1", n)
	}
}
