// Package store owns Herald's database, SQLite (one file) or PostgreSQL
// (shared by any number of replicas): the schema, its migrations and every
// SQL statement. No other package writes SQL. The statements are shared;
// what the two databases do differently is the store's dialect
// (dialect.go).
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"modernc.org/sqlite" // pure-Go SQLite driver, registered as "sqlite"

	"github.com/heraldhq/herald/internal/cores"
)

// ErrNotFound is returned when a row does not exist or belongs to another user.
var ErrNotFound = errors.New("store: not found")

// ErrPostgres is returned by what only a SQLite database does.
type ErrPostgres struct {
	What    string // what was asked
	Instead string // what to do on PostgreSQL
}

func (e ErrPostgres) Error() string {
	return "store: " + e.What + " works on a SQLite database only: " + e.Instead
}

// Options configure Open.
type Options struct {
	// Synchronous is "full" (a commit survives power loss) or "normal"
	// (a commit survives a process crash). Default "full".
	Synchronous string
	// Now is the clock; tests inject one. Default time.Now.
	Now func() time.Time
	// BusyTimeout is how long a write waits for another process's write
	// (the CLI beside the server). Default 10 s.
	BusyTimeout time.Duration
}

// Store is the database: SQLite (one file) or PostgreSQL (shared by any
// number of replicas). It holds one writer connection, fed by a single
// group-commit goroutine, and a pool of reader connections.
type Store struct {
	write *db // exactly one connection: SQLite allows one writer at a time
	read  *db // WAL lets readers run beside the writer

	// SQLite only: the search index's own file and connection (search.go),
	// written by one IndexForSearch at a time, which checks it first.
	search        *db
	searchMu      sync.Mutex
	searchChecked bool

	now     func() time.Time
	dialect dialect // what the database does its own way (dialect.go)

	wake      *wakeups
	rollbacks *rollbackWatch // the writer connection's rollback hook
	st        stmts          // prepared hot-path statements
	tokens    tokenCache     // ChannelByToken answers

	batches   chan *writeReq
	stop      chan struct{}
	closeOnce sync.Once
	stopped   chan struct{}

	// PostgreSQL only: the connection that LISTENs for other replicas'
	// commits (postgres.go).
	listen          *pgx.ConnConfig
	listening       chan struct{} // closed when listenLoop has returned
	listenStarted   chan struct{} // closed once the first LISTEN is in place
	listenOnceReady sync.Once
	limits          *db // the shared rate limits' connections (ratebuckets.go)
	takes           chan *takeReq
	taking          chan struct{} // closed when takeLoop has returned
}

// Open opens the database dsn names, creating it if needed, applies pending
// migrations and starts the writer. A dsn starting with postgres:// or
// postgresql:// is a PostgreSQL database (its URL); anything else is the
// path of a SQLite file.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	if opts.Synchronous == "" {
		opts.Synchronous = "full"
	}
	if opts.Synchronous != "full" && opts.Synchronous != "normal" {
		return nil, fmt.Errorf("store: synchronous must be full or normal, not %q", opts.Synchronous)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 10 * time.Second
	}
	var s *Store
	var err error
	if IsPostgresURL(dsn) {
		s, err = openPostgres(ctx, dsn, opts)
	} else {
		s, err = openSQLite(ctx, dsn, opts)
	}
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		s.closeDBs()
		return nil, err
	}
	if err := s.prepare(ctx); err != nil {
		s.closeStmts()
		s.closeDBs()
		return nil, err
	}
	go s.writer()
	if err := s.dialect.start(ctx, s); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func newStore(d dialect, write, read *db, opts Options) *Store {
	return &Store{
		dialect: d, write: write, read: read, now: opts.Now, wake: newWakeups(), rollbacks: &rollbackWatch{},
		batches:       make(chan *writeReq, 1024),
		stop:          make(chan struct{}),
		stopped:       make(chan struct{}),
		listening:     make(chan struct{}),
		listenStarted: make(chan struct{}),
		takes:         make(chan *takeReq, maxTakes),
		taking:        make(chan struct{}),
	}
}

