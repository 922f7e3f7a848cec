package store

import (
	"context"
	"database/sql"
)

// sqliteDialect is SQLite's: the database is one file, written by one
// process at a time (the command line beside a running server waits for
// the server's transactions).
type sqliteDialect struct{}

func (sqliteDialect) migrations() string { return "migrations/sqlite" }

// lockMigrations needs no lock of its own: each migration's transaction
// is IMMEDIATE (the writer's _txlock), so a second process waits for it and
// then finds it applied.
func (sqliteDialect) lockMigrations(context.Context, *sql.Conn) (func(), error) {
	return func() {}, nil
}

// prepare prepares the savepoint every write of a batch runs in
// (sqliteBatch): one name, released after each write; the event horizon
// the writer reads before committing events; and the statements of rows
// (sqliterows.go).
func (d sqliteDialect) prepare(s *Store, prep func(d *db, q string) *sql.Stmt) {
	s.st.savepoint = prep(s.write, "SAVEPOINT w")
	s.st.release = prep(s.write, "RELEASE w")
	s.st.rollbackTo = prep(s.write, "ROLLBACK TO w")
	s.st.writerHorizon = prep(s.write, d.eventHorizon())
	s.st.rows = prepareRows(s, prep)
}

func (sqliteDialect) runner(s *Store, tx *writeTx) batchRunner {
	return &sqliteBatch{s: s, tx: tx}
}

func (sqliteDialect) start(context.Context, *Store) error { return nil }

func (sqliteDialect) approvers(m string) string {
	return "json_each(" + m + ".approval, '$.approvers') j"
}

// userEmail: the users.email column has COLLATE NOCASE.
func (sqliteDialect) userEmail() (col, arg string) { return "u.email", "?" }

// claimLock is empty: the writer's transaction is the only one.
func (sqliteDialect) claimLock() string { return "" }

// skipLocked is empty: the writer's transaction is the only one.
func (sqliteDialect) skipLocked() string { return "" }

// eventHorizon is the newest id AUTOINCREMENT handed out: with one
// writer, every event up to it is committed once a commit is seen. Ids are
// never reused, so it stays where it is when the newest events are deleted.
func (sqliteDialect) eventHorizon() string {
	return `SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0)`
}

func (sqliteDialect) eventHistory() string {
	return `SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0), (SELECT MIN(id) FROM events)`
}

// snapshot: a SQLite transaction reads one snapshot whatever its level.
func (sqliteDialect) snapshot() sql.IsolationLevel { return sql.LevelDefault }

func (sqliteDialect) indexForSearch(ctx context.Context, s *Store, n int) (int, error) {
	return s.indexForSearchSQLite(ctx, n)
}

func (sqliteDialect) searchWalks(s *Store, q MessageQuery, conds []stateCond) ([]walk, error) {
	return s.searchWalksSQLite(q, conds)
}

func (sqliteDialect) file() bool { return true }

func (sqliteDialect) replicas() bool { return false }
