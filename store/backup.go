package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A backup is written to a temporary file beside its target, renamed over
// it once complete. The temporary holds every secret the database does, so
// a backup that was killed must not leave it behind for good: the next
// backup to the same target removes the temporaries of earlier ones. A
// running backup holds an exclusive lock on its temporary (lockBackup), so
// that a backup started beside it does not take its file away.

// backupTempSuffix ends every backup's temporary name.
const backupTempSuffix = ".tmp"

// backupTempPrefix starts the temporary names of backups to dst, within its
// directory: .FILE.herald-backup-<random>.tmp.
func backupTempPrefix(dst string) string {
	return "." + filepath.Base(dst) + ".herald-backup-"
}

// Backup writes a consistent copy of the database to dst while other
// connections keep working (VACUUM INTO, into a temporary file beside dst,
// renamed over it). The copy is created owner-only (0600), synced before
// the rename and its directory after it, so a crash leaves either the old
// dst or the whole new one. It first removes what killed backups to dst
// left behind.
func (s *Store) Backup(ctx context.Context, dst string) error {
	if !s.dialect.file() {
		return ErrPostgres{What: "backup", Instead: "back a PostgreSQL database up with pg_dump (pg_dump -Fc -f herald.dump <database url>) or the server's own backups"}
	}
	if err := removeStaleBackups(dst); err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	tmp := filepath.Join(filepath.Dir(dst), backupTempPrefix(dst)+randomString(12)+backupTempSuffix)
	// VACUUM INTO accepts an empty file, so the copy gets the owner-only
	// mode of the file made here.
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	defer f.Close() // after the rename: the lock stays until then
	if err := lockBackup(f, true); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("store: backup: lock %s: %w", tmp, err)
	}
	if err := s.writeBackup(ctx, f, tmp, dst); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("store: backup: %w", err)
	}
	return nil
}

// writeBackup fills the temporary file f (at tmp) and renames it to dst.
func (s *Store) writeBackup(ctx context.Context, f *os.File, tmp, dst string) error {
	if _, err := s.read.ExecContext(ctx, "VACUUM INTO ?", tmp); err != nil {
		return err
	}
	// The file at tmp must still be the one made and locked here, with its
	// mode, before it becomes the backup.
	mine, err := f.Stat()
	if err != nil {
		return err
	}
	if there, err := os.Stat(tmp); err != nil || !os.SameFile(mine, there) {
		return fmt.Errorf("%s was replaced while the backup ran", tmp)
	}
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	// VACUUM INTO syncs nothing: the copy reaches the disk before its name.
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dst))
}

// removeStaleBackups removes the temporary files that backups to dst left
// when they were killed: those whose backup no longer holds their lock. It
// reports the first error but tries every file.
func removeStaleBackups(dst string) error {
	dir, prefix := filepath.Dir(dst), backupTempPrefix(dst)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("look for stale backups: %w", err)
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		ours := strings.HasPrefix(name, prefix) && strings.HasSuffix(name, backupTempSuffix)
		if !e.Type().IsRegular() || !ours && !legacyBackupTemp(filepath.Base(dst), name) {
			continue
		}
		if err := removeIfStale(filepath.Join(dir, name)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// legacyBackupTemp reports whether name is the temporary file of a backup
// to base by an earlier Herald: base.tmp-<8 base62 characters>.
func legacyBackupTemp(base, name string) bool {
	rest, ok := strings.CutPrefix(name, base+".tmp-")
	if !ok || len(rest) != 8 {
		return false
	}
	for _, c := range rest {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// removeIfStale removes a backup's temporary file unless a running backup
// holds its lock.
func removeIfStale(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove stale backup %s: %w", path, err)
	}
	defer f.Close()
	if err := lockBackup(f, false); err != nil {
		return nil // a backup is writing it
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove stale backup %s: %w", path, err)
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