// closeDBs closes the store's connection pools.
func (s *Store) closeDBs() error {
	err := errors.Join(s.write.Close(), s.read.Close())
	if s.search != nil {
		err = errors.Join(err, s.search.Close())
	}
	if s.limits != nil {
		err = errors.Join(err, s.limits.Close())
	}
	return err
}

// openSQLite opens the SQLite file at path (see Open), and its search
// index's file beside it.
func openSQLite(ctx context.Context, path string, opts Options) (*Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("store: create data dir: %w", err)
		}
	}
	// A new database is created readable by its owner only (SQLite gives
	// the -wal and -shm files the database file's mode). An existing file
	// keeps the mode it has.
	if err := createPrivate(path); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("store: create database file: %w", err)
	}
	// Pragmas live in the DSN so that every pooled connection gets them,
	// including ones database/sql opens later behind our back. Readers get
	// only those that need no lock: a pragma that may write (journal_mode,
	// auto_vacuum) made each new reader wait for the writer's transaction,
	// up to the busy timeout, and then fail.
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous("+opts.Synchronous+")")
	base := "file:" + path + "?" + q.Encode()
	w := url.Values{}
	w.Add("_pragma", "cache_size(-"+strconv.Itoa(writerCacheKiB)+")") // see readerCacheKiB
	w.Add("_pragma", "journal_mode(WAL)")
	// The WAL grows while a checkpoint cannot catch up; once one has, the
	// file is cut back to this size instead of keeping its peak.
	w.Add("_pragma", "journal_size_limit(67108864)")
	// A new database frees the pages of deleted rows in steps
	// (ReclaimSpace); an older one takes this mode at its next VACUUM
	// (herald vacuum).
	w.Add("_pragma", "auto_vacuum(incremental)")

	// The writer begins IMMEDIATE transactions so that a second process
	// (the CLI beside a running server) waits on busy_timeout instead of
	// failing with SQLITE_BUSY half-way through a transaction. It opens
	// first (the migrations run on it), so the database is in WAL mode
	// before any reader opens.
	rollbacks := &rollbackWatch{}
	conn, err := sqlite.NewConnector(base + "&" + w.Encode() + "&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("store: open writer: %w", err)
	}
	write := &db{DB: sql.OpenDB(hookedConnector{Connector: conn, onRollback: rollbacks.hook})}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxIdleTime(0)
	write.SetConnMaxLifetime(0)

	search, err := openSearch(ctx, SearchFile(path), path, opts.BusyTimeout)
	if err != nil {
		write.Close()
		return nil, err
	}
	// Readers keep a few pages each (readerCacheKiB): what a send reads (a
	// token, the next push, the newest events) is a few pages, and the
	// operating system caches the file below them.
	r, err := newSearchReaders(base+"&_pragma=cache_size(-"+strconv.Itoa(readerCacheKiB)+")", SearchFile(path))
	if err != nil {
		write.Close()
		search.Close()
		return nil, fmt.Errorf("store: open readers: %w", err)
	}
	read := &db{DB: r}
	n := sqliteReaders()
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)

	s := newStore(sqliteDialect{}, write, read, opts)
	s.search = search
	s.rollbacks = rollbacks
	close(s.listening)
	close(s.taking)
	return s, nil
}

// sqliteReaders is how many reader connections a SQLite store keeps: two
// a core, each with its own copy of the schema and its own cache.
func sqliteReaders() int {
	return max(4, 2*cores.Count())
}

// hookedConnector opens the writer's connection with a rollback hook, so
// that the writer learns when SQLite rolls a transaction back by itself.
type hookedConnector struct {
	driver.Connector
	onRollback func()
}

func (c hookedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	h, ok := conn.(interface {
		RegisterRollbackHook(sqlite.RollbackHookFn)
	})
	if !ok {
		conn.Close()
		return nil, errors.New("store: the sqlite driver has no rollback hook")
	}
	h.RegisterRollbackHook(c.onRollback)
	return conn, nil
}

// Close stops the writer after it has committed what it holds, then closes
// the connections. Writes submitted after Close fail.
func (s *Store) Close() error {
	first := false
	s.closeOnce.Do(func() { first = true; close(s.stop) })
	if !first {
		return nil
	}
	<-s.stopped
	<-s.listening
	<-s.taking
	s.closeStmts()
	return s.closeDBs()
}

