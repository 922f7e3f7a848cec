package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// openFoundation opens a store at path and closes it at the end of the test.
func openFoundation(t *testing.T, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// migrationRange is the first and last version of s's migrations and how
// many files there are.
func migrationRange(t *testing.T, s *Store) (first, last, n int) {
	t.Helper()
	list, err := loadMigrations(s.dialect.migrations())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 {
		t.Fatal("no migration files embedded")
	}
	return list[0].version, list[len(list)-1].version, len(list)
}

func TestMigrateFreshDatabase(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		if !IsPostgresURL(dsn) {
			dsn = filepath.Join(filepath.Dir(dsn), "sub", "dir", "herald.db") // Open creates the directories
		}
		clk := testkit.NewClockAt(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
		s := openFoundation(t, dsn, Options{Now: clk.Now})

		first, last, files := migrationRange(t, s)
		if files != last-first+1 {
			t.Fatalf("migration files are numbered %d..%d, but there are %d: numbers must follow each other", first, last, files)
		}
		v, err := s.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v != last {
			t.Errorf("SchemaVersion = %d, want %d (the newest migration file)", v, last)
		}
		var rows, minV, maxV int
		if err := s.read.QueryRowContext(ctx, "SELECT count(*), min(version), max(version) FROM schema_migrations").Scan(&rows, &minV, &maxV); err != nil {
			t.Fatal(err)
		}
		if rows != files || minV != first || maxV != last {
			t.Errorf("schema_migrations has %d rows, versions %d..%d; want %d rows %d..%d", rows, minV, maxV, files, first, last)
		}
		tables := "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
		if onPostgres(s) {
			tables = "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?"
		}
		for _, table := range []string{"users", "sessions", "spent_refresh_tokens", "api_keys", "channels", "folders", "pins", "devices"} {
			var n int
			if err := s.read.QueryRowContext(ctx, tables, table).Scan(&n); err != nil || n != 1 {
				t.Errorf("table %s missing after migration (%v)", table, err)
			}
		}
		// The store works.
		u := &User{Email: "a@example.com", Plan: "free"}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		if got, err := s.UserByEmail(ctx, "A@EXAMPLE.COM"); err != nil || got.ID != u.ID {
			t.Fatalf("UserByEmail = %v, %v", got, err)
		}
	})
}

