package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/internal/testkit"
	"modernc.org/sqlite"
)

// searchFixture is a store at path (a SQLite file, or a PostgreSQL URL)
// with one user and channel.
type searchFixture struct {
	path string
	s    *Store
	user *User
	ch   *Channel
}

func newSearchFixture(t *testing.T, opts Options) *searchFixture {
	t.Helper()
	return newSearchFixtureAt(t, filepath.Join(t.TempDir(), "herald.db"), opts)
}

// newSearchFixtureAt is newSearchFixture on the database dsn names.
func newSearchFixtureAt(t *testing.T, dsn string, opts Options) *searchFixture {
	t.Helper()
	f := &searchFixture{path: dsn}
	f.s = openFoundation(t, f.path, opts)
	f.user = &User{Email: "ann@example.com", Plan: "free"}
	if err := f.s.CreateUser(context.Background(), f.user); err != nil {
		t.Fatal(err)
	}
	f.ch = &Channel{UserID: f.user.ID, Name: "alerts"}
	if err := f.s.CreateChannel(context.Background(), f.ch); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *searchFixture) send(t *testing.T, ctx context.Context, n int, word string) []*Message {
	t.Helper()
	var out []*Message
	for i := range n {
		m := &Message{ChannelID: f.ch.ID, Title: fmt.Sprintf("%s %d", word, i), Priority: "normal"}
		if err := f.s.CreateMessage(ctx, m); err != nil {
			t.Fatalf("send %s %d: %v", word, i, err)
		}
		out = append(out, m)
	}
	return out
}

