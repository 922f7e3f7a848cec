package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// On PostgreSQL a statement costs the writer a round trip, and the
// database parses, plans and runs it with a subtransaction for its
// savepoint: at one statement a send, that was most of a send's cost, and
// the writer, which holds the lock every replica's writes wait for, spent
// its time waiting on it. So a write that is one row of an INSERT (a send)
// is not run at once: the writer gathers the rows that writes queue one
// after another and inserts them with one statement (insertRows), before
// the next write of another kind runs and before the commit, so that what
// commits is in the order the writes came.
//
// SQLite gathers them too, for a cost of its own (sqliterows.go).

// rowsInsert is an INSERT of many rows: on PostgreSQL one statement that
// takes its rows as one TEXT[] a column, cast where the column is not
// text; on SQLite a VALUES list (sqliteSQL).
type rowsInsert struct {
	sql     string // PostgreSQL's, with ? placeholders, one a column
	cols    int
	table   string
	columns string // the column list, comma-separated
}

// newRowsInsert makes the INSERT of cols into table; casts names the
// columns whose type is not TEXT, with their type.
func newRowsInsert(table string, cols []string, casts map[string]string) *rowsInsert {
	params := make([]string, len(cols))
	values := make([]string, len(cols))
	for i, c := range cols {
		params[i] = "CAST(? AS TEXT[])"
		values[i] = c
		if t, ok := casts[c]; ok {
			values[i] = "CAST(" + c + " AS " + t + ")"
		}
	}
	list := strings.Join(cols, ", ")
	q := "INSERT INTO " + table + " (" + list + ")\n\tSELECT " + strings.Join(values, ", ") +
		"\n\tFROM unnest(" + strings.Join(params, ", ") + ") WITH ORDINALITY AS t(" + list + ", n)\n\tORDER BY n"
	return &rowsInsert{sql: q, cols: len(cols), table: table, columns: list}
}

// rowWrite is a write that is one row of ins; the write's fn inserts the
// same row alone (a row with no other to go with, and a statement of rows
// that failed).
type rowWrite struct {
	ins   *rowsInsert
	args  []any    // the row: string, *string, int64, bool or nil a column
	marks []string // the topics the write wakes (see wake.go)
}

// pgBatch runs the writes of one writer transaction on PostgreSQL.
//
// Round trips to the database are what a batch waits on, and it holds the
// lock every replica's writes wait for (postgres.go) meanwhile. So what a
// batch needs besides its writes goes with them: the writer lock with its
// first savepoint, the NOTIFY of its rows' topics with the savepoint of
// their statement. A batch of sends alone takes four round trips: BEGIN;
// the lock, NOTIFY and savepoint; the INSERT; COMMIT.
type pgBatch struct {
	s      *Store
	tx     *writeTx
	n      int  // savepoints so far, for their names
	locked bool // the writer lock is taken, or asked for by tx.opening
	rowQueue
	notified map[string]bool // topics whose NOTIFY is queued
}

// lead is what the batch's next round trip runs before its own SQL: the
// writer lock, if no earlier one took it. Every read and write of the
// batch comes after it, so each sees what every replica committed before.
func (b *pgBatch) lead() string {
	if b.locked {
		return ""
	}
	b.locked = true
	return "SELECT pg_advisory_xact_lock(" + strconv.FormatInt(writerLockKey, 10) + "); "
}

type pendingRow struct {
	req  *writeReq
	errp *error
}

// rowQueue holds the rows a batch keeps for one statement, in the order
// their writes came (pgBatch, sqliteBatch).
type rowQueue struct{ rows []pendingRow }

// rowInserter is a batch that inserts the rows it kept (insertRows).
type rowInserter interface{ insertRows() error }

// keep keeps req if it is a row, after b inserted the rows kept of another
// INSERT, and reports whether it kept it. (b is an interface, not a method
// value, which would cost the send path an allocation a row.)
func (q *rowQueue) keep(req *writeReq, errp *error, b rowInserter) (bool, error) {
	if req.row == nil {
		return false, nil
	}
	if len(q.rows) > 0 && q.rows[0].req.row.ins != req.row.ins {
		if err := b.insertRows(); err != nil {
			return true, err
		}
	}
	q.rows = append(q.rows, pendingRow{req, errp})
	return true, nil
}

// take empties the queue and returns the rows whose callers still wait: a
// caller that gave up before its write started gets its error and no
// write.
func (q *rowQueue) take() []pendingRow {
	rows := q.rows
	q.rows = q.rows[:0]
	live := rows[:0]
	for _, r := range rows {
		if err := r.req.ctx.Err(); err != nil {
			*r.errp = err
			continue
		}
		live = append(live, r)
	}
	return live
}

// run runs req, or keeps it for the next insertRows if it is a row.
func (b *pgBatch) run(req *writeReq, errp *error) error {
	if kept, err := b.keep(req, errp, b); kept || err != nil {
		return err
	}
	if err := b.insertRows(); err != nil {
		return err
	}
	return b.runOne(req, errp)
}

