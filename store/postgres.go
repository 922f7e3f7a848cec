package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib" // pgx through database/sql, so both databases share the store's code
)

// On PostgreSQL several Herald processes (replicas) share one database.
// Each keeps its own group-commit writer, and every writer transaction
// first takes one advisory lock, held until it commits: writes from all
// replicas commit one transaction at a time, as they do on SQLite. So
// everything the store relies on from one writer holds across replicas:
// a read-modify-write inside a write sees every earlier commit, a poll is
// read once, an approval resolves once, and ids handed out by a sequence
// commit in order (the live stream's "every event up to N is committed").
// Group commit keeps that cheap: one lock, one commit, one WAL flush for a
// whole batch.
//
// A write marks the topics it concerns (wake.go); on PostgreSQL the writer
// also NOTIFYs them, delivered at commit, and every replica LISTENs, so a
// worker or a stream on any replica wakes when any replica commits.

// Advisory lock keys (pg_advisory_xact_lock / pg_advisory_lock), chosen
// once; any constant would do, as long as nothing else in the database
// uses it.
const (
	writerLockKey  = 0x4865_7261_6c64_0001 // "Herald" 1: the writer's transactions
	migrateLockKey = 0x4865_7261_6c64_0002 // "Herald" 2: applying migrations
)

// notifyChannel is the LISTEN/NOTIFY channel a committed write's topics go on.
const notifyChannel = "herald_wake"

// openPostgres opens the database at url (see Open).
func openPostgres(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("store: database url: %w", err)
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	// A 200 means committed: "full" waits for the WAL flush, as PostgreSQL
	// does by default, whatever the server's own setting. "normal" lets a
	// commit return before its flush: a crash of PostgreSQL itself may then
	// lose the last moments, a crash of Herald loses nothing.
	cfg.RuntimeParams["synchronous_commit"] = map[string]string{"full": "on", "normal": "off"}[opts.Synchronous]
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "herald"
	}
	// A replica that stops mid-transaction (frozen, or cut off from the
	// database without its connection closing) would hold the writer lock
	// and every replica's writes with it: PostgreSQL ends such a session
	// after a minute idle in its transaction, which frees the lock. (A
	// killed replica's connection closes, and frees it at once.)
	cfg.RuntimeParams["idle_in_transaction_session_timeout"] = "60000"
	// Every statement Herald runs reads or writes a few rows through an
	// index. JIT compiling pays only for long scans; on a plan whose
	// estimate was large it cost each execution of the send path's trigger
	// 160-230 ms of compiling for four rows.
	cfg.RuntimeParams["jit"] = "off"

	write := &db{DB: stdlib.OpenDB(*cfg), numbered: true}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxIdleTime(0)
	read := &db{DB: stdlib.OpenDB(*cfg), numbered: true}
	n := max(4, runtime.GOMAXPROCS(0)*2)
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	read.SetConnMaxIdleTime(5 * time.Minute)

	pingCtx, cancel := context.WithTimeout(ctx, opts.BusyTimeout)
	defer cancel()
	if err := write.PingContext(pingCtx); err != nil {
		write.Close()
		read.Close()
		return nil, fmt.Errorf("store: connect to PostgreSQL: %w", err)
	}
	// Rate limits need no durability: a take lost in a crash is a send
	// the limit forgets. Their own connection commits without waiting for
	// the WAL flush, beside the writer rather than in its batches; one is
	// all takeLoop, which runs one statement at a time, uses.
	lcfg := cfg.Copy()
	lcfg.RuntimeParams["synchronous_commit"] = "off"
	limits := &db{DB: stdlib.OpenDB(*lcfg), numbered: true}
	limits.SetMaxOpenConns(1)
	limits.SetMaxIdleConns(1)
	limits.SetConnMaxIdleTime(5 * time.Minute)

	s := newStore(postgresDialect{}, write, read, opts)
	s.listen = cfg
	s.limits = limits
	return s, nil
}

