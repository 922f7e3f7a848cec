package pgcopy

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.AnnounceSkips("herald/store/pgcopy")
	os.Exit(code)
}

// setVersion records the SQLite database at path as being at schema
// version v, as a herald of another version would have left it.
func setVersion(t *testing.T, path string, v int) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("DELETE FROM schema_migrations WHERE version > ?", v); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'other.sql', 0) ON CONFLICT DO NOTHING", v); err != nil {
		t.Fatal(err)
	}
}

// newSQLite makes a SQLite database at the latest schema version.
func newSQLite(t *testing.T) (path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "herald.db")
	s, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSourceSchemaVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	want, err := store.LatestSchemaVersion()
	if err != nil {
		t.Fatal(err)
	}
	path := newSQLite(t)
	setVersion(t, path, want-1)

	_, err = OpenSource(ctx, path)
	var ev ErrSchemaVersion
	if !errors.As(err, &ev) || ev.Have != want-1 || ev.Want != want {
		t.Fatalf("open an older database = %v, want ErrSchemaVersion %d < %d", err, want-1, want)
	}
	if !strings.Contains(err.Error(), "run this herald on it once first") {
		t.Errorf("error %q does not say what to do", err)
	}

	// What the error advises: opening the file migrates it (here: records
	// the latest version again).
	setVersion(t, path, want)
	src, err := OpenSource(ctx, path)
	if err != nil {
		t.Fatalf("open at the latest version: %v", err)
	}
	src.Close()

	// A herald newer than this one migrated it further.
	setVersion(t, path, want+1)
	_, err = OpenSource(ctx, path)
	if !errors.As(err, &ev) || ev.Have != want+1 || !strings.Contains(err.Error(), "newer than this herald") {
		t.Fatalf("open a newer database = %v, want ErrSchemaVersion, newer", err)
	}

	if _, err := OpenSource(ctx, filepath.Join(t.TempDir(), "missing.db")); err == nil {
		t.Error("opened a file that does not exist")
	}
}

// An older copy of a store that has swept its events: the events table is
// empty, but its ids were handed out, and streams may resume from them.
func TestCopyKeepsEventIDsPastSweptOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "herald.db")
	s, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := seed(t, s)
	swept, err := s.LastEventID(ctx)
	if err != nil || swept == 0 {
		t.Fatalf("last event id = %d, %v", swept, err)
	}
	if n, err := s.DeleteEventsBefore(ctx, time.Now().Add(24*time.Hour)); err != nil || n == 0 {
		t.Fatalf("sweep events = %d, %v", n, err)
	}
	s.Close()

	src, err := OpenSource(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	pg, err := store.Open(ctx, pgtest.NewDatabase(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if _, err := Copy(ctx, pg, src); err != nil {
		t.Fatal(err)
	}
	m := &store.Message{ChannelID: f.channel, OwnerID: f.user, Title: "after", Priority: "normal"}
	if err := pg.CreateMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	evs, err := pg.EventsAfter(ctx, f.user, 0, 10)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events = %+v, %v; want the new message's", evs, err)
	}
	if evs[0].ID <= swept {
		t.Errorf("new event id = %d, want above %d, which SQLite handed out before the sweep", evs[0].ID, swept)
	}
}

type seeded struct{ user, channel string }

// seed gives s a user, a channel and a message.
func seed(t *testing.T, s *store.Store) seeded {
	t.Helper()
	ctx := context.Background()
	u := &store.User{Email: "a@example.com", Plan: "free"}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	c := &store.Channel{UserID: u.ID, Name: "c"}
	if err := s.CreateChannel(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateMessage(ctx, &store.Message{ChannelID: c.ID, OwnerID: u.ID, Title: "t", Priority: "normal"}); err != nil {
		t.Fatal(err)
	}
	return seeded{u.ID, c.ID}
}

func TestCopyOnlyToPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, err := OpenSource(ctx, newSQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	other, err := store.Open(ctx, filepath.Join(t.TempDir(), "other.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := Copy(ctx, other, src); err == nil {
		t.Error("copied into a SQLite database")
	}
}