func TestReopenDoesNotReapply(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		path := dsn
		first := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

		s, err := Open(ctx, path, Options{Now: func() time.Time { return first }})
		if err != nil {
			t.Fatal(err)
		}
		u := &User{Email: "keep@example.com", Plan: "pro"}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}

		for i := range 2 {
			later := first.Add(time.Duration(i+1) * 24 * time.Hour)
			s, err := Open(ctx, path, Options{Now: func() time.Time { return later }})
			if err != nil {
				t.Fatalf("reopen %d: %v", i, err)
			}
			rows, err := s.read.QueryContext(ctx, "SELECT version, applied_at FROM schema_migrations ORDER BY version")
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rows.Next() {
				var v int
				var at int64
				if err := rows.Scan(&v, &at); err != nil {
					t.Fatal(err)
				}
				n++
				if at != first.UnixMilli() {
					t.Errorf("reopen %d: migration %d applied_at = %s, want the first open %s", i, v, fromMS(at), first)
				}
			}
			rows.Close()
			if _, _, want := migrationRange(t, s); n != want {
				t.Errorf("reopen %d: %d migration rows, want %d", i, n, want)
			}
			got, err := s.UserByID(ctx, u.ID)
			if err != nil || got.Plan != "pro" {
				t.Errorf("reopen %d: user = %v, %v", i, got, err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// pragmas reads the settings that the DSN must apply to a connection.
func pragmas(t *testing.T, c *sql.Conn) (journal string, fk, sync, busy int) {
	t.Helper()
	ctx := context.Background()
	for q, dst := range map[string]any{
		"PRAGMA journal_mode": &journal, "PRAGMA foreign_keys": &fk,
		"PRAGMA synchronous": &sync, "PRAGMA busy_timeout": &busy,
	} {
		if err := c.QueryRowContext(ctx, q).Scan(dst); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return
}

func TestPragmasOnEveryConnection(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		synchronous string
		want        int
	}{{"", 2}, {"full", 2}, {"normal", 1}} {
		t.Run("synchronous="+c.synchronous, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := openFoundation(t, filepath.Join(t.TempDir(), "herald.db"), Options{Synchronous: c.synchronous})

			check := func(who string, conn *sql.Conn) {
				t.Helper()
				journal, fk, sync, busy := pragmas(t, conn)
				if journal != "wal" || fk != 1 || sync != c.want || busy < 1000 {
					t.Errorf("%s: journal_mode=%s foreign_keys=%d synchronous=%d busy_timeout=%d; want wal, 1, %d, >= 1000",
						who, journal, fk, sync, busy, c.want)
				}
			}
			w, err := s.write.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			check("writer", w)
			w.Close()

			// Hold several readers at once, so the pool must open new
			// connections: each of them must have the settings too.
			var conns []*sql.Conn
			for i := range 4 {
				conn, err := s.read.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				conns = append(conns, conn)
				check(fmt.Sprintf("reader %d", i), conn)
			}
			for _, conn := range conns {
				conn.Close()
			}
			if n := s.write.Stats().OpenConnections; n != 1 {
				t.Errorf("writer has %d open connections, want 1", n)
			}
		})
	}
}

func TestGroupCommitConcurrentCreates(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openFoundation(t, dsn, Options{})

		const n = 200
		users := make([]*User, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				users[i] = &User{Email: fmt.Sprintf("u%03d@example.com", i), Name: fmt.Sprint(i), Plan: "free"}
				errs[i] = s.CreateUser(ctx, users[i])
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("CreateUser %d: %v", i, err)
			}
		}
		all, err := s.ListUsers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != n {
			t.Fatalf("%d users stored, want %d", len(all), n)
		}
		byID := map[string]User{}
		for _, u := range all {
			byID[u.ID] = u
		}
		for i, u := range users {
			if got, ok := byID[u.ID]; !ok || got.Email != u.Email || got.Name != fmt.Sprint(i) {
				t.Errorf("user %d (%s) stored as %+v", i, u.ID, got)
			}
		}
	})
}

// holdWriter blocks the writer goroutine inside a transaction until the
// returned release is called, so that writes submitted meanwhile queue up
// and are committed together as one batch.
func holdWriter(t *testing.T, s *Store) (release func()) {
	t.Helper()
	started, stop := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.update(context.Background(), func(*writeTx) error {
			close(started)
			<-stop
			return nil
		})
	}()
	<-started
	return func() {
		close(stop)
		if err := <-done; err != nil {
			t.Errorf("holding write: %v", err)
		}
	}
}

// waitQueued waits until n writes are queued for the writer.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, func() error {
		if q := len(s.batches); q < n {
			return fmt.Errorf("only %d of %d writes queued", q, n)
		}
		return nil
	})
}

