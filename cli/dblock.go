//go:build unix

package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// errDatabaseHeld is a lock on the database that another process holds
// in a way that conflicts: a server, when a command needs the database to
// itself, or such a command, when a server starts.
var errDatabaseHeld = errors.New("database held by another process")

// lockDatabase takes a lock on the SQLite database at dbPath, through the
// file dbPath+".lock" beside it, until release is called or the process
// ends (a killed process's lock goes with it). herald serve takes it
// shared for as long as it runs; a command that must have the database to
// itself (herald vacuum) takes it exclusive, and so finds out, without
// waiting, that a server is running. It does not stop any other reader or
// writer: SQLite's own locking does that.
func lockDatabase(dbPath string, exclusive bool) (release func(), err error) {
	// The first start makes data_dir, as the store would (owner only).
	if err := os.MkdirAll(filepath.Dir(dbPath), 0o700); err != nil {
		return nil, fmt.Errorf("lock the database: %w", err)
	}
	f, err := os.OpenFile(dbPath+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the database: %w", err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s)", errDatabaseHeld, f.Name())
		}
		return nil, fmt.Errorf("lock the database: %w", err)
	}
	return func() { f.Close() }, nil
}
