package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

// Each database has its own set of migrations, numbered alike: SQLite's in
// migrations/sqlite, PostgreSQL's in migrations/postgres. PostgreSQL's
// start with one baseline equal to SQLite's 0001 to 0018; a later change
// of the schema is one file in each, with the same number.
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

// migration is one numbered schema change.
type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations(dir string) ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, dir)
	if err != nil {
		return nil, fmt.Errorf("store: read migrations: %w", err)
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("store: migration %q: name must be NNNN_name.sql", e.Name())
		}
		b, err := migrationFiles.ReadFile(dir + "/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("store: read migration %s: %w", e.Name(), err)
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// migrate applies every migration newer than the recorded version, each in
// its own transaction together with its record, so a failed migration leaves
// the schema as it was. On PostgreSQL it holds an advisory lock meanwhile:
// replicas started together apply each migration once, one after the other.
func (s *Store) migrate(ctx context.Context) error {
	list, err := loadMigrations(s.dialect.migrations())
	if err != nil {
		return err
	}
	conn, err := s.write.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	defer conn.Close()
	unlock, err := s.dialect.lockMigrations(ctx, conn)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("store: create schema_migrations: %w", err)
	}
	for _, m := range list {
		if err := s.apply(ctx, conn, m); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) apply(ctx context.Context, conn *sql.Conn, m migration) error {
	t, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: migration %s: %w", m.name, err)
	}
	defer t.Rollback()
	tx := &tx{Tx: t, numbered: s.write.numbered}
	var n int
	if err := tx.QueryRow("SELECT count(*) FROM schema_migrations WHERE version = ?", m.version).Scan(&n); err != nil {
		return fmt.Errorf("store: migration %s: %w", m.name, err)
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.Exec(m.sql); err != nil {
		return fmt.Errorf("store: migration %s: %w", m.name, err)
	}
	if _, err := tx.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
		m.version, m.name, ms(s.now())); err != nil {
		return fmt.Errorf("store: record migration %s: %w", m.name, err)
	}
	return tx.Commit()
}

// LatestSchemaVersion is the schema version this binary's migrations
// reach, the same on both databases.
func LatestSchemaVersion() (int, error) {
	list, err := loadMigrations(sqliteDialect{}.migrations())
	if err != nil {
		return 0, err
	}
	return list[len(list)-1].version, nil
}

// SchemaVersion returns the highest applied migration.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.read.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return v, nil
}
