package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/bits"
	"strings"
)

// On SQLite a statement costs no round trip, but each still pays for
// itself: database/sql and the driver bind and run it, and SQLite opens a
// cursor on the table and on each of its indexes, copies the pages it
// changes into the statement journal, and closes it all again. On the
// messages table, with its triggers and eight indexes, that was about a
// quarter of a send's cost in the writer: BenchmarkCreateMessage (32
// goroutines, synchronous=full), five alternating runs, 38-47 us of CPU a
// message with a statement each, 32-36 us with statements of rows (and
// the savepoint's statements taken only when needed). So, as on
// PostgreSQL (pgrows.go), the writer gathers the rows that writes queue
// one after another and inserts them with few statements, before the next
// write of another kind runs and before the commit, so that what commits
// is in the order the writes came. The statements are prepared when the
// store opens, one for each power of two up to 1<<maxRowsLog rows: a run
// of rows goes in the largest that fit.

// maxRowsLog bounds the statements of rows: 2, 4, ..., 64 rows.
const maxRowsLog = 6

// sqliteSQL is the INSERT of n rows of ins.
func (ins *rowsInsert) sqliteSQL(n int) string {
	row := "(?" + strings.Repeat(", ?", ins.cols-1) + ")"
	return "INSERT INTO " + ins.table + " (" + ins.columns + ") VALUES " + row + strings.Repeat(", "+row, n-1)
}

// rowInserts are the inserts whose rows SQLite's writer gathers.
var rowInserts = []*rowsInsert{insertMessages}

// prepareRows prepares the statements of rows of every rowInserts on the
// writer connection: rows[ins][k] inserts 2<<k rows.
func prepareRows(s *Store, prep func(d *db, q string) *sql.Stmt) map[*rowsInsert][]*sql.Stmt {
	rows := map[*rowsInsert][]*sql.Stmt{}
	for _, ins := range rowInserts {
		for k := range maxRowsLog {
			rows[ins] = append(rows[ins], prep(s.write, ins.sqliteSQL(2<<k)))
		}
	}
	return rows
}

// sqliteBatch is SQLite's batchRunner (dialect.runner): each write runs in
// tx inside its own savepoint, so that its error undoes only its own
// changes and goes only to its own caller (*errp); rows wait for the
// statement of their run (insertRows), until the queue is empty (idle).
// When a write's error made SQLite roll the transaction back, run fails
// the whole batch, so that no later write runs outside it. flush inserts
// the rows left, then reads, when the batch wrote events and the live
// stream hub follows them (FollowEvents), the newest event id: the writer
// has the page at hand, where a reader after the commit would start a new
// snapshot and read it from the file again.
type sqliteBatch struct {
	s  *Store
	tx *writeTx
	rowQueue
	// The savepoint's statements on tx, taken when a write first needs
	// them: a batch of sends needs none (each send is one statement).
	savepoint, release, rollbackTo *sql.Stmt
}

// run runs req, or keeps it for the next insertRows if it is a row.
func (b *sqliteBatch) run(req *writeReq, errp *error) error {
	if kept, err := b.keep(req, errp, b); kept || err != nil {
		return err
	}
	if err := b.insertRows(); err != nil {
		return err
	}
	return b.runOne(req, errp)
}

// idle inserts the rows kept so far while the writer's queue is empty:
// the batch then takes as long to run as when each row went as it came,
// and the writes that arrive meanwhile join it, instead of the commit
// coming sooner with fewer writes and the commit's cost shared by fewer.
func (b *sqliteBatch) idle() (bool, error) {
	if len(b.rows) == 0 {
		return false, nil
	}
	return true, b.insertRows()
}

func (b *sqliteBatch) flush() error {
	if err := b.insertRows(); err != nil {
		return err
	}
	s := b.s
	if s.wake.marked[TopicEvents] && s.wake.followers.Load() > 0 {
		var n int64
		if err := b.tx.tx.Stmt(s.st.writerHorizon).QueryRowContext(context.Background()).Scan(&n); err != nil {
			n = 0 // unknown: FollowEvents asks a reader
		}
		s.wake.pendingEvents = n
	}
	return nil
}

// runOne runs one write on its own.
func (b *sqliteBatch) runOne(req *writeReq, errp *error) error {
	ctx := context.Background()
	// A caller that gave up before its write started gets its error and
	// no write; once started, the write runs to its end.
	if err := req.ctx.Err(); err != nil {
		*errp = err
		return nil
	}
	if req.single {
		*errp = req.fn(b.tx)
		return b.s.checkRolledBack(*errp)
	}
	if b.savepoint == nil {
		b.savepoint, b.release, b.rollbackTo = b.tx.tx.Stmt(b.s.st.savepoint), b.tx.tx.Stmt(b.s.st.release), b.tx.tx.Stmt(b.s.st.rollbackTo)
	}
	if _, err := b.savepoint.ExecContext(ctx); err != nil {
		return fmt.Errorf("store: savepoint: %w", err)
	}
	if *errp = req.fn(b.tx); *errp != nil {
		if err := b.s.checkRolledBack(*errp); err != nil {
			return err
		}
		if _, err := b.rollbackTo.ExecContext(ctx); err != nil {
			return fmt.Errorf("store: rollback to savepoint: %w", err)
		}
	}
	if _, err := b.release.ExecContext(ctx); err != nil {
		return fmt.Errorf("store: release savepoint: %w", err)
	}
	return nil
}

// insertRows inserts the rows kept so far, in order, with the fewest
// statements of rows that fit, the largest first; a row left alone goes
// on its own. A failed statement changes nothing (SQLite undoes a
// statement as a whole), and each of its rows then goes again on its own,
// so that each write gets its own error (a send to a channel deleted
// meanwhile) and the others are stored.
func (b *sqliteBatch) insertRows() error {
	live := b.take()
	for len(live) > 0 {
		if len(live) == 1 {
			return b.runOne(live[0].req, live[0].errp)
		}
		k := min(bits.Len(uint(len(live)))-2, maxRowsLog-1) // 2<<k rows fit
		chunk := live[:2<<k]
		live = live[len(chunk):]
		ins := chunk[0].req.row.ins
		args := make([]any, 0, len(chunk)*ins.cols)
		for _, r := range chunk {
			args = append(args, r.req.row.args...)
		}
		if _, err := b.tx.tx.Stmt(b.s.st.rows[ins][k]).ExecContext(context.Background(), args...); err != nil {
			if err := b.s.checkRolledBack(err); err != nil {
				return err
			}
			for _, r := range chunk {
				if err := b.runOne(r.req, r.errp); err != nil {
					return err
				}
			}
			continue
		}
		for _, r := range chunk {
			for _, t := range r.req.row.marks {
				b.s.wake.mark(t)
			}
		}
	}
	return nil
}
