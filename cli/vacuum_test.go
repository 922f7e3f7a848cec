package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestCLIVacuumRefusesWhileServing: herald vacuum refuses, at once and
// changing nothing, while a server runs on the database; a server does not
// start while vacuum runs; once the server is stopped, vacuum rebuilds the
// file and reports its size before and after, write-ahead log included,
// and the size after is what the disk holds.
func TestCLIVacuumRefusesWhileServing(t *testing.T) {
	t.Parallel()
	env := newCLIEnv(t)
	db := filepath.Join(env["HERALD_DATA_DIR"], "herald.db")
	base, _, stop := startInProcess(t, env)
	t.Cleanup(stop)
	token, webhook := cliOwner(t, env, base)
	body := strings.Repeat("a 9 kB body ", 750)
	for i := range 150 {
		if status, out := cliHTTP(t, "POST", webhook, map[string]string{"title": fmt.Sprint("m", i), "body": body}, ""); status != 200 {
			t.Fatalf("send: %d %v", status, out)
		}
	}
	_, chans := cliHTTP(t, "GET", base+"/v1/channels", nil, token)
	chID := chans["channels"].([]any)[0].(map[string]any)["id"].(string)

	_, _, err := runCLI(t, env, "", "vacuum")
	if err == nil || !strings.Contains(err.Error(), "a Herald server is running on "+db+": stop it first") ||
		!strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("vacuum beside a running server: %v, want a refusal", err)
	}
	if status, _ := cliHTTP(t, "GET", base+"/v1/channels", nil, token); status != 200 {
		t.Fatalf("the server after the refused vacuum: %d", status)
	}
	// Free most of the file, then stop the server.
	if status, out := cliHTTP(t, "DELETE", base+"/v1/channels/"+chID, nil, token); status != 200 {
		t.Fatalf("delete channel: %d %v", status, out)
	}
	stop()

	// While vacuum holds the database, a server refuses to start.
	release, err := lockDatabase(db, true)
	if err != nil {
		t.Fatal(err)
	}
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: env.get}
	if err := a.serve(t.Context()); err == nil || !strings.Contains(err.Error(), "being rebuilt by herald vacuum") {
		t.Errorf("serve while vacuum holds the database: %v", err)
	}
	release()

	out := mustCLI(t, env, "", "vacuum")
	m := regexp.MustCompile(`^vacuumed (.+): (\d+) -> (\d+) bytes \(the database and its write-ahead log\)\n$`).FindStringSubmatch(out)
	if m == nil || m[1] != db {
		t.Fatalf("vacuum printed %q", out)
	}
	before, _ := strconv.ParseInt(m[2], 10, 64)
	after, _ := strconv.ParseInt(m[3], 10, 64)
	t.Logf("vacuum: %d -> %d bytes", before, after)
	if onDisk := databaseSize(db); after != onDisk {
		t.Errorf("vacuum reported %d bytes after, the disk holds %d (database and WAL)", after, onDisk)
	}
	if fi, err := os.Stat(db + "-wal"); err == nil && fi.Size() != 0 {
		t.Errorf("the WAL holds %d bytes after vacuum, want it checkpointed", fi.Size())
	}
	if after >= before/2 {
		t.Errorf("vacuum: %d -> %d bytes, want the freed pages gone", before, after)
	}
}