func TestGroupCommitIsolatesFailures(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openFoundation(t, dsn, Options{})
		if err := s.CreateUser(ctx, &User{Email: "taken@example.com", Plan: "free"}); err != nil {
			t.Fatal(err)
		}

		release := holdWriter(t, s)
		var wg sync.WaitGroup
		queued := 0
		start := func(f func()) {
			queued++
			wg.Add(1)
			go func() { defer wg.Done(); f() }()
		}

		const good = 50
		goodErrs := make([]error, good)
		goodUsers := make([]*User, good)
		for i := range good {
			goodUsers[i] = &User{Email: fmt.Sprintf("good%02d@example.com", i), Plan: "free"}
			start(func() { goodErrs[i] = s.CreateUser(ctx, goodUsers[i]) })
		}
		var dupErr error
		start(func() { dupErr = s.CreateUser(ctx, &User{Email: "TAKEN@example.com", Plan: "free"}) })
		twinErrs := make([]error, 2)
		for i := range 2 {
			start(func() { twinErrs[i] = s.CreateUser(ctx, &User{Email: "twin@example.com", Plan: "free"}) })
		}
		// A write that inserts and then fails must leave nothing behind.
		errBoom := errors.New("boom")
		var failErr error
		var txs sync.Map
		start(func() {
			failErr = s.update(ctx, func(tx *writeTx) error {
				txs.Store("fail", tx)
				if _, err := tx.Exec(`INSERT INTO users (id, email, plan, created_at) VALUES ('usr_partial', 'partial@example.com', 'free', 0)`); err != nil {
					return err
				}
				return errBoom
			})
		})
		var okErr error
		start(func() {
			okErr = s.update(ctx, func(tx *writeTx) error {
				txs.Store("ok", tx)
				_, err := tx.Exec(`INSERT INTO users (id, email, plan, created_at) VALUES ('usr_raw', 'raw@example.com', 'free', 0)`)
				return err
			})
		})
		// A caller that gives up while queued gets its error and no write.
		cctx, cancel := context.WithCancel(ctx)
		var cancelledErr error
		start(func() { cancelledErr = s.CreateUser(cctx, &User{Email: "gaveup@example.com", Plan: "free"}) })

		waitQueued(t, s, queued)
		cancel()
		release()
		wg.Wait()

		for i, err := range goodErrs {
			if err != nil {
				t.Errorf("good write %d failed beside a failing one: %v", i, err)
			}
		}
		if !errors.Is(dupErr, ErrConflict) {
			t.Errorf("duplicate email: %v, want ErrConflict", dupErr)
		}
		if (twinErrs[0] == nil) == (twinErrs[1] == nil) || !errors.Is(errors.Join(twinErrs...), ErrConflict) {
			t.Errorf("two creations of one email: %v; want exactly one ErrConflict", twinErrs)
		}
		if !errors.Is(failErr, errBoom) || okErr != nil {
			t.Errorf("raw writes: failing %v, ok %v", failErr, okErr)
		}
		if !errors.Is(cancelledErr, context.Canceled) {
			t.Errorf("cancelled write: %v, want context.Canceled", cancelledErr)
		}
		a, _ := txs.Load("fail")
		b, _ := txs.Load("ok")
		if a == nil || a != b {
			t.Errorf("the writes did not share one transaction; the test did not exercise a batch")
		}

		for _, u := range goodUsers {
			if _, err := s.UserByID(ctx, u.ID); err != nil {
				t.Errorf("good user %s: %v", u.Email, err)
			}
		}
		for email, want := range map[string]bool{"raw@example.com": true, "partial@example.com": false, "gaveup@example.com": false, "twin@example.com": true} {
			_, err := s.UserByEmail(ctx, email)
			if got := err == nil; got != want {
				t.Errorf("user %s exists = %v, want %v (%v)", email, got, want, err)
			}
		}
		all, err := s.ListUsers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := 1 + good + 1 + 1; len(all) != want { // taken, good, twin, raw
			t.Errorf("%d users, want %d", len(all), want)
		}
	})
}

// backupUsers opens a backup file on its own and counts its users.
func backupUsers(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("backup %s: integrity_check = %q, %v", path, check, err)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM users").Scan(&n); err != nil {
		t.Fatalf("backup %s: %v", path, err)
	}
	return n
}

