// Package pgcopy moves a SQLite installation to PostgreSQL (herald
// migrate-data): every row of every table is copied as it is, ids and
// rowids included, into an empty PostgreSQL database, in one transaction.
// The tables and their columns are read from the two databases themselves,
// not listed here, so a table added by a later migration is copied without
// a change to this package; a table or a column that one database has and
// the other lacks stops the copy.
package pgcopy

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/heraldhq/herald/store"
)

// Source is a SQLite database opened read-only, to be copied.
type Source struct {
	db      *sql.DB
	read    sqliteReader // db, or the copy's read transaction
	path    string
	version int
}

// sqliteReader is a *sql.DB or a *sql.Tx.
type sqliteReader interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// ErrSchemaVersion is returned by OpenSource for a database whose
// schema is not the one this binary's migrations reach.
type ErrSchemaVersion struct {
	Path       string
	Have, Want int
}

func (e ErrSchemaVersion) Error() string {
	if e.Have < e.Want {
		return fmt.Sprintf("pgcopy: %s is at schema version %d, this herald's is %d: run this herald on it once first "+
			"(herald serve, or any command, with data_dir pointing at it: opening the file migrates it), stop it, and copy again",
			e.Path, e.Have, e.Want)
	}
	return fmt.Sprintf("pgcopy: %s is at schema version %d, newer than this herald's (%d): copy it with the herald version that last ran on it",
		e.Path, e.Have, e.Want)
}

// ErrTargetNotEmpty is returned by Copy when the PostgreSQL
// database already holds Herald data.
type ErrTargetNotEmpty struct {
	Tables []string // the tables that have rows
}

func (e ErrTargetNotEmpty) Error() string {
	return "pgcopy: the PostgreSQL database already holds Herald data (rows in " + strings.Join(e.Tables, ", ") +
		"); data is copied into an empty database only, whose tables have no rows (a server started on it once " +
		"has already written its settings): copy into a new database (CREATE DATABASE), or drop this one and create it again"
}

// CheckEnds refuses a copy whose source is not a SQLite file or whose
// target is not a PostgreSQL URL, in the words of herald migrate-data's
// flags.
func CheckEnds(from, to string) error {
	if store.IsPostgresURL(from) {
		return errors.New("--from is the SQLite file (herald.db) to copy, not a PostgreSQL URL")
	}
	if !store.IsPostgresURL(to) {
		return fmt.Errorf("--to must be a PostgreSQL URL (postgres://user:password@host/database), not %q", to)
	}
	return nil
}

// OpenSource opens the SQLite file at path read-only and checks that
// its schema is the one this binary's migrations reach. No server may
// write the file meanwhile: the copy would miss what it writes.
func OpenSource(ctx context.Context, path string) (*Source, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("pgcopy: open %s: %w", path, err)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout(10000)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("pgcopy: open %s: %w", path, err)
	}
	src := &Source{db: db, read: db, path: path}
	if err := src.checkVersion(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return src, nil
}

func (src *Source) checkVersion(ctx context.Context) error {
	want, err := store.LatestSchemaVersion()
	if err != nil {
		return err
	}
	var exists bool
	if err := src.read.QueryRowContext(ctx,
		"SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations')").Scan(&exists); err != nil {
		return fmt.Errorf("pgcopy: read %s: %w", src.path, err)
	}
	if !exists {
		return fmt.Errorf("pgcopy: %s is not a Herald database (it has no schema_migrations table)", src.path)
	}
	if err := src.read.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&src.version); err != nil {
		return fmt.Errorf("pgcopy: schema version of %s: %w", src.path, err)
	}
	if src.version != want {
		return ErrSchemaVersion{Path: src.path, Have: src.version, Want: want}
	}
	return nil
}

// Close closes the source database.
func (src *Source) Close() error { return src.db.Close() }

// TableCopy says how many rows of a table were copied.
type TableCopy struct {
	Table string
	Rows  int64
}

// Tables that every database starts with one row in, which the copy
// replaces with the source's row.
var oneRowTables = map[string]bool{"credential_changes": true}

// Tables not copied: the migrations' record, which Open writes, and the
// search index, which each database builds its own way (on PostgreSQL the
// server's indexer rebuilds it from the messages; SQLite's lives in a file
// of its own, fed by the log of deletes in search_deletes).
var notCopied = map[string]bool{"schema_migrations": true, "messages_fts": true, "search_deletes": true}

