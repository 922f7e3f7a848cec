package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeSIGTERM: herald serve stops cleanly on SIGTERM, on SQLite and on
// PostgreSQL, with what it committed in the database.
func TestServeSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	forEachDatabase(t, testServeSIGTERM)
}

func testServeSIGTERM(t *testing.T, db procDB) {
	dataDir := filepath.Join(t.TempDir(), "data")
	p := startHerald(t, 30*time.Second, dataDir, db.env()...)
	_, err := os.Stat(filepath.Join(dataDir, "herald.db"))
	switch {
	case db.postgres() && err == nil:
		t.Errorf("herald.db created in HERALD_DATA_DIR with HERALD_DATABASE_URL set")
	case !db.postgres() && err != nil:
		t.Errorf("database not created in HERALD_DATA_DIR: %v", err)
	}
	runHerald(t, p.env, "", "user", "add", "sigterm@example.com")
	key := strings.TrimSpace(runHerald(t, p.env, "", "key", "create", "sigterm@example.com", "--name", "sigterm"))
	p.must(t, http.StatusCreated, "POST", "/v1/channels", map[string]string{"name": "before SIGTERM"}, key)

	start := time.Now()
	code, err := p.stop(t, 15*time.Second)
	if err != nil {
		t.Errorf("herald serve exited with %v after SIGTERM, want exit code 0\n%s", err, p.log)
	}
	if code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown took %s, want under 5 s", d)
	}
	if !strings.Contains(p.log.String(), "stopped") {
		t.Errorf("no clean stop in the log:\n%s", p.log)
	}

	ctx := context.Background()
	st := db.open(t, dataDir)
	u, err := st.UserByEmail(ctx, "sigterm@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if chs, err := st.ListChannels(ctx, u.ID); err != nil || len(chs) != 1 || chs[0].Name != "before SIGTERM" {
		t.Errorf("after SIGTERM the database holds channels %+v (%v), want the one made before it", chs, err)
	}
}