func TestBackupWhileWriting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	s := openFoundation(t, filepath.Join(dir, "herald.db"), Options{})
	out := t.TempDir()
	dst := filepath.Join(out, "backup.db")
	if err := os.WriteFile(dst, []byte("not a database"), 0o600); err != nil {
		t.Fatal(err)
	}

	var committed atomic.Int64
	stop, twenty := make(chan struct{}), make(chan struct{})
	writerDone := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				writerDone <- nil
				return
			default:
			}
			if err := s.CreateUser(ctx, &User{Email: fmt.Sprintf("w%d@example.com", i), Plan: "free"}); err != nil {
				writerDone <- err
				return
			}
			if committed.Add(1) == 20 {
				close(twenty)
			}
		}
	}()
	// The backups start once 20 users are in; a writer that fails first
	// ends the test instead of leaving it waiting.
	select {
	case <-twenty:
	case err := <-writerDone:
		t.Fatalf("writer failed before 20 users were in: %v", err)
	}

	prev := 0
	for round := range 3 {
		before := int(committed.Load())
		if err := s.Backup(ctx, dst); err != nil {
			t.Fatalf("backup %d: %v", round, err)
		}
		after := int(committed.Load())
		if info, err := os.Stat(dst); err != nil {
			t.Fatal(err)
		} else if mode := info.Mode().Perm(); mode&0o077 != 0 {
			t.Errorf("backup %d has mode %v, want no access for group and others", round, mode)
		}
		n := backupUsers(t, dst)
		if n < before || n > after+1 || n < prev {
			t.Errorf("backup %d holds %d users; %d were committed before it started, %d after it ended, %d in the previous backup",
				round, n, before, after, prev)
		}
		prev = n
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	if err := <-writerDone; err != nil {
		t.Fatalf("writer beside the backups: %v", err)
	}
	if prev == 0 {
		t.Fatal("the backups held no users")
	}

	// Only the backup is left in its directory: no temporary files.
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "backup.db" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("backup directory holds %v, want only backup.db", names)
	}

	// The backup is a complete Herald database: it opens as a store.
	b := openFoundation(t, dst, Options{})
	_, last, _ := migrationRange(t, b)
	if v, err := b.SchemaVersion(ctx); err != nil || v != last {
		t.Errorf("backup schema version %d, %v; want %d", v, err, last)
	}
	if _, err := b.UserByEmail(ctx, "w0@example.com"); err != nil {
		t.Errorf("backup lacks the first user: %v", err)
	}
}

func TestRotateSessionReuse(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		clk := testkit.NewClock()
		s := openFoundation(t, dsn, Options{Now: clk.Now})
		u := &User{Email: "s@example.com", Plan: "free"}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		tokens := func(name string) SessionTokens {
			return SessionTokens{
				AccessHash: HashToken("access-" + name), RefreshHash: HashToken("refresh-" + name),
				AccessExpiresAt: clk.Now().Add(time.Hour), RefreshExpiresAt: clk.Now().Add(24 * time.Hour),
			}
		}

		sess, err := s.CreateSession(ctx, u.ID, tokens("a"))
		if err != nil {
			t.Fatal(err)
		}
		other, err := s.CreateSession(ctx, u.ID, tokens("other"))
		if err != nil {
			t.Fatal(err)
		}
		rot, err := s.RotateSession(ctx, HashToken("refresh-a"), tokens("b"))
		if err != nil {
			t.Fatalf("first rotation: %v", err)
		}
		if rot.ID != sess.ID || rot.UserID != u.ID {
			t.Errorf("rotation gave session %+v, want %s of %s", rot, sess.ID, u.ID)
		}
		if _, _, err := s.SessionByAccessHash(ctx, HashToken("access-a")); !errors.Is(err, ErrNotFound) {
			t.Errorf("old access token after rotation: %v, want ErrNotFound", err)
		}
		if got, _, err := s.SessionByAccessHash(ctx, HashToken("access-b")); err != nil || got.ID != sess.ID {
			t.Fatalf("new access token: %v, %v", got, err)
		}

		// Reuse of the spent token revokes the session; the user's other session stays.
		if _, err := s.RotateSession(ctx, HashToken("refresh-a"), tokens("c")); !errors.Is(err, ErrRefreshReused) {
			t.Fatalf("reused refresh token: %v, want ErrRefreshReused", err)
		}
		if _, _, err := s.SessionByAccessHash(ctx, HashToken("access-b")); !errors.Is(err, ErrNotFound) {
			t.Errorf("access token of a revoked session: %v, want ErrNotFound", err)
		}
		if _, _, err := s.SessionByAccessHash(ctx, HashToken("access-c")); !errors.Is(err, ErrNotFound) {
			t.Errorf("tokens offered with the reused refresh token were stored: %v", err)
		}
		if _, err := s.RotateSession(ctx, HashToken("refresh-b"), tokens("d")); !errors.Is(err, ErrNotFound) {
			t.Errorf("current refresh token of a revoked session: %v, want ErrNotFound", err)
		}
		if got, _, err := s.SessionByAccessHash(ctx, HashToken("access-other")); err != nil || got.ID != other.ID {
			t.Errorf("other session after reuse: %v, %v", got, err)
		}

		// Expiry: the access token at its expiry time, the refresh token at its.
		clk.Advance(time.Hour)
		if _, _, err := s.SessionByAccessHash(ctx, HashToken("access-other")); !errors.Is(err, ErrNotFound) {
			t.Errorf("expired access token: %v, want ErrNotFound", err)
		}
		clk.Advance(23 * time.Hour)
		if _, err := s.RotateSession(ctx, HashToken("refresh-other"), tokens("e")); !errors.Is(err, ErrNotFound) {
			t.Errorf("expired refresh token: %v, want ErrNotFound", err)
		}
		if _, err := s.RotateSession(ctx, HashToken("never-issued"), tokens("f")); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown refresh token: %v, want ErrNotFound", err)
		}
	})
}

