package store

import (
	"context"
	"fmt"
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
// SQLite runs each of these writes as it comes: its statements cost no
// round trip, and one prepared INSERT a row is what it does fastest.

// rowsInsert is an INSERT that takes its rows as one TEXT[] a column,
// cast where the column is not text.
type rowsInsert struct {
	sql  string // with ? placeholders, one a column
	cols int
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
	return &rowsInsert{sql: q, cols: len(cols)}
}

// rowWrite is a write that is one row of ins, on PostgreSQL; the write's fn
// inserts the same row alone (SQLite, and a batch whose statement failed).
type rowWrite struct {
	ins   *rowsInsert
	args  []any    // the row: string, *string, int64, bool or nil a column
	marks []string // the topics the write wakes (see wake.go)
}

// pgBatch runs the writes of one writer transaction on PostgreSQL.
type pgBatch struct {
	s    *Store
	tx   *writeTx
	n    int // savepoints so far, for their names
	rows []pendingRow
}

type pendingRow struct {
	req  *writeReq
	errp *error
}

// run runs req, or keeps it for the next insertRows if it is a row.
func (b *pgBatch) run(req *writeReq, errp *error) error {
	if req.row != nil {
		if len(b.rows) > 0 && b.rows[0].req.row.ins != req.row.ins {
			if err := b.insertRows(); err != nil {
				return err
			}
		}
		b.rows = append(b.rows, pendingRow{req, errp})
		return nil
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
	name := b.savepoint()
	if req.single {
		b.tx.opening = name
	} else if _, err := b.tx.tx.ExecContext(context.Background(), "SAVEPOINT "+name, pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("store: savepoint: %w", err)
	}
	*errp = req.fn(b.tx)
	opened := b.tx.opening == ""
	b.tx.opening = ""
	if *errp != nil && opened {
		if _, err := b.tx.tx.ExecContext(context.Background(), "ROLLBACK TO "+name, pgx.QueryExecModeSimpleProtocol); err != nil {
			return fmt.Errorf("store: rollback to savepoint: %w", err)
		}
	}
	return nil
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
	rows := b.rows
	b.rows = b.rows[:0]
	live := rows[:0]
	for _, r := range rows {
		// A caller that gave up before its write started gets its error
		// and no write.
		if err := r.req.ctx.Err(); err != nil {
			*r.errp = err
			continue
		}
		live = append(live, r)
	}
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
	ctx := context.Background()
	name := b.savepoint()
	if _, err := b.tx.tx.ExecContext(ctx, "SAVEPOINT "+name, pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("store: savepoint: %w", err)
	}
	if _, err := b.tx.tx.ExecContext(ctx, ins.sql, columns...); err != nil {
		if _, err := b.tx.tx.ExecContext(ctx, "ROLLBACK TO "+name, pgx.QueryExecModeSimpleProtocol); err != nil {
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
		*r.errp = nil
		for _, t := range r.req.row.marks {
			b.s.wake.mark(t)
		}
	}
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
