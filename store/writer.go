package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// ErrClosed is returned for writes submitted after Close.
var ErrClosed = errors.New("store: closed")

// errRolledBack fails a batch whose transaction SQLite rolled back by itself.
var errRolledBack = errors.New("store: the database rolled the transaction back")

// writeTx is the transaction a write runs in. Its methods take no context:
// every statement runs under the writer's own, never a caller's. modernc
// interrupts a statement whose context ends (sqlite3_interrupt), and an
// interrupted statement inside a transaction makes SQLite roll back the
// whole transaction, with every other caller's write in the batch. A
// caller's context only decides whether its write is queued and started.
type writeTx struct {
	tx *tx
	// PostgreSQL: the SQL that opens the write's savepoint, which the next
	// Exec runs in the same round trip (see pgBatch.runOne), and the SQL of
	// the statements ExecStmt may get.
	opening string
	texts   map[*sql.Stmt]string
}

func (t *writeTx) Exec(q string, args ...any) (sql.Result, error) {
	if t.opening != "" {
		return t.execOpening(q, args)
	}
	return t.tx.ExecContext(context.Background(), q, args...)
}

func (t *writeTx) Query(q string, args ...any) (*sql.Rows, error) {
	if err := t.open(); err != nil {
		return nil, err
	}
	return t.tx.QueryContext(context.Background(), q, args...)
}

func (t *writeTx) QueryRow(q string, args ...any) *sql.Row {
	// Should opening fail, the transaction is aborted: the query fails
	// too, and so does the batch, at the rollback to the savepoint.
	_ = t.open()
	return t.tx.QueryRowContext(context.Background(), q, args...)
}

// ExecStmt runs a statement prepared on the writer connection.
func (t *writeTx) ExecStmt(st *sql.Stmt, args ...any) (sql.Result, error) {
	if t.opening != "" {
		return t.execOpening(t.texts[st], args)
	}
	return t.tx.Stmt(st).ExecContext(context.Background(), bindArgs(t.tx.numbered, args)...)
}

// rollbackWatch records that SQLite rolled back the writer connection's
// transaction. SQLite does that by itself after some errors (an
// interrupt, I/O error, full disk, no memory, a ROLLBACK conflict clause):
// the statement fails, the transaction is gone, and any statement after it
// would run, and commit, on its own. The writer checks it after every write
// so that a batch whose transaction is gone fails as a whole at once.
type rollbackWatch struct{ rolledBack atomic.Bool }

func (w *rollbackWatch) hook() { w.rolledBack.Store(true) }

// maxBatch bounds how many writes share one transaction.
const maxBatch = 256

// writeReq is one unit of work for the writer goroutine.
type writeReq struct {
	ctx  context.Context
	fn   func(tx *writeTx) error
	done chan error
	// single: fn runs exactly one statement, which SQLite already makes
	// atomic, so it needs no savepoint of its own.
	single bool
	// row: on PostgreSQL, the write is this one row, inserted with the
	// rows of the writes around it (pgrows.go); fn inserts it alone.
	row *rowWrite
}

// update runs fn in a write transaction and returns once that transaction has
// committed (or failed). Concurrent calls are grouped into one transaction
// (group commit): with synchronous=FULL each commit costs an fsync, so one
// fsync for many requests is what makes durable writes scale. Each fn runs
// inside its own SAVEPOINT, so an error in one rolls back only its own changes
// and is returned only to its own caller.
//
// fn runs on the writer goroutine: it must only touch tx, never block on
// anything else, and never call update itself.
func (s *Store) update(ctx context.Context, fn func(tx *writeTx) error) error {
	return s.submit(&writeReq{ctx: ctx, fn: fn, done: make(chan error, 1)})
}

// updateStatement is update for an fn that runs exactly one SQL statement: a
// failed statement changes nothing, so no savepoint is needed.
func (s *Store) updateStatement(ctx context.Context, fn func(tx *writeTx) error) error {
	return s.submit(&writeReq{ctx: ctx, fn: fn, done: make(chan error, 1), single: true})
}

// insertRow is updateStatement for a write that inserts one row: fn
// inserts it alone, and on PostgreSQL the writer may instead insert it
// with others, as row says (pgrows.go).
func (s *Store) insertRow(ctx context.Context, row *rowWrite, fn func(tx *writeTx) error) error {
	return s.submit(&writeReq{ctx: ctx, fn: fn, done: make(chan error, 1), single: true, row: row})
}

