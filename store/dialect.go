package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// The store's SQL is written once, for SQLite, with ? placeholders, and
// kept to what PostgreSQL runs as well. The few statements that differ
// choose by Store.pg. db and tx rewrite the placeholders for PostgreSQL
// on the way out, so the queries read the same for both.

// db is a connection pool that speaks the store's SQL to either database.
type db struct {
	*sql.DB
	pg bool
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
	q, args = bind(d.pg, q, args)
	return d.DB.QueryContext(ctx, q, args...)
}

func (d *db) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	q, args = bind(d.pg, q, args)
	return d.DB.QueryRowContext(ctx, q, args...)
}

func (d *db) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	q, args = bind(d.pg, q, args)
	return d.DB.ExecContext(ctx, q, args...)
}

func (d *db) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	q, _ = bind(d.pg, q, nil)
	return d.DB.PrepareContext(ctx, q)
}

func (d *db) BeginTx(ctx context.Context, opts *sql.TxOptions) (*tx, error) {
	t, err := d.DB.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &tx{Tx: t, pg: d.pg}, nil
}

// tx is a transaction of a db.
type tx struct {
	*sql.Tx
	pg bool
}

func (t *tx) Exec(q string, args ...any) (sql.Result, error) {
	return t.ExecContext(context.Background(), q, args...)
}

func (t *tx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	q, args = bind(t.pg, q, args)
	return t.Tx.ExecContext(ctx, q, args...)
}

func (t *tx) Query(q string, args ...any) (*sql.Rows, error) {
	return t.QueryContext(context.Background(), q, args...)
}

func (t *tx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	q, args = bind(t.pg, q, args)
	return t.Tx.QueryContext(ctx, q, args...)
}

func (t *tx) QueryRow(q string, args ...any) *sql.Row {
	return t.QueryRowContext(context.Background(), q, args...)
}

func (t *tx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	q, args = bind(t.pg, q, args)
	return t.Tx.QueryRowContext(ctx, q, args...)
}

// bindArgs is bind for the arguments of a prepared statement.
func bindArgs(pg bool, args []any) []any {
	_, args = bind(pg, "", args)
	return args
}

// bind rewrites a query and its arguments for PostgreSQL: ? becomes $1,
// $2, ... in order and ?N becomes $N; booleans, which SQLite stores as 0
// and 1 and the schema keeps as integers on both, are passed as integers.
// For SQLite it returns them as they are.
func bind(pg bool, q string, args []any) (string, []any) {
	if !pg {
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

// approvers is a FROM item: the approvers listed in the approval rule of
// message row m, one row each, named j with the user id in j.value.
func (s *Store) approvers(m string) string {
	if s.pg {
		return "herald_approvers(" + m + ".approval) AS j(value)" // json_each's rows, in the PostgreSQL schema
	}
	return "json_each(" + m + ".approval, '$.approvers') j"
}

// userEmail and emailArg compare emails without regard to case: SQLite's
// users.email column has COLLATE NOCASE; PostgreSQL's unique index is on
// lower(email), which these use.
func (s *Store) userEmail() string {
	if s.pg {
		return "lower(u.email)"
	}
	return "u.email"
}

func (s *Store) emailArg() string {
	if s.pg {
		return "lower(?)"
	}
	return "?"
}

// snapshot is the isolation level of a read transaction whose statements
// must all see the same commits.
func (s *Store) snapshot() sql.IsolationLevel {
	if s.pg {
		return sql.LevelRepeatableRead
	}
	return sql.LevelDefault // a SQLite transaction reads one snapshot
}
