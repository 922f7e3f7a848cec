package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Announce writes one line where the person running the tests sees it,
// also when the package passes. The go command shows only the "ok" line
// of a passing package in a normal `go test ./...` (the output of its
// test binary appears with -v only), so a skip said with t.Skip is
// invisible there. When the parent process is the go command, the line is
// written to the go command's own standard error (through /proc on Linux);
// otherwise, as when the test binary runs by itself, to ours.
func Announce(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if !strings.HasSuffix(line, "\n") {
		line += "\n"
	}
	if w := goCommandStderr(); w != nil {
		defer w.Close()
		if _, err := w.WriteString(line); err == nil {
			return
		}
	}
	fmt.Fprint(os.Stderr, line)
}

// goCommandStderr opens the standard error of the parent process if that
// is the go command, or returns nil.
func goCommandStderr() *os.File {
	ppid := strconv.Itoa(os.Getppid())
	exe, err := os.Readlink(filepath.Join("/proc", ppid, "exe"))
	if err != nil || strings.TrimSuffix(filepath.Base(exe), ".exe") != "go" {
		return nil
	}
	f, err := os.OpenFile(filepath.Join("/proc", ppid, "fd", "2"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil
	}
	return f
}

// Skips counts tests skipped for one reason, to announce them once at the
// end of the run (see Announce) instead of once per test.
type Skips struct {
	mu     sync.Mutex
	n      int
	reason string
}

// Add records one skipped test and why it was skipped.
func (s *Skips) Add(reason string) {
	s.mu.Lock()
	s.n++
	s.reason = reason
	s.mu.Unlock()
}

// Announce announces the skipped tests, if any, as one line naming the
// package: "herald/web: 12 tests SKIPPED: <reason>".
func (s *Skips) Announce(pkg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n > 0 {
		Announce("%s: %d tests SKIPPED: %s", pkg, s.n, s.reason)
	}
}
