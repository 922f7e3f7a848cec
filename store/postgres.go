package store

import (
	"context"
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

// IsPostgresURL reports whether dsn names a PostgreSQL database rather than
// a SQLite file.
func IsPostgresURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

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
	// Workers ask often whether a job is due; a write never waits on a
	// reader's lock, so a reader that hangs has lost its connection.
	cfg.RuntimeParams["idle_in_transaction_session_timeout"] = "60000"

	write := &db{DB: stdlib.OpenDB(*cfg), pg: true}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxIdleTime(0)
	read := &db{DB: stdlib.OpenDB(*cfg), pg: true}
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
	s := newStore(write, read, opts)
	s.pg = true
	s.listen = cfg
	return s, nil
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

// notifyMarked queues a NOTIFY of every topic the batch marked, delivered
// to every replica (this one too) when the transaction commits.
func (s *Store) notifyMarked(t *tx) error {
	for topic := range s.wake.marked {
		if _, err := t.ExecContext(context.Background(), "SELECT pg_notify(?, ?)", notifyChannel, topic); err != nil {
			return fmt.Errorf("store: notify %s: %w", topic, err)
		}
	}
	return nil
}