func TestCreateAPIKeyLimitConcurrent(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openFoundation(t, dsn, Options{})
		u := &User{Email: "k@example.com", Plan: "free"}
		other := &User{Email: "k2@example.com", Plan: "free"}
		for _, x := range []*User{u, other} {
			if err := s.CreateUser(ctx, x); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.CreateAPIKey(ctx, &APIKey{UserID: other.ID, Name: "o", Prefix: "pk_live_oooo"}, HashToken("other"), 10); err != nil {
			t.Fatal(err)
		}

		const n, limit = 30, 10
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				k := &APIKey{UserID: u.ID, Name: fmt.Sprint(i), Prefix: "pk_live_xxxx"}
				errs[i] = s.CreateAPIKey(ctx, k, HashToken(fmt.Sprint("key", i)), limit)
			}()
		}
		wg.Wait()
		ok := 0
		for i, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, ErrLimit):
				t.Errorf("key %d: %v", i, err)
			}
		}
		keys, err := s.ListAPIKeys(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ok != limit || len(keys) != limit {
			t.Fatalf("%d creations succeeded, %d keys active; want %d", ok, len(keys), limit)
		}

		// A revoked key frees its slot and stops authenticating.
		if err := s.RevokeAPIKey(ctx, u.ID, keys[0].ID); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeAPIKey(ctx, other.ID, keys[1].ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("revoking another user's key: %v, want ErrNotFound", err)
		}
		if err := s.CreateAPIKey(ctx, &APIKey{UserID: u.ID, Name: "again", Prefix: "pk_live_yyyy"}, HashToken("again"), limit); err != nil {
			t.Errorf("creation after a revoke: %v", err)
		}
		if err := s.CreateAPIKey(ctx, &APIKey{UserID: u.ID, Name: "over", Prefix: "pk_live_zzzz"}, HashToken("over"), limit); !errors.Is(err, ErrLimit) {
			t.Errorf("creation over the limit: %v, want ErrLimit", err)
		}
		if k, owner, err := s.APIKeyByHash(ctx, HashToken("again")); err != nil || owner.ID != u.ID || k.Name != "again" {
			t.Errorf("APIKeyByHash = %v, %v, %v", k, owner, err)
		}
	})
}