// Copy copies every row of src into the PostgreSQL store dst, which must
// hold no Herald data yet, in one transaction: all of it or nothing.
// Tables go in foreign-key order, each streamed through COPY (pgx sends it
// in small messages, so no table is held in memory). Every value is kept,
// ids and rowids included, and each identity sequence then starts past
// the largest id copied, or handed out (SQLite's AUTOINCREMENT counter), so
// that no id is handed out twice. Triggers do not fire meanwhile: the
// events and push jobs they would add are copied as rows. The search index
// is left empty, with its position at 0, so that the server's indexer
// (IndexForSearch) rebuilds it.
//
// Turning triggers off takes ALTER TABLE ... DISABLE TRIGGER, which needs
// the role that owns the tables: the one Herald connects as, which created
// them. The copy holds the writers' lock (store.ExclusivePostgresTx) and,
// until it commits, every table's lock: a replica started meanwhile waits
// for it.
func Copy(ctx context.Context, dst *store.Store, src *Source) ([]TableCopy, error) {
	have, err := dst.SchemaVersion(ctx)
	if err != nil {
		return nil, err
	}
	if have != src.version {
		return nil, fmt.Errorf("pgcopy: the PostgreSQL database is at schema version %d, the SQLite one at %d", have, src.version)
	}
	// Every table is read in one read transaction: one snapshot of the
	// file, consistent across tables.
	snap, err := src.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("pgcopy: read %s: %w", src.path, err)
	}
	defer snap.Rollback()
	src.read = snap
	defer func() { src.read = src.db }()
	var copied []TableCopy
	err = dst.ExclusivePostgresTx(ctx, func(t pgx.Tx) error {
		tables, err := copyPlan(ctx, t, src)
		if err != nil {
			return fmt.Errorf("pgcopy: %w", err)
		}
		copied, err = copyTables(ctx, t, src, tables)
		return err
	})
	if err != nil {
		return nil, err
	}
	return copied, nil
}

// copyTables does Copy's work in its transaction t.
func copyTables(ctx context.Context, t pgx.Tx, src *Source, tables []copyTable) ([]TableCopy, error) {
	if err := checkEmpty(ctx, t, tables); err != nil {
		return nil, err
	}
	for _, tb := range tables {
		if _, err := t.Exec(ctx, "ALTER TABLE "+quote(tb.name)+" DISABLE TRIGGER USER"); err != nil {
			return nil, fmt.Errorf("pgcopy: turn off the triggers of %s (the role must own the tables): %w", tb.name, err)
		}
		if oneRowTables[tb.name] {
			if _, err := t.Exec(ctx, "DELETE FROM "+quote(tb.name)); err != nil {
				return nil, fmt.Errorf("pgcopy: %s: %w", tb.name, err)
			}
		}
	}
	var copied []TableCopy
	for _, tb := range tables {
		n, err := copyTableRows(ctx, t, src, tb)
		if err != nil {
			return nil, fmt.Errorf("pgcopy: %s: %w", tb.name, err)
		}
		copied = append(copied, TableCopy{Table: tb.name, Rows: n})
		for _, col := range tb.identity {
			if err := resetSequence(ctx, t, src, tb.name, col); err != nil {
				return nil, fmt.Errorf("pgcopy: sequence of %s.%s: %w", tb.name, col, err)
			}
		}
	}
	if _, err := t.Exec(ctx, "UPDATE search_indexed SET position = 0 WHERE id = 1"); err != nil {
		return nil, fmt.Errorf("pgcopy: search position: %w", err)
	}
	for _, tb := range tables {
		if _, err := t.Exec(ctx, "ALTER TABLE "+quote(tb.name)+" ENABLE TRIGGER USER"); err != nil {
			return nil, fmt.Errorf("pgcopy: turn the triggers of %s back on: %w", tb.name, err)
		}
	}
	return copied, nil
}

// checkEmpty fails with ErrTargetNotEmpty when a table has a row (beyond
// the one that oneRowTables start with).
func checkEmpty(ctx context.Context, t pgx.Tx, tables []copyTable) error {
	var full []string
	for _, tb := range tables {
		if oneRowTables[tb.name] {
			continue
		}
		var rows bool
		if err := t.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+quote(tb.name)+")").Scan(&rows); err != nil {
			return fmt.Errorf("pgcopy: %s: %w", tb.name, err)
		}
		if rows {
			full = append(full, tb.name)
		}
	}
	if len(full) > 0 {
		return ErrTargetNotEmpty{Tables: full}
	}
	return nil
}

