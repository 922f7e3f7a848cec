package testkit

import (
	"os/exec"
	"strings"
	"testing"
)

// TestAnnounceSkips runs `go test` on a package whose tests are skipped
// through Skip, without -v, as `go test ./...` would: the go command then
// shows only the package's "ok" line of its own, so the announcement must
// reach the go command's standard error.
func TestAnnounceSkips(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	cmd := exec.Command(gobin, "test", "-count=1", "./testdata/skipdemo")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test: %v\n%s", err, out)
	}
	want := "skipdemo: 2 tests SKIPPED: no thing on PATH (2)"
	if !strings.Contains(string(out), want) {
		t.Errorf("go test printed %q; want a line %q", out, want)
	}
	if !strings.Contains(string(out), "ok ") {
		t.Errorf("go test printed %q; want the package's ok line too", out)
	}
}
