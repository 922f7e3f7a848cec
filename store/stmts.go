package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// stmts are the hot path's statements, prepared once. Parsing SQL costs
// about as much as running these small statements, and the send path runs
// them for every message.
type stmts struct {
	// On the writer connection (used through tx.StmtContext).
	savepoint, release, rollbackTo *sql.Stmt
	insertMessage                  *sql.Stmt
	writerHorizon                  *sql.Stmt                   // SQLite: EventHorizon inside the writer's transaction
	rows                           map[*rowsInsert][]*sql.Stmt // SQLite: statements of rows (sqliterows.go)
	// On the reader pool.
	channelByToken         *sql.Stmt
	nextPush, nextDelivery *sql.Stmt
	eventHorizon           *sql.Stmt
	// The SQL of the writer's statements, for PostgreSQL (writeTx.ExecStmt).
	texts map[*sql.Stmt]string
}

func (s *Store) prepare(ctx context.Context) error {
	var errs []error
	prep := func(d *db, q string) *sql.Stmt {
		st, err := d.PrepareContext(ctx, q)
		errs = append(errs, err)
		return st
	}
	s.st = stmts{
		insertMessage: prep(s.write, insertMessageSQL),
		// A scalar subquery rather than a JOIN: cheaper to run here.
		channelByToken: prep(s.read, "SELECT "+channelCols+`, (SELECT plan FROM users WHERE id = c.user_id)
			FROM channels c WHERE c.webhook_token = ?`),
		// The workers ask after every commit that may concern them.
		nextPush:     prep(s.read, `SELECT MIN(`+dueAt+`) FROM push_jobs`),
		nextDelivery: prep(s.read, `SELECT MIN(`+dueAt+`) FROM deliveries WHERE state = 'pending'`),
		// The live stream hub asks after every commit that wrote events.
		eventHorizon: prep(s.read, s.dialect.eventHorizon()),
	}
	s.dialect.prepare(s, prep)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("store: prepare statements: %w", err)
	}
	s.st.texts = map[*sql.Stmt]string{s.st.insertMessage: insertMessageSQL}
	return nil
}

// insertMessageSQL stores a message (CreateMessage), and on PostgreSQL
// insertMessages stores several (pgrows.go).
const insertMessageSQL = `INSERT INTO messages
	(` + messageInsertCols + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const messageInsertCols = "id, channel_id, title, body, priority, actions, callback_url, muted, approval, state, created_at, approval_deadline, extras, sequence_id, deliver_at, ephemeral, no_push"

var insertMessages = newRowsInsert("messages", strings.Split(messageInsertCols, ", "),
	map[string]string{"muted": "BIGINT", "created_at": "BIGINT", "approval_deadline": "BIGINT",
		"deliver_at": "BIGINT", "ephemeral": "BIGINT", "no_push": "BIGINT"})

// dueAt is when a queued job may next be claimed: its next attempt, or the
// end of a lease on it, whichever is later.
const dueAt = `CASE WHEN lease_until > next_attempt_at THEN lease_until ELSE next_attempt_at END`

func (s *Store) closeStmts() {
	for _, st := range []*sql.Stmt{s.st.savepoint, s.st.release, s.st.rollbackTo, s.st.insertMessage, s.st.writerHorizon, s.st.channelByToken, s.st.nextPush, s.st.nextDelivery, s.st.eventHorizon} {
		if st != nil {
			st.Close()
		}
	}
	for _, sts := range s.st.rows {
		for _, st := range sts {
			st.Close()
		}
	}
}