func (f *searchFixture) indexAll(t *testing.T) {
	t.Helper()
	for {
		n, err := f.s.IndexForSearch(context.Background(), 1000)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

func (f *searchFixture) found(t *testing.T, word string) int {
	t.Helper()
	return len(pageAll(t, f.s, MessageQuery{UserID: f.user.ID, Search: word, Limit: 100}))
}

// expectFound checks how many messages a search for each word finds.
func (f *searchFixture) expectFound(t *testing.T, when string, want map[string]int) {
	t.Helper()
	for word, n := range want {
		if got := f.found(t, word); got != n {
			t.Errorf("%s: %d %q messages found, want %d", when, got, word, n)
		}
	}
}

func (f *searchFixture) reopen(t *testing.T, change func()) {
	t.Helper()
	if err := f.s.Close(); err != nil {
		t.Fatal(err)
	}
	change()
	f.s = openFoundation(t, f.path, Options{})
}

// removeDB removes a SQLite database file and its WAL files.
func removeDB(t *testing.T, path string) {
	t.Helper()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

// The search index is derived from the main file, which a backup holds
// without it: restored over a newer index, or with the index's file gone,
// the index starts again rather than answer for messages that are not
// there, or miss the ones that are.
func TestSearchIndexStartsAgainWhenItDoesNotMatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSearchFixture(t, Options{})
	// Readable by its owner only, like herald.db: it holds every title
	// and body's words.
	if fi, err := os.Stat(SearchFile(f.path)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the search index's file: %v, %v; want mode 0600", fi, err)
	}
	f.send(t, ctx, 20, "backup")
	f.indexAll(t)
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := f.s.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	f.send(t, ctx, 20, "later")
	f.indexAll(t)
	if got := f.found(t, "later"); got != 20 {
		t.Fatalf("before the restore: %d later messages found, want 20", got)
	}

	// The restored file's messages end where the index's do not; new
	// messages take the places of the ones the backup never had.
	f.reopen(t, func() {
		removeDB(t, f.path)
		b, err := os.ReadFile(backup)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	})
	f.send(t, ctx, 5, "fresh")
	f.indexAll(t)
	f.expectFound(t, "after a restore", map[string]int{"backup": 20, "later": 0, "fresh": 5})

	// The index's file gone.
	f.reopen(t, func() { removeDB(t, SearchFile(f.path)) })
	if got := f.found(t, "backup"); got != 0 {
		t.Fatalf("a new index finds %d messages before it is built", got)
	}
	f.indexAll(t)
	f.expectFound(t, "after the index's file went", map[string]int{"backup": 20, "fresh": 5})

	// An index that matches is kept: reopening does not start it again.
	f.reopen(t, func() {})
	if n, err := f.s.IndexForSearch(ctx, 1000); err != nil || n != 0 {
		t.Fatalf("IndexForSearch after a plain restart = %d, %v; want nothing to do", n, err)
	}
}

// Deletes reach the index through a log in the main file, which the
// indexer empties as it applies it.
func TestSearchDeleteLogIsApplied(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSearchFixture(t, Options{})
	sent := f.send(t, ctx, 30, "zebra")
	f.indexAll(t)
	for _, m := range sent[:10] {
		if err := f.s.DeleteMessage(ctx, f.user.ID, m.ID); err != nil {
			t.Fatal(err)
		}
	}
	logged := func() (n int) {
		t.Helper()
		if err := f.s.read.QueryRowContext(ctx, "SELECT count(*) FROM search_deletes").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := logged(); got != 10 {
		t.Fatalf("%d deletes logged, want 10", got)
	}
	// Deleted messages are not found, even before the index learns of it.
	if got := f.found(t, "zebra"); got != 20 {
		t.Fatalf("%d zebra messages found, want 20", got)
	}
	f.indexAll(t)
	if got := logged(); got != 0 {
		t.Fatalf("%d deletes left in the log after indexing", got)
	}
	var entries int
	if err := f.s.search.QueryRowContext(ctx, `SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '"zebra"'`).Scan(&entries); err != nil {
		t.Fatal(err)
	}
	if entries != 20 {
		t.Fatalf("the index holds %d zebra entries, want 20", entries)
	}
}

// The index has its own file and writer: while its write lock is held (as
// a long merge of its segments holds it), sends, deletes, sweeps and
// searches go on, and the indexer catches up once the lock is free.
func TestSearchIndexNeverHoldsTheWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSearchFixture(t, Options{BusyTimeout: 200 * time.Millisecond})
	old := f.send(t, ctx, 10, "old")
	f.indexAll(t)

	other, err := sql.Open("sqlite", "file:"+SearchFile(f.path))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.SetMaxOpenConns(1)
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}

	bounded, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	f.send(t, bounded, 10, "new")
	if err := f.s.DeleteMessage(bounded, f.user.ID, old[0].ID); err != nil {
		t.Fatalf("delete while the index is locked: %v", err)
	}
	if n, err := f.s.DeleteMessagesBefore(bounded, time.Now().Add(time.Hour)); err != nil || n != 19 {
		t.Fatalf("retention sweep while the index is locked = %d, %v; want 19", n, err)
	}
	if got := f.found(t, "old"); got != 0 {
		t.Fatalf("search while the index is locked: %d deleted messages found", got)
	}
	if _, err := f.s.IndexForSearch(ctx, 1000); err == nil {
		t.Fatal("IndexForSearch wrote to a locked index")
	}

	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	f.send(t, ctx, 3, "newest")
	f.indexAll(t)
	f.expectFound(t, "after the lock", map[string]int{"old": 0, "new": 0, "newest": 3})
	var entries int
	if err := f.s.search.QueryRowContext(ctx, `SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '"old" OR "new"'`).Scan(&entries); err != nil {
		t.Fatal(err)
	}
	if entries != 0 {
		t.Fatalf("the index holds %d entries of swept messages", entries)
	}
}

// On PostgreSQL the indexer's batch is a transaction of its own, beside
// the writer: while one waits (here for the row lock another replica's
// indexer holds, as a long batch holds it), sends and deletes go on, and
// the indexer finishes once the lock is free.
func TestSearchIndexerBesideTheWriterPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	f := newSearchFixtureAt(t, dsn, Options{})
	old := f.send(t, ctx, 10, "old")
	f.indexAll(t)

	other, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	busy, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Rollback()
	if _, err := busy.ExecContext(ctx, "SELECT position FROM search_indexed WHERE id = 1 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	f.send(t, ctx, 5, "new")
	indexed := make(chan error, 1)
	go func() {
		_, err := f.s.IndexForSearch(ctx, 1000)
		indexed <- err
	}()
	testkit.Eventually(t, 10*time.Second, func() error {
		var waiting int
		if err := other.QueryRowContext(ctx, "SELECT count(*) FROM pg_locks WHERE NOT granted").Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting == 0 {
			return errors.New("the indexer never waited for the other one's lock")
		}
		return nil
	})

	// A write once queued waits for its outcome: were the indexer holding
	// the writer, these would wait for the other indexer's lock.
	wrote := make(chan error, 1)
	go func() {
		for i := range 10 {
			if err := f.s.CreateMessage(ctx, &Message{ChannelID: f.ch.ID, Title: fmt.Sprintf("newer %d", i), Priority: "normal"}); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- f.s.DeleteMessage(ctx, f.user.ID, old[0].ID)
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatalf("sends and a delete while an indexer waits: %v", err)
		}
	case <-time.After(5 * time.Second):
		busy.Rollback()
		t.Fatal("sends and a delete waited for the indexer")
	}
	select {
	case err := <-indexed:
		t.Fatalf("the indexer did not wait for the other one: %v", err)
	default:
	}
	if err := busy.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-indexed; err != nil {
		t.Fatal(err)
	}
	f.indexAll(t)
	f.expectFound(t, "after the lock", map[string]int{"old": 9, "new": 5, "newer": 10})
}

// TestSQLiteCaches holds the page caches of a SQLite store's connections
// to their sizes (readerCacheKiB and the rest), the attached files' too,
// which are set per connection after the ATTACH: together they bound the
// pages the process keeps. Readers are two a core.
func TestSQLiteCaches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSearchFixture(t, Options{}).s
	for _, c := range []struct {
		db     *db
		pragma string
		want   int
	}{
		{s.write, "PRAGMA main.cache_size", -writerCacheKiB},
		{s.read, "PRAGMA main.cache_size", -readerCacheKiB},
		{s.read, "PRAGMA search.cache_size", -readerSearchCacheKiB},
		{s.search, "PRAGMA main.cache_size", -indexerCacheKiB},
		{s.search, "PRAGMA src.cache_size", -indexerSourceCacheKiB},
	} {
		var got int
		if err := c.db.QueryRowContext(ctx, c.pragma).Scan(&got); err != nil {
			t.Fatalf("%s: %v", c.pragma, err)
		}
		if got != c.want {
			t.Errorf("%s = %d, want %d", c.pragma, got, c.want)
		}
	}
	if got, want := s.read.Stats().MaxOpenConnections, max(4, 2*min(runtime.NumCPU(), runtime.GOMAXPROCS(0))); got != want {
		t.Errorf("readers: at most %d open, want %d", got, want)
	}
}