func (s *Store) submit(req *writeReq) error {
	ctx := req.ctx
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case s.batches <- req:
	case <-s.stop:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once queued, wait for the outcome even if ctx ends: the caller must
	// never answer "failed" for a write that then commits.
	return <-req.done
}

// writer is the only goroutine that writes to the database.
func (s *Store) writer() {
	defer close(s.stopped)
	last := 0
	for {
		select {
		case req := <-s.batches:
			last = s.runBatch(req, last)
		case <-s.stop:
			s.drain()
			return
		}
	}
}

// drain commits whatever was queued before Close.
func (s *Store) drain() {
	for {
		select {
		case req := <-s.batches:
			s.runBatch(req, 0)
		default:
			return
		}
	}
}

// maxLinger bounds how long a batch waits for more writes (see runBatch).
const maxLinger = time.Millisecond

// runBatch runs first in a new transaction, then every write that arrives
// while the transaction is open, commits, and reports to every caller. It
// returns the batch's size.
//
// Writes run as they arrive, so a batch grows while it works instead of
// being fixed when it starts; the rows a runner keeps for one statement
// run when the queue runs dry (idle), and what arrives meanwhile joins the
// batch too. (Kept until the commit, SQLite's sends made batches a quarter
// smaller, of 18 sends instead of 24 at 32 connections, and the commit's
// cost, shared by fewer, ate what the statements of rows saved.) When the
// queue runs dry, with nothing kept, before the batch is
// as large as the last one (target), it waits up to maxLinger for more: the
// callers the last commit answered are most likely on their way back, and
// one fsync for all of them costs less than one each. Measured with
// bench/load.sh at 32 connections: ~16.3k sends/s for batches fixed at
// their start, ~17.0k growing, ~17.8k growing with the wait (300 µs to 2 ms
// all gave about the same). A lone client never waits: its target is 1.
func (s *Store) runBatch(first *writeReq, target int) int {
	// Room for the whole batch: a write's error is set through a pointer
	// into errs, also after later writes are added (pgrows.go).
	reqs := append(make([]*writeReq, 0, maxBatch), first)
	errs := append(make([]error, 0, maxBatch), nil)
	fail := func(err error) int {
		s.wake.discard()
		report(reqs, errs, err)
		return len(reqs)
	}
	s.rollbacks.rolledBack.Store(false)
	sqlTx, err := s.write.BeginTx(context.Background(), nil)
	if err != nil {
		return fail(fmt.Errorf("store: begin: %w", err))
	}
	defer sqlTx.Rollback()
	b := s.dialect.runner(s, &writeTx{tx: sqlTx, texts: s.st.texts})
	if err := b.run(first, &errs[0]); err != nil {
		return fail(err)
	}
	var timer *time.Timer
	var deadline <-chan time.Time
	for len(reqs) < maxBatch {
		var req *writeReq
		select {
		case req = <-s.batches:
		default:
		}
		if req == nil {
			ran, err := b.idle()
			if err != nil {
				return fail(err)
			}
			if ran {
				continue // more may have come meanwhile
			}
		}
		if req == nil {
			if len(reqs) >= target {
				break
			}
			if timer == nil {
				timer = time.NewTimer(maxLinger)
				defer timer.Stop()
				deadline = timer.C
			}
			select {
			case req = <-s.batches:
			case <-deadline:
			}
			if req == nil {
				break
			}
		}
		reqs = append(reqs, req)
		errs = append(errs, nil)
		if err := b.run(req, &errs[len(errs)-1]); err != nil {
			return fail(err)
		}
	}
	if err := b.flush(); err != nil {
		return fail(err)
	}
	if err := sqlTx.Commit(); err != nil {
		return fail(fmt.Errorf("store: commit: %w", err))
	}
	s.wake.fire()
	report(reqs, errs, nil)
	return len(reqs)
}

// report tells every caller of a batch its outcome: its own error, else
// the batch's.
func report(reqs []*writeReq, errs []error, batchErr error) {
	for i, req := range reqs {
		err := errs[i]
		if err == nil {
			err = batchErr
		}
		req.done <- err
	}
}

// checkRolledBack returns an error for the batch if SQLite has rolled its
// transaction back; err is the write's own error, which caused it.
func (s *Store) checkRolledBack(err error) error {
	if !s.rollbacks.rolledBack.Load() {
		return nil
	}
	if err == nil {
		return errRolledBack
	}
	return fmt.Errorf("%w: %w", errRolledBack, err)
}
