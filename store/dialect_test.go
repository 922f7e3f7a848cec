package store

import (
	"testing"
)

// TestLatestSchemaVersionOfBoth: a change of the schema is one migration
// in each database's directory, with the same number, so the version this
// binary reaches is the same on both (LatestSchemaVersion, which
// herald migrate-data holds a SQLite file to, reads SQLite's).
func TestLatestSchemaVersionOfBoth(t *testing.T) {
	t.Parallel()
	latest, err := LatestSchemaVersion()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []dialect{sqliteDialect{}, postgresDialect{}} {
		list, err := loadMigrations(d.migrations())
		if err != nil {
			t.Fatal(err)
		}
		if got := list[len(list)-1].version; got != latest {
			t.Errorf("%s ends at version %d, LatestSchemaVersion is %d", d.migrations(), got, latest)
		}
	}
}

// TestIsPostgresURL: a postgres:// or postgresql:// URL is a PostgreSQL
// database, which Open opens with PostgreSQL's dialect; anything else is
// the path of a SQLite file.
func TestIsPostgresURL(t *testing.T) {
	t.Parallel()
	for dsn, want := range map[string]bool{
		"postgres://u@h/db": true, "postgresql://u@h/db": true,
		"/var/lib/herald/herald.db": false, "postgres.db": false, "data/postgres://x": false,
	} {
		if got := IsPostgresURL(dsn); got != want {
			t.Errorf("IsPostgresURL(%q) = %v, want %v", dsn, got, want)
		}
	}
}
