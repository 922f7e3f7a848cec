package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
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

// skipped counts the tests skipped through Skip, by reason.
var skipped = struct {
	sync.Mutex
	reasons map[string]int
	order   []string
}{reasons: map[string]int{}}

// Skip skips t for a reason that AnnounceSkips will repeat where it is seen:
// a test that needs a program this machine lacks (a browser, a proxy, a
// database server) says so in a normal go test run, not only with -v.
func Skip(t testing.TB, reason string) {
	t.Helper()
	skipped.Lock()
	if skipped.reasons[reason] == 0 {
		skipped.order = append(skipped.order, reason)
	}
	skipped.reasons[reason]++
	skipped.Unlock()
	t.Skip("SKIP: " + reason)
}

// AnnounceSkips announces, as one line naming the package, the tests
// skipped through Skip, if any: "herald/web: 12 tests SKIPPED: no chromium
// ...". Call it from TestMain after m.Run.
func AnnounceSkips(pkg string) {
	skipped.Lock()
	defer skipped.Unlock()
	n := 0
	var why []string
	for _, r := range skipped.order {
		n += skipped.reasons[r]
		why = append(why, fmt.Sprintf("%s (%d)", r, skipped.reasons[r]))
	}
	if n > 0 {
		Announce("%s: %d tests SKIPPED: %s", pkg, n, strings.Join(why, "; "))
	}
}