// runOne runs one write in a savepoint of its own, so that its error
// undoes only its own changes. Round trips to the database are what a
// batch waits on, so:
//   - a savepoint is never released: the next write's shadows it, and the
//     commit ends them all. Each has a name of its own (w1, w2, ...), so a
//     rollback can only ever reach its own write's;
//   - a single-statement write opens its savepoint in the same round trip
//     as its statement (writeTx.execOpening).
func (b *pgBatch) runOne(req *writeReq, errp *error) error {
	if err := req.ctx.Err(); err != nil {
		*errp = err
		return nil
	}
	lead := b.lead()
	name := b.savepoint()
	if req.single {
		b.tx.opening = lead + "SAVEPOINT " + name
	} else if err := b.exec(lead + "SAVEPOINT " + name); err != nil {
		return fmt.Errorf("store: savepoint: %w", err)
	}
	*errp = req.fn(b.tx)
	opened := b.tx.opening == ""
	if !opened && lead != "" {
		b.locked = false // the write ran no statement: the next one locks
	}
	b.tx.opening = ""
	if *errp != nil && opened {
		if err := b.exec("ROLLBACK TO " + name); err != nil {
			return fmt.Errorf("store: rollback to savepoint: %w", err)
		}
	}
	return nil
}

// exec runs q, SQL of the store's own without arguments, as a
// simple-protocol query: one round trip, however many statements.
func (b *pgBatch) exec(q string) error {
	_, err := b.tx.tx.ExecContext(context.Background(), q, pgx.QueryExecModeSimpleProtocol)
	return err
}

func (b *pgBatch) savepoint() string {
	b.n++
	return "w" + strconv.Itoa(b.n)
}

// insertRows inserts the rows kept so far with one statement, in a
// savepoint. Should it fail, each row goes again on its own (runOne), so
// that each write gets its own error (a send to a channel deleted
// meanwhile) and the others are stored.
func (b *pgBatch) insertRows() error {
	live := b.take()
	switch len(live) {
	case 0:
		return nil
	case 1:
		return b.runOne(live[0].req, live[0].errp)
	}
	ins := live[0].req.row.ins
	columns := make([]any, ins.cols)
	for c := range columns {
		col := make([]*string, len(live))
		for i, r := range live {
			v, err := textValue(r.req.row.args[c])
			if err != nil {
				return err
			}
			col[i] = v
		}
		columns[c] = col
	}
	// The NOTIFY goes before the savepoint, which a failed statement is
	// rolled back to: should it fail, each row's write wakes the same
	// topics anyway when it goes again, or wakes a worker for nothing.
	var topics []string
	for _, r := range live {
		for _, t := range r.req.row.marks {
			if !b.notified[t] && !slices.Contains(topics, t) {
				topics = append(topics, t)
			}
		}
	}
	lead := b.lead()
	if len(topics) > 0 {
		lead += notifySQL(topics)
	}
	name := b.savepoint()
	if err := b.exec(lead + "SAVEPOINT " + name); err != nil {
		return fmt.Errorf("store: savepoint: %w", err)
	}
	b.notify(topics)
	if _, err := b.tx.tx.ExecContext(context.Background(), ins.sql, columns...); err != nil {
		if err := b.exec("ROLLBACK TO " + name); err != nil {
			return fmt.Errorf("store: rollback to savepoint: %w", err)
		}
		for _, r := range live {
			if err := b.runOne(r.req, r.errp); err != nil {
				return err
			}
		}
		return nil
	}
	for _, r := range live {
		for _, t := range r.req.row.marks {
			b.s.wake.mark(t)
		}
	}
	return nil
}

func (b *pgBatch) notify(topics []string) {
	if b.notified == nil {
		b.notified = map[string]bool{}
	}
	for _, t := range topics {
		b.notified[t] = true
	}
}

// idle does nothing: PostgreSQL keeps its rows until the batch's next
// write of another kind or its commit, for one statement and one round
// trip.
func (b *pgBatch) idle() (bool, error) { return false, nil }

// flush inserts the rows left, then NOTIFYs every topic the batch marked
// that no NOTIFY has gone for yet, before the batch commits.
func (b *pgBatch) flush() error {
	if err := b.insertRows(); err != nil {
		return err
	}
	var topics []string
	for t := range b.s.wake.marked {
		if !b.notified[t] {
			topics = append(topics, t)
		}
	}
	if len(topics) == 0 {
		return nil
	}
	if err := b.exec(notifySQL(topics)); err != nil {
		return fmt.Errorf("store: notify %v: %w", topics, err)
	}
	b.notify(topics)
	return nil
}

// textValue is v as the text PostgreSQL casts to its column's type; nil
// is NULL.
func textValue(v any) (*string, error) {
	var s string
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		s = v
	case *string:
		return v, nil
	case int64:
		s = strconv.FormatInt(v, 10)
	case int:
		s = strconv.Itoa(v)
	case bool:
		s = strconv.FormatInt(boolInt(v), 10)
	default:
		return nil, fmt.Errorf("store: a row's value of type %T", v)
	}
	return &s, nil
}
