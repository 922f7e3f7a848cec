//go:build unix

package store

import (
	"os"
	"syscall"
)

// backupLocks says whether lockBackup locks.
const backupLocks = true

// lockBackup takes an exclusive flock on a backup's temporary file, waiting
// for it when wait is set, else failing at once if another holds it. The
// lock goes with the process: a killed backup's file is free to remove.
// SQLite's own locks are fcntl locks, which flock does not touch.
func lockBackup(f *os.File, wait bool) error {
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	return syscall.Flock(int(f.Fd()), how)
}