// TestTokenCacheSeesChanges checks that cached token lookups never outlive
// a change: in-process writes apply at once, another process's (a second
// Store on the same file, like the CLI) within the cache lifetime, and a
// channel deleted behind the cache refuses the insert as not found.
func TestTokenCacheSeesChanges(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		path := dsn
		st, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		u := &User{Email: "cache@example.com", Plan: "free"}
		if err := st.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		ch := &Channel{UserID: u.ID, Name: "c"}
		if err := st.CreateChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}
		if _, plan, err := st.ChannelByToken(ctx, ch.WebhookToken); err != nil || plan != "free" {
			t.Fatalf("lookup: plan %q, %v", plan, err)
		}
		// In-process: at once.
		if err := st.SetUserPlan(ctx, u.ID, "pro"); err != nil {
			t.Fatal(err)
		}
		if _, plan, _ := st.ChannelByToken(ctx, ch.WebhookToken); plan != "pro" {
			t.Fatalf("plan after SetUserPlan = %q, want pro at once", plan)
		}
		muted := time.Now().Add(time.Hour).UTC()
		if _, err := st.UpdateChannel(ctx, u.ID, ch.ID, ChannelPatch{MutedUntil: Optional[time.Time]{Set: true, Value: &muted}}); err != nil {
			t.Fatal(err)
		}
		if c, _, _ := st.ChannelByToken(ctx, ch.WebhookToken); c.MutedUntil == nil {
			t.Fatal("mute not seen at once")
		}
		regen, err := st.RegenerateToken(ctx, u.ID, ch.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.ChannelByToken(ctx, ch.WebhookToken); !errors.Is(err, ErrNotFound) {
			t.Fatalf("old token after regenerate: %v, want ErrNotFound at once", err)
		}
		// Another process: within the lifetime.
		other, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if err := other.SetUserPlan(ctx, u.ID, "free"); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, tokenTTL+time.Second, func() error {
			if _, plan, _ := st.ChannelByToken(ctx, regen.WebhookToken); plan != "free" {
				return fmt.Errorf("another process's plan change not seen within the cache lifetime: plan %q", plan)
			}
			return nil
		})
		// Deleted by another process while cached: the insert says not found.
		if _, _, err := st.ChannelByToken(ctx, regen.WebhookToken); err != nil {
			t.Fatal(err)
		}
		if err := other.DeleteChannel(ctx, u.ID, ch.ID); err != nil {
			t.Fatal(err)
		}
		err = st.CreateMessage(ctx, &Message{ChannelID: ch.ID, Title: "x", Priority: "normal"})
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("insert into a deleted channel: %v, want ErrNotFound", err)
		}
	})
}

// A new database and its WAL files are readable by their owner only: they
// hold webhook tokens and secrets.
func TestNewDatabaseIsPrivate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "herald.db")
	s := openFoundation(t, path, Options{})
	if err := s.CreateUser(context.Background(), &User{Email: "p@example.com", Plan: "free"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"herald.db", "herald.db-wal", "herald.db-shm"} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if mode := info.Mode().Perm(); mode&0o077 != 0 {
			t.Errorf("%s has mode %v, want no access for group and others", name, mode)
		}
	}
}

// pairFixture is a store with an owner, an approver and one channel of the
// owner's.
type pairFixture struct {
	s               *Store
	owner, approver *User
	channel         *Channel
	consented       bool // the channel's rule names both, and both accepted
}

func newPairFixture(t *testing.T) *pairFixture {
	t.Helper()
	ctx := context.Background()
	s := openFoundation(t, filepath.Join(t.TempDir(), "herald.db"), Options{})
	f := &pairFixture{s: s}
	for i, u := range []**User{&f.owner, &f.approver} {
		*u = &User{Email: fmt.Sprintf("mut%d@example.com", i), Name: fmt.Sprintf("mut%d", i), Plan: "free"}
		if err := s.CreateUser(ctx, *u); err != nil {
			t.Fatal(err)
		}
	}
	f.channel = &Channel{UserID: f.owner.ID, Name: "deploys"}
	if err := s.CreateChannel(ctx, f.channel); err != nil {
		t.Fatal(err)
	}
	return f
}

// approvalMessage stores a message both users must approve within an hour,
// on the channel whose rule both accepted.
func (f *pairFixture) approvalMessage(t *testing.T, required int) *Message {
	t.Helper()
	if !f.consented {
		acceptApprovers(t, f.s, f.channel, f.owner, f.approver)
		f.consented = true
	}
	m := &Message{ChannelID: f.channel.ID, Title: "Deploy?", Priority: "normal",
		Approval: &ApprovalRule{RequiredCount: required, Approvers: []string{f.owner.ID, f.approver.ID}, WindowSeconds: 3600}}
	if err := f.s.CreateMessage(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return m
}

// lastEventID is the id of userID's newest event, 0 when none.
func lastEventID(t *testing.T, s *Store, userID string) int64 {
	t.Helper()
	events, err := s.EventsAfter(context.Background(), userID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 {
		return 0
	}
	return events[len(events)-1].ID
}
