package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// IsPostgresURL reports whether dsn names a PostgreSQL database rather than
// a SQLite file.
func IsPostgresURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// postgresDialect is PostgreSQL's: any number of Herald processes
// (replicas) share the database, their writers taking turns (postgres.go).
type postgresDialect struct{}

func (postgresDialect) migrations() string { return "migrations/postgres" }

func (postgresDialect) lockMigrations(ctx context.Context, conn *sql.Conn) (func(), error) {
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", int64(migrateLockKey)); err != nil {
		return nil, fmt.Errorf("store: migration lock: %w", err)
	}
	return func() {
		conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(migrateLockKey))
	}, nil
}

// prepare prepares nothing: the writer names each savepoint (pgBatch).
func (postgresDialect) prepare(*Store, func(d *db, q string) *sql.Stmt) {}

func (postgresDialect) runner(s *Store, tx *writeTx) batchRunner {
	return &pgBatch{s: s, tx: tx}
}

// start starts the shared rate limits' takes and the LISTEN for other
// replicas' commits, and returns once the LISTEN is in place: a commit
// made anywhere once the store is open wakes this replica.
func (postgresDialect) start(ctx context.Context, s *Store) error {
	go s.takeLoop()
	go s.listenLoop()
	select {
	case <-s.listenStarted:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// approvers: json_each's rows, in the PostgreSQL schema.
func (postgresDialect) approvers(m string) string {
	return "herald_approvers(" + m + ".approval) AS j(value)"
}

// userEmail: the users' unique index is on lower(email).
func (postgresDialect) userEmail() (col, arg string) { return "lower(u.email)", "lower(?)" }

// claimLock passes over the rows another transaction has locked, of the
// queue's rows only (a joined channel is not locked). Writer transactions
// run one at a time, so this is a second line of defence.
func (postgresDialect) claimLock() string { return " FOR UPDATE OF j SKIP LOCKED" }

func (postgresDialect) skipLocked() string { return " FOR UPDATE SKIP LOCKED" }

// eventHorizon: a sequence hands ids out before their transaction
// commits, so the horizon is the newest committed event instead: writer
// transactions commit one at a time (postgres.go), so every smaller id has
// committed or never will. Should the newest events be deleted, a stream
// that had seen them is told to reset (it is "newer than any event") and
// replays what is kept: nothing is lost.
func (postgresDialect) eventHorizon() string { return `SELECT COALESCE(MAX(id), 0) FROM events` }

func (postgresDialect) eventHistory() string {
	return `SELECT COALESCE(MAX(id), 0), MIN(id) FROM events`
}

func (postgresDialect) snapshot() sql.IsolationLevel { return sql.LevelRepeatableRead }

func (postgresDialect) indexForSearch(ctx context.Context, s *Store, n int) (int, error) {
	return s.indexForSearchPG(ctx, n)
}

func (postgresDialect) searchWalks(_ *Store, q MessageQuery, conds []stateCond) ([]walk, error) {
	return searchWalksPG(q, conds)
}

func (postgresDialect) file() bool { return false }

func (postgresDialect) replicas() bool { return true }
