package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// The store's SQL is written once, for SQLite, with ? placeholders, and
// kept to what PostgreSQL runs as well. What differs between the two is the
// store's dialect, chosen when it opens: SQLite's (dialect_sqlite.go) or
// PostgreSQL's (dialect_postgres.go). db and tx rewrite the placeholders
// for PostgreSQL on the way out, so the queries read the same for both.

// dialect is what the store's two databases do differently. Each method is
// called once per store, per batch or per query it shapes, never per
// statement of the send path: db and tx bind a statement's arguments by a
// flag of their own (numbered).
type dialect interface {
	// migrations is the directory of the database's migrations.
	migrations() string
	// lockMigrations keeps other processes from migrating the database
	// until unlock, so that replicas started together apply each
	// migration once, one after the other.
	lockMigrations(ctx context.Context, conn *sql.Conn) (unlock func(), err error)
	// prepare prepares the writer's statements of the database's own.
	prepare(s *Store, prep func(d *db, q string) *sql.Stmt)
	// runner returns what runs the writes of one batch in tx.
	runner(s *Store, tx *writeTx) batchRunner
	// start starts what runs beside the writer once the store is open,
	// and returns once it is ready.
	start(ctx context.Context, s *Store) error

	// approvers is a FROM item: the approvers listed in the approval rule
	// of message row m, one row each, named j with the user id in j.value.
	approvers(m string) string
	// userEmail is the column (of users u) and the argument that compare
	// emails without regard to case.
	userEmail() (col, arg string)
	// claimLock ends the SELECT of a fair claim (claims.go).
	claimLock() string
	// skipLocked ends a subquery that picks rows of one table to change:
	// on PostgreSQL it locks them and passes over rows another replica's
	// transaction holds.
	skipLocked() string
	// eventHorizon selects the newest event id whose event, and every one
	// before it, is committed; eventHistory selects that and the oldest
	// event id kept (see EventHorizon and EventHistory).
	eventHorizon() string
	eventHistory() string
	// snapshot is the isolation level of a read transaction whose
	// statements must all see the same commits.
	snapshot() sql.IsolationLevel

	// indexForSearch and searchWalks are IndexForSearch and the walk of a
	// search (messagelist.go) on the database's own search index.
	indexForSearch(ctx context.Context, s *Store, n int) (int, error)
	searchWalks(s *Store, q MessageQuery, conds []stateCond) ([]walk, error)

	// file reports whether the database is one file this process opened,
	// which the store itself backs up, rebuilds and trims; a database
	// server (PostgreSQL) has its own tools for those.
	file() bool
	// replicas reports whether other Herald processes may share the
	// database, with its queues and its shared rate limits.
	replicas() bool
}

// db is a connection pool that speaks the store's SQL to either database.
type db struct {
	*sql.DB
	numbered bool // the driver takes $N placeholders (see bind)
}

func (d *db) Query(q string, args ...any) (*sql.Rows, error) {
	return d.QueryContext(context.Background(), q, args...)
}

func (d *db) QueryRow(q string, args ...any) *sql.Row {
	return d.QueryRowContext(context.Background(), q, args...)
}

func (d *db) Exec(q string, args ...any) (sql.Result, error) {
	return d.ExecContext(context.Background(), q, args...)
}

func (d *db) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	q, args = bind(d.numbered, q, args)
	return d.DB.QueryContext(ctx, q, args...)
}

func (d *db) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	q, args = bind(d.numbered, q, args)
	return d.DB.QueryRowContext(ctx, q, args...)
}

func (d *db) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	q, args = bind(d.numbered, q, args)
	return d.DB.ExecContext(ctx, q, args...)
}

func (d *db) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	q, _ = bind(d.numbered, q, nil)
	return d.DB.PrepareContext(ctx, q)
}

func (d *db) BeginTx(ctx context.Context, opts *sql.TxOptions) (*tx, error) {
	t, err := d.DB.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &tx{Tx: t, numbered: d.numbered}, nil
}

// tx is a transaction of a db.
type tx struct {
	*sql.Tx
	numbered bool // as db's
}

func (t *tx) Exec(q string, args ...any) (sql.Result, error) {
	return t.ExecContext(context.Background(), q, args...)
}

func (t *tx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	q, args = bind(t.numbered, q, args)
	return t.Tx.ExecContext(ctx, q, args...)
}

func (t *tx) Query(q string, args ...any) (*sql.Rows, error) {
	return t.QueryContext(context.Background(), q, args...)
}

func (t *tx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	q, args = bind(t.numbered, q, args)
	return t.Tx.QueryContext(ctx, q, args...)
}

func (t *tx) QueryRow(q string, args ...any) *sql.Row {
	return t.QueryRowContext(context.Background(), q, args...)
}

func (t *tx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	q, args = bind(t.numbered, q, args)
	return t.Tx.QueryRowContext(ctx, q, args...)
}

// batchRunner runs the writes of one writer transaction (pgrows.go,
// sqliterows.go).
type batchRunner interface {
	// run runs one write, whose error undoes only its own changes and
	// goes only to its own caller (*errp); a non-nil return is an error
	// of the transaction itself, which fails the whole batch.
	run(req *writeReq, errp *error) error
	// idle runs what run kept for later while the writer's queue is
	// empty, and reports whether there was any: more writes may have
	// come meanwhile.
	idle() (bool, error)
	// flush runs what run kept for later (its rows, and on PostgreSQL
	// the NOTIFY of what the batch marked); the batch calls it before
	// its commit.
	flush() error
}

// bindArgs is bind for the arguments of a prepared statement.
func bindArgs(numbered bool, args []any) []any {
	_, args = bind(numbered, "", args)
	return args
}

// bind rewrites a query and its arguments for a numbered driver
// (PostgreSQL): ? becomes $1, $2, ... in order and ?N becomes $N; booleans,
// which SQLite stores as 0 and 1 and the schema keeps as integers on both,
// are passed as integers. For SQLite it returns them as they are.
func bind(numbered bool, q string, args []any) (string, []any) {
	if !numbered {
		return q, args
	}
	copied := false
	for i, a := range args {
		if b, ok := a.(bool); ok {
			if !copied { // never change the caller's slice
				args, copied = append([]any(nil), args...), true
			}
			args[i] = boolInt(b)
		}
	}
	return rebind(q), args
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// rebind turns SQLite's ? and ?N placeholders into PostgreSQL's $N,
// leaving string literals, quoted names and comments alone.
func rebind(q string) string {
	if !strings.ContainsRune(q, '?') {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch c {
		case '\'', '"':
			j := strings.IndexByte(q[i+1:], c)
			if j < 0 {
				b.WriteString(q[i:])
				return b.String()
			}
			b.WriteString(q[i : i+j+2])
			i += j + 1
		case '-':
			if i+1 < len(q) && q[i+1] == '-' {
				j := strings.IndexByte(q[i:], '\n')
				if j < 0 {
					b.WriteString(q[i:])
					return b.String()
				}
				b.WriteString(q[i : i+j])
				i += j - 1
				continue
			}
			b.WriteByte(c)
		case '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			b.WriteByte('$')
			if j > i+1 {
				b.WriteString(q[i+1 : j])
				i = j - 1
			} else {
				n++
				b.WriteString(strconv.Itoa(n))
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