// ReclaimSpace gives the pages that deleted rows left free back to the
// file system, a megabyte per write and resting between writes as sweeps
// do, so that a large sweep shrinks the file without holding up sends: the
// main file's, then the search index's. It does nothing to a file not in
// incremental auto-vacuum mode (see Vacuum).
//
// On PostgreSQL it does nothing: autovacuum does this there.
func (s *Store) ReclaimSpace(ctx context.Context) (pages int64, err error) {
	if !s.dialect.file() {
		return 0, nil
	}
	pages, err = reclaim(ctx, s.read, "main", func(n int64) (time.Duration, error) {
		var took time.Duration
		err := s.update(ctx, func(tx *writeTx) error {
			start := time.Now()
			_, err := tx.Exec(fmt.Sprintf("PRAGMA incremental_vacuum(%d)", n))
			took = time.Since(start)
			return err
		})
		return took, err
	})
	if err != nil {
		return pages, fmt.Errorf("store: reclaim space: %w", err)
	}
	n, err := reclaim(ctx, s.read, "search", func(n int64) (time.Duration, error) {
		s.searchMu.Lock()
		defer s.searchMu.Unlock()
		start := time.Now()
		_, err := s.search.ExecContext(ctx, fmt.Sprintf("PRAGMA incremental_vacuum(%d)", n))
		return time.Since(start), err
	})
	if err != nil {
		return pages + n, fmt.Errorf("store: reclaim space of the search index: %w", err)
	}
	return pages + n, nil
}

// reclaim frees the pages that a reader finds free in schema (main or
// search), up to a step's worth at a time through free, resting sweepRest
// times as long as each step took.
func reclaim(ctx context.Context, read *db, schema string, free func(pages int64) (time.Duration, error)) (pages int64, err error) {
	const step = 256 // pages per write: 1 MiB at SQLite's default page size
	rest := time.NewTimer(0)
	defer rest.Stop()
	for {
		var left, mode int64
		if err := read.QueryRowContext(ctx, "PRAGMA "+schema+".freelist_count").Scan(&left); err != nil {
			return pages, err
		}
		if err := read.QueryRowContext(ctx, "PRAGMA "+schema+".auto_vacuum").Scan(&mode); err != nil {
			return pages, err
		}
		if left == 0 || mode != 2 { // 2: incremental
			return pages, nil
		}
		n := min(left, step)
		took, err := free(n)
		if err != nil {
			return pages, err
		}
		pages += n
		rest.Reset(took * sweepRest)
		select {
		case <-ctx.Done():
			return pages, ctx.Err()
		case <-rest.C:
		}
	}
}

// Vacuum rebuilds the database file, smallest, and puts an older database
// into incremental auto-vacuum mode. It holds the database for as long as
// it runs (seconds per gigabyte), so the server should be stopped. In WAL
// mode the rebuilt pages go to the write-ahead log first: a checkpoint
// then writes them into the file and empties the log, so that the file
// is its new size when Vacuum returns, and the log takes no space.
func (s *Store) Vacuum(ctx context.Context) error {
	if !s.dialect.file() {
		return ErrPostgres{What: "vacuum", Instead: "PostgreSQL's autovacuum keeps the tables compact; VACUUM FULL rebuilds one"}
	}
	if _, err := s.write.ExecContext(ctx, "VACUUM"); err != nil {
		return fmt.Errorf("store: vacuum: %w", err)
	}
	if _, err := s.write.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return fmt.Errorf("store: vacuum: checkpoint: %w", err)
	}
	return nil
}

// Ping checks that the database answers a query.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.read.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

// createPrivate creates an empty file that only its owner can read: the
// database and its backups hold webhook tokens and secrets. It fails with
// os.ErrExist if path exists.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// ms converts a time to the unix milliseconds the schema stores.
func ms(t time.Time) int64 { return t.UnixMilli() }

// fromMS converts stored unix milliseconds back to UTC time.
func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// nullTime converts a nullable stored timestamp.
func nullTime(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMS(v.Int64)
	return &t
}

// nullMS converts an optional time for storing.
func nullMS(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ms(*t)
}
