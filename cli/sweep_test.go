package cli

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
)

// TestCLIDuringSweep: CLI commands beside a server that sweeps a large
// backlog wait for a turn between the sweep's batches and succeed, instead
// of failing with "database is locked" or waiting for the whole sweep.
func TestCLIDuringSweep(t *testing.T) {
	t.Parallel()
	env := newCLIEnv(t)
	ctx := context.Background()
	mustCLI(t, env, "", "user", "add", "ops@example.com")
	server := openCLIStore(t, env) // the running server's store
	u, err := server.UserByEmail(ctx, "ops@example.com")
	if err != nil {
		t.Fatal(err)
	}
	ch := &store.Channel{UserID: u.ID, Name: "backlog"}
	if err := server.CreateChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	const backlog = 5000
	db, err := sql.Open("sqlite", "file:"+filepath.Join(env["HERALD_DATA_DIR"], "herald.db")+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
		INSERT INTO messages (id, channel_id, title, body, priority, actions, muted, state, created_at)
		SELECT printf('msg_old%08d', i), ?, 'old', 'body', 'normal', '[]', 1, 'pending', i FROM seq`, backlog, ch.ID)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	var sweepTook time.Duration
	go func() {
		start := time.Now()
		n, err := server.DeleteMessagesBefore(ctx, time.UnixMilli(backlog+1))
		sweepTook = time.Since(start)
		if err == nil && n != backlog {
			err = fmt.Errorf("swept %d, want %d", n, backlog)
		}
		done <- err
	}()
	time.Sleep(30 * time.Millisecond) // the sweep is under way
	var longest time.Duration
	for i := range 5 {
		start := time.Now()
		mustCLI(t, env, "", "key", "create", "ops@example.com", "--name", fmt.Sprintf("during sweep %d", i))
		longest = max(longest, time.Since(start))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	out := mustCLI(t, env, "", "user", "list")
	if !strings.Contains(out, "ops@example.com") {
		t.Fatalf("user list: %q", out)
	}
	t.Logf("sweep of %d took %v; the slowest CLI command %v", backlog, sweepTook, longest)
	if longest > sweepTook/2 {
		t.Errorf("a CLI command took %v during a sweep of %v: it waited for the sweep", longest, sweepTook)
	}
}