// resetSequence makes the identity column col of table hand out ids above
// every id copied, and above SQLite's AUTOINCREMENT counter for the table,
// which remembers ids of rows since deleted (events: a stream resumes from
// its last id, so an id must never come back).
func resetSequence(ctx context.Context, t pgx.Tx, src *Source, table, col string) error {
	used, err := src.handedOut(ctx, table)
	if err != nil {
		return err
	}
	_, err = t.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, $2),
		GREATEST((SELECT COALESCE(MAX(`+quote(col)+`), 0) FROM `+quote(table)+`), $3::bigint) + 1, false)`,
		quote(table), col, used)
	return err
}

// handedOut is the largest id SQLite's AUTOINCREMENT has handed out in
// table, 0 for a table without one.
func (src *Source) handedOut(ctx context.Context, table string) (int64, error) {
	// SQLite creates sqlite_sequence with the first AUTOINCREMENT table.
	var exists bool
	if err := src.read.QueryRowContext(ctx,
		"SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence')").Scan(&exists); err != nil || !exists {
		return 0, err
	}
	var n int64
	err := src.read.QueryRowContext(ctx, "SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = ?", table).Scan(&n)
	return n, err
}

// quote quotes a PostgreSQL name.
func quote(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// postgresOnly are the tables a SQLite installation has nothing to copy
// into: the replicas' rate limits, which start full, and how far the
// search index got, which starts again at 0.
var postgresOnly = map[string]bool{"rate_buckets": true, "search_indexed": true}

// copyTable is one table to copy: its columns as PostgreSQL has them, in
// order, and its identity columns.
type copyTable struct {
	name     string
	cols     []string
	types    []string // PostgreSQL's data_type of each column
	identity []string
}

// copyPlan lists the tables to copy, parents before the tables that refer
// to them, and checks that both databases have the same tables and
// columns.
func copyPlan(ctx context.Context, conn pgx.Tx, src *Source) ([]copyTable, error) {
	tables, err := pgTables(ctx, conn)
	if err != nil {
		return nil, err
	}
	names, err := src.tables(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, ok := tables[n]; !ok {
			return nil, fmt.Errorf("the SQLite database has a table %s that the PostgreSQL one lacks", n)
		}
	}
	for n, tb := range tables {
		if postgresOnly[n] {
			delete(tables, n)
			continue
		}
		if !slices.Contains(names, n) {
			return nil, fmt.Errorf("the PostgreSQL database has a table %s that the SQLite one lacks", n)
		}
		if err := src.checkColumns(ctx, tb); err != nil {
			return nil, err
		}
	}
	order, err := pgCopyOrder(ctx, conn, tables)
	if err != nil {
		return nil, err
	}
	out := make([]copyTable, 0, len(order))
	for _, n := range order {
		out = append(out, *tables[n])
	}
	return out, nil
}

// pgTables reads the tables to copy and their columns from PostgreSQL.
func pgTables(ctx context.Context, conn pgx.Tx) (map[string]*copyTable, error) {
	rows, err := conn.Query(ctx, `SELECT c.table_name, c.column_name, c.data_type, c.is_identity
		FROM information_schema.columns c JOIN information_schema.tables t
			ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
		ORDER BY c.table_name, c.ordinal_position`)
	if err != nil {
		return nil, fmt.Errorf("list PostgreSQL tables: %w", err)
	}
	defer rows.Close()
	tables := map[string]*copyTable{}
	for rows.Next() {
		var table, col, typ, identity string
		if err := rows.Scan(&table, &col, &typ, &identity); err != nil {
			return nil, fmt.Errorf("list PostgreSQL tables: %w", err)
		}
		if notCopied[table] {
			continue
		}
		tb := tables[table]
		if tb == nil {
			tb = &copyTable{name: table}
			tables[table] = tb
		}
		tb.cols = append(tb.cols, col)
		tb.types = append(tb.types, typ)
		if identity == "YES" {
			tb.identity = append(tb.identity, col)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list PostgreSQL tables: %w", err)
	}
	return tables, nil
}

// pgCopyOrder orders tables so that a table comes after every table its
// foreign keys name, by name where that leaves a choice.
func pgCopyOrder(ctx context.Context, conn pgx.Tx, tables map[string]*copyTable) ([]string, error) {
	rows, err := conn.Query(ctx, `SELECT child.relname, parent.relname
		FROM pg_constraint k
			JOIN pg_class child ON child.oid = k.conrelid
			JOIN pg_class parent ON parent.oid = k.confrelid
			JOIN pg_namespace n ON n.oid = child.relnamespace
		WHERE k.contype = 'f' AND n.nspname = current_schema()`)
	if err != nil {
		return nil, fmt.Errorf("list foreign keys: %w", err)
	}
	parents := map[string][]string{}
	for rows.Next() {
		var child, parent string
		if err := rows.Scan(&child, &parent); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list foreign keys: %w", err)
		}
		if child != parent && tables[child] != nil && tables[parent] != nil {
			parents[child] = append(parents[child], parent)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list foreign keys: %w", err)
	}
	var names []string
	for n := range tables {
		names = append(names, n)
	}
	slices.Sort(names)
	var order []string
	placed := map[string]bool{}
	for len(order) < len(names) {
		before := len(order)
		for _, n := range names {
			if placed[n] || slices.ContainsFunc(parents[n], func(p string) bool { return !placed[p] }) {
				continue
			}
			placed[n] = true
			order = append(order, n)
		}
		if len(order) == before {
			return nil, errors.New("the foreign keys between the tables form a cycle")
		}
	}
	return order, nil
}

// tables lists the SQLite database's own tables: not SQLite's (sqlite_*),
// not virtual tables or their shadow tables, not notCopied.
func (src *Source) tables(ctx context.Context) ([]string, error) {
	rows, err := src.read.QueryContext(ctx, "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
	if err != nil {
		return nil, fmt.Errorf("list SQLite tables: %w", err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("list SQLite tables: %w", err)
		}
		if !notCopied[n] {
			names = append(names, n)
		}
	}
	return names, rows.Err()
}

// checkColumns checks that the SQLite table has the columns PostgreSQL's
// has and no others. A column named rowid that SQLite does not declare is
// its implicit rowid, which a query reads by that name.
func (src *Source) checkColumns(ctx context.Context, tb *copyTable) error {
	rows, err := src.read.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", tb.name)
	if err != nil {
		return fmt.Errorf("columns of %s: %w", tb.name, err)
	}
	defer rows.Close()
	var have []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return fmt.Errorf("columns of %s: %w", tb.name, err)
		}
		have = append(have, n)
		if !slices.Contains(tb.cols, n) {
			return fmt.Errorf("the SQLite table %s has a column %s that the PostgreSQL one lacks", tb.name, n)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("columns of %s: %w", tb.name, err)
	}
	for _, c := range tb.cols {
		if c != "rowid" && !slices.Contains(have, c) {
			return fmt.Errorf("the PostgreSQL table %s has a column %s that the SQLite one lacks", tb.name, c)
		}
	}
	return nil
}

// copyTableRows streams the rows of one table from SQLite into PostgreSQL
// through COPY and returns how many it copied.
func copyTableRows(ctx context.Context, t pgx.Tx, src *Source, tb copyTable) (int64, error) {
	cols := make([]string, len(tb.cols))
	for i, c := range tb.cols {
		cols[i] = `"` + strings.ReplaceAll(c, `"`, `""`) + `"` // SQLite quotes names as PostgreSQL does
	}
	// In the order of the first column (the primary key or rowid, for
	// every table so far): the rows arrive as SQLite stored them.
	rows, err := src.read.QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+quote(tb.name)+" ORDER BY 1")
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	return t.CopyFrom(ctx, pgx.Identifier{tb.name}, tb.cols, &sqliteRows{rows: rows, types: tb.types})
}

// sqliteRows feeds COPY from a SQLite query, one row at a time.
type sqliteRows struct {
	rows   *sql.Rows
	types  []string
	values []any
	err    error
}

func (r *sqliteRows) Next() bool {
	if !r.rows.Next() {
		return false
	}
	vals := make([]any, len(r.types))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if r.err = r.rows.Scan(ptrs...); r.err != nil {
		return false
	}
	for i, v := range vals {
		vals[i] = pgValue(v, r.types[i])
	}
	r.values = vals
	return true
}

func (r *sqliteRows) Values() ([]any, error) { return r.values, nil }

func (r *sqliteRows) Err() error { return cmp.Or(r.err, r.rows.Err()) }

// pgValue converts a value SQLite returned to what the PostgreSQL column
// of type typ takes, where SQLite's storage class may differ from the
// column's declared type: text in a BLOB column, bytes in a TEXT one.
func pgValue(v any, typ string) any {
	switch x := v.(type) {
	case string:
		if typ == "bytea" {
			return []byte(x)
		}
	case []byte:
		if typ == "text" {
			return string(x)
		}
	case int64:
		if typ == "double precision" {
			return float64(x)
		}
	}
	return v
}
