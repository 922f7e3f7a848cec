package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/pgtest"
)

// sqliteAt makes a SQLite database at path with the migrations up to and
// including version upTo applied, as a herald of that version left it.
func sqliteAt(t *testing.T, path string, upTo int) {
	t.Helper()
	list, err := loadMigrations("migrations/sqlite")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, m := range list {
		if m.version > upTo {
			break
		}
		if _, err := db.Exec(m.sql); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if _, err := db.Exec("INSERT INTO schema_migrations VALUES (?, ?, 0)", m.version, m.name); err != nil {
			t.Fatal(err)
		}
	}
}

func latestSQLiteVersion(t *testing.T) int {
	t.Helper()
	list, err := loadMigrations("migrations/sqlite")
	if err != nil {
		t.Fatal(err)
	}
	return list[len(list)-1].version
}

func TestCopySourceSchemaVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	want := latestSQLiteVersion(t)
	path := filepath.Join(t.TempDir(), "herald.db")
	sqliteAt(t, path, want-1)

	_, err := OpenSQLiteSource(ctx, path)
	var ev ErrSchemaVersion
	if !errors.As(err, &ev) || ev.Have != want-1 || ev.Want != want {
		t.Fatalf("open an older database = %v, want ErrSchemaVersion %d < %d", err, want-1, want)
	}
	if !strings.Contains(err.Error(), "run this herald on it once first") {
		t.Errorf("error %q does not say what to do", err)
	}

	// What the error advises: opening the file migrates it.
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	src, err := OpenSQLiteSource(ctx, path)
	if err != nil {
		t.Fatalf("open after migrating: %v", err)
	}
	src.Close()

	// A herald newer than this one migrated it further.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("INSERT INTO schema_migrations VALUES (?, 'future.sql', 0)", want+1); err != nil {
		t.Fatal(err)
	}
	_, err = OpenSQLiteSource(ctx, path)
	if !errors.As(err, &ev) || ev.Have != want+1 || !strings.Contains(err.Error(), "newer than this herald") {
		t.Fatalf("open a newer database = %v, want ErrSchemaVersion, newer", err)
	}

	if _, err := OpenSQLiteSource(ctx, filepath.Join(t.TempDir(), "missing.db")); err == nil {
		t.Error("opened a file that does not exist")
	}
}

// An older copy of a store that has swept its events: the events table is
// empty, but its ids were handed out, and streams may resume from them.
func TestCopyKeepsEventIDsPastSweptOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "herald.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := seedTarget(t, s)
	swept, err := s.LastEventID(ctx)
	if err != nil || swept == 0 {
		t.Fatalf("last event id = %d, %v", swept, err)
	}
	if n, err := s.DeleteEventsBefore(ctx, s.now().Add(24*time.Hour)); err != nil || n == 0 {
		t.Fatalf("sweep events = %d, %v", n, err)
	}
	s.Close()

	src, err := OpenSQLiteSource(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	pg, err := Open(ctx, pgtest.NewDatabase(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if _, err := pg.CopyFromSQLite(ctx, src); err != nil {
		t.Fatal(err)
	}
	m := &Message{ChannelID: f.channel, OwnerID: f.user, Title: "after", Priority: "normal"}
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

// seedTarget gives s a user, a channel and a message.
func seedTarget(t *testing.T, s *Store) seeded {
	t.Helper()
	ctx := context.Background()
	u := &User{Email: "a@example.com", Plan: "free"}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	c := &Channel{UserID: u.ID, Name: "c"}
	if err := s.CreateChannel(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateMessage(ctx, &Message{ChannelID: c.ID, OwnerID: u.ID, Title: "t", Priority: "normal"}); err != nil {
		t.Fatal(err)
	}
	return seeded{u.ID, c.ID}
}

func TestCopyOnlyToPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "herald.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	src, err := OpenSQLiteSource(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	other, err := Open(ctx, filepath.Join(t.TempDir(), "other.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.CopyFromSQLite(ctx, src); err == nil {
		t.Error("copied into a SQLite database")
	}
}