// ExclusivePostgresTx runs fn in one transaction on a PostgreSQL connection
// of its own, which holds the lock of every replica's writer from its start
// until it commits: no replica writes meanwhile. It commits if fn returns
// nil. The transaction may stay open for as long as fn takes: the store's
// bound on idle transactions does not apply to it. It is for loading a
// whole database (herald migrate-data); on SQLite it fails.
func (s *Store) ExclusivePostgresTx(ctx context.Context, fn func(t pgx.Tx) error) error {
	if s.listen == nil {
		return errors.New("store: an exclusive transaction needs a PostgreSQL database")
	}
	cfg := s.listen.Copy()
	cfg.RuntimeParams["idle_in_transaction_session_timeout"] = "0"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("store: exclusive transaction: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	t, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("store: exclusive transaction: begin: %w", err)
	}
	defer t.Rollback(context.WithoutCancel(ctx))
	if _, err := t.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(writerLockKey)); err != nil {
		return fmt.Errorf("store: exclusive transaction: writer lock: %w", err)
	}
	if err := fn(t); err != nil {
		return err
	}
	if err := t.Commit(ctx); err != nil {
		return fmt.Errorf("store: exclusive transaction: commit: %w", err)
	}
	return nil
}

// listenLoop LISTENs for other replicas' commits on a connection of its
// own and signals their topics here, until the store closes. After a lost
// connection it signals every topic once it is back, since it may have
// missed some.
func (s *Store) listenLoop() {
	defer close(s.listening)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-s.stop
		cancel()
	}()
	delay := 100 * time.Millisecond
	first := true
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, !first)
		first = false
		if ctx.Err() != nil {
			return
		}
		slog.Warn("store: listening for other replicas' commits failed; retrying", "err", err, "in", delay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(delay*2, 5*time.Second)
	}
}

func (s *Store) listenOnce(ctx context.Context, again bool) error {
	conn, err := pgx.ConnectConfig(ctx, s.listen)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if again {
		for _, t := range []string{TopicEvents, TopicDeliveries, TopicPush, TopicApprovals} {
			s.wake.signal(t)
		}
	}
	s.listenReady()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return fmt.Errorf("wait: %w", err)
		}
		s.wake.signal(n.Payload)
	}
}

// listenReady marks the first LISTEN as done: Open returns after it, so a
// commit made anywhere once Open has returned wakes this replica.
func (s *Store) listenReady() {
	s.listenOnceReady.Do(func() { close(s.listenStarted) })
}

// notifySQL is the statement that queues a NOTIFY of topics, delivered
// to every replica (this one too) when the transaction commits, to go at
// the start of a simple-protocol query: the topics are the store's own
// names, quoted here.
func notifySQL(topics []string) string {
	quoted := make([]string, len(topics))
	for i, t := range topics {
		quoted[i] = "'" + strings.ReplaceAll(t, "'", "''") + "'"
	}
	return "SELECT pg_notify('" + notifyChannel + "', topic) FROM unnest(ARRAY[" + strings.Join(quoted, ", ") + "]) AS topic; "
}

// execOpening runs q after t.opening (what opens the write's savepoint),
// in one round trip: both go as one simple-protocol query, its arguments
// quoted by pgx. Should q fail, the savepoint exists and the write is
// rolled back to it; should the savepoint itself fail, the transaction is
// aborted and the rollback to it fails the batch.
func (t *writeTx) execOpening(q string, args []any) (sql.Result, error) {
	opening := t.opening
	t.opening = ""
	if q == "" {
		return nil, fmt.Errorf("store: statement without its SQL after %q", opening)
	}
	q, args = bind(true, q, args)
	return t.tx.Tx.ExecContext(context.Background(), opening+"; "+q, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
}

// open opens the savepoint a single-statement write awaits (see
// execOpening) on its own, before a statement that returns rows.
func (t *writeTx) open() error {
	if t.opening == "" {
		return nil
	}
	opening := t.opening
	t.opening = ""
	_, err := t.tx.Tx.ExecContext(context.Background(), opening, pgx.QueryExecModeSimpleProtocol)
	return err
}