// TestSQLiteReaders: serve's extra Ps (cli/tune.go) add no reader, and a
// container's CPU limit, which GOMAXPROCS follows, bounds them. Not
// parallel: it changes GOMAXPROCS.
func TestSQLiteReaders(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(procs) })
	runtime.GOMAXPROCS(runtime.NumCPU() + 2)
	if got, want := sqliteReaders(), max(4, 2*runtime.NumCPU()); got != want {
		t.Errorf("with GOMAXPROCS above the CPUs: %d readers, want %d", got, want)
	}
	runtime.GOMAXPROCS(1)
	if got := sqliteReaders(); got != 4 {
		t.Errorf("with GOMAXPROCS 1: %d readers, want 4", got)
	}
}

// TestWriterKeepsItsPagesWhileIndexing: every connection's pages share one
// pool in this SQLite build, and a connection under its own cache size takes
// a fresh page even when the pool is full, after which every page let go,
// anyone's, is dropped at once. The writer lets go of its hottest pages
// (the roots and right edges the next insert needs) after every statement,
// so in that state it read them back from the file on every send. The
// indexer's scan of the newest messages took pages from the writer that
// way, round after round. The readers' caches, emptied by every commit,
// are the room the pool needs, and the writer's own cache is kept to what
// it uses (store.go). Measured with the caches this replaced: 7 pages read
// back a send with one reader open, none with two.
func TestWriterKeepsItsPagesWhileIndexing(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("sends 20,000 messages, through one writer: nothing for the race detector, and slow under it")
	}
	t.Parallel()
	ctx := context.Background()
	f := newSearchFixture(t, Options{})
	// One reader open, as on a quiet server.
	if err := f.s.read.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	sendMany := func(n int) {
		t.Helper()
		errs := make(chan error, 16)
		for g := range 16 {
			go func() {
				var err error
				for i := g; i < n && err == nil; i += 16 {
					err = f.s.CreateMessage(ctx, &Message{ChannelID: f.ch.ID, Priority: "normal",
						Title: fmt.Sprintf("Backup %d finished", i), Body: "42 GB in 3 minutes on the NAS, no errors"})
				}
				errs <- err
			}()
		}
		for range 16 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
	writerMisses := func() int {
		t.Helper()
		c, err := f.s.write.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var n int
		if err := c.Raw(func(dc any) error {
			var err error
			n, _, err = dc.(sqlite.DBStatus).Status(sqlite.DBStatusCacheMiss, true)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	sendMany(5000)
	f.indexAll(t)
	const rounds, perRound = 3, 5000
	misses := 0
	for range rounds {
		sendMany(perRound)
		writerMisses()
		if _, err := f.s.IndexForSearch(ctx, perRound); err != nil {
			t.Fatal(err)
		}
		sendMany(perRound)
		misses += writerMisses()
	}
	// A send adds a page to a table or an index every 20 or so: those are
	// new, not read back. Reading the hot pages back cost several a send.
	if perSend := float64(misses) / (rounds * perRound); perSend > 0.2 {
		t.Errorf("the writer read %.2f pages from the file a send after the indexer ran, want at most 0.2", perSend)
	}
}
