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
	"strings"
	"time"

	"modernc.org/sqlite"
)

// On SQLite the search index lives in a database file of its own beside the
// main one (SearchFile), with its own connection. FTS5 merges its segments
// inside the writes that add to it, from tens of milliseconds to seconds
// for large segments; in the main file each merge held the one writer, so
// a send could wait behind it. Apart, a merge holds up only the indexer.
//
// The index is derived data: it follows the messages through
// IndexForSearch, and is rebuilt from nothing when its file is missing or
// does not match the main file (a restored backup, which does not hold
// it). The main file's search_deletes logs each deleted message for the
// indexer (migration 0020); readers attach the index as the schema
// "search", so that a search joins it to the messages.

// SearchFile is where the search index of the SQLite database at path
// lives: herald.db's is herald-search.db.
func SearchFile(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + "-search.db"
}

// searchSchema creates the index's tables. search_state holds how far the
// index got: every message up to position is in it, and every logged
// delete up to applied has been applied. Deleting by rowid needs FTS5's
// contentless_delete (tombstones); their cost is the indexer's, not the
// writer's.
const searchSchema = `
CREATE TABLE IF NOT EXISTS search_state (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    position INTEGER NOT NULL,
    applied  INTEGER NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    title, body, readers, channel,
    content = '', contentless_delete = 1,
    tokenize = "unicode61 tokenchars '_'"
);
INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', ` + searchAutomerge + `);`

// searchAutomerge is how many segments of one size the index gathers
// before merging them into one (FTS5's default is 4). Measured indexing
// 100,000 messages in rounds of 5,000: 8 costs 12% less CPU a message
// (3.3 against 3.7 us); a search reads at most twice as many segments.
const searchAutomerge = "8"

// Page caches, in KiB, of the connections of a SQLite store. This build of
// SQLite keeps every connection's pages in one pool, bounded by the sum of
// the caches' sizes, and the allocator hands a 4 KiB page an 8 KiB slot:
// what the pool holds is memory the process keeps, about twice over.
//
// The pool is the sum, not each cache: a connection under its own size takes
// a fresh page even when the pool is full, and while the pool is over its
// bound every page let go, anyone's, is dropped at once. The writer lets go
// of its hottest pages (the roots and right edges the next insert needs)
// after every statement, so in that state each send read them back from
// the file. The indexer's scan of the newest messages (a round of 5,000
// reads about 230 pages of the main file) put the pool there round after
// round while the readers were at 256 KiB: 7 pages read back a send
// (TestWriterKeepsItsPagesWhileIndexing), and with the hub's and pusher's
// questions after each commit, 2 to 4.5 pread calls a send under
// bench/load.sh against 0.3 now.
//
// The room comes from the readers: a reader starts each read on a new
// snapshot, which empties its cache of the main file whenever the writer
// committed meanwhile, so under sends it holds only the few pages of the
// query at hand, and the rest of its size is room in the pool at no memory
// cost. The writer fills whatever it is given as the file grows, with pages
// it will not touch again; 1 MiB holds what a send touches many times over
// (writerCacheKiB). The index file changes once a second at most, so
// searches keep their pages longer. Measured in bench/compare.sh against
// readers at 256 KiB and the writer at SQLite's 2,000 KiB, four alternating
// rounds: CPU per send 0.95-0.99x, peak RSS 46.0-46.8 MB against 45.7-47.9.
const (
	writerCacheKiB        = 1024 // the writer's, of the main file
	readerCacheKiB        = 1024 // each reader's, of the main file
	readerSearchCacheKiB  = 256  // each reader's, of the index attached as "search"
	indexerCacheKiB       = 512  // the indexer's, of the index file
	indexerSourceCacheKiB = 128  // the indexer's, of the main file attached as "src"
)

// openSearch opens the index's file at path with one connection, creating
// it and its tables if needed, with the main file (mainPath) attached as
// the schema "src": the indexer reads the messages and the delete log
// from there and adds them to the index in one statement, without copying
// a row through Go. Its commits are synchronous(full) whatever the main
// file's setting: the indexer drops the log rows it has applied from the
// main file once the index has committed them.
func openSearch(ctx context.Context, path, mainPath string, busy time.Duration) (*db, error) {
	err := createPrivate(path)
	if err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("store: create search index file: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "synchronous(full)")
	if err == nil {
		// Only on a new file, where it takes effect (ReclaimSpace). On an
		// existing one it would wait for the server's indexer to open, as
		// the CLI does beside the server.
		q.Add("_pragma", "auto_vacuum(incremental)")
	}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "journal_size_limit(67108864)")
	// The indexer appends to the index's newest pages and merges
	// segments it has just written (indexerCacheKiB).
	q.Add("_pragma", "cache_size(-"+strconv.Itoa(indexerCacheKiB)+")")
	conn, err := sqlite.NewConnector("file:" + path + "?" + q.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: open search index: %w", err)
	}
	search := &db{DB: sql.OpenDB(attached{Connector: conn, path: mainPath, schema: "src", cacheKiB: indexerSourceCacheKiB})}
	search.SetMaxOpenConns(1)
	search.SetMaxIdleConns(1)
	search.SetConnMaxIdleTime(0)
	search.SetConnMaxLifetime(0)
	if _, err := search.ExecContext(ctx, searchSchema); err != nil {
		search.Close()
		return nil, fmt.Errorf("store: create search index: %w", err)
	}
	return search, nil
}

// attached opens each connection with another database file attached:
// the readers' with the index as the schema "search", the indexer's with
// the main file as "src".
type attached struct {
	driver.Connector
	path   string
	schema string // a constant: it is written into the statement
	// cacheKiB bounds the attached file's page cache on each connection
	// (SQLite's default is 2 MiB a file a connection).
	cacheKiB int
}

func (c attached) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, errors.New("store: the sqlite driver cannot execute on a connection")
	}
	if _, err := ex.ExecContext(ctx, "ATTACH DATABASE ? AS "+c.schema, []driver.NamedValue{{Ordinal: 1, Value: c.path}}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("store: attach %s: %w", c.schema, err)
	}
	if c.cacheKiB > 0 {
		if _, err := ex.ExecContext(ctx, fmt.Sprintf("PRAGMA %s.cache_size = -%d", c.schema, c.cacheKiB), nil); err != nil {
			conn.Close()
			return nil, fmt.Errorf("store: size the cache of %s: %w", c.schema, err)
		}
	}
	return conn, nil
}

// newSearchReaders opens the reader pool of base (a DSN) with the index at
// path attached.
func newSearchReaders(base, path string) (*sql.DB, error) {
	conn, err := sqlite.NewConnector(base)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(attached{Connector: conn, path: path, schema: "search", cacheKiB: readerSearchCacheKiB}), nil
}

// searchReaders: the index holds, as each message's readers, who may
// find it by search: the channel's owner, the entries of its approval rule
// as written (user ids or email addresses), and for an urgent message every
// entry of the channel's escalation list and the account it resolved to,
// since any of them may be reached later, when the message is long indexed.
// The index only narrows a search: a reader other than the owner keeps a
// match only when message_approvers lists them for it (searchWalk), which
// an approval's acceptance or an alert's escalation does.

// searchMark is how far the index got (search_state).
type searchMark struct {
	position int64 // every message up to this rowid is indexed
	applied  int64 // every logged delete up to this seq is applied
}

// checkSearch starts the index again from nothing when it does not match
// the main file: when it has no state yet (a new file), when it has applied
// deletes the main file never logged, or when, with no delete pending, it
// holds a message the main file does not. Both happen after a backup of the
// main file replaced it, or after the main file lost commits that the
// index had read. Search finds messages again as the indexer catches up.
//
// IndexForSearch calls it, once, before its first round: only the server
// indexes, so the CLI beside it never takes the index's lock, and no other
// indexer's round can pass between its reads.
func (s *Store) checkSearch(ctx context.Context) error {
	t, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("store: check search index: %w", err)
	}
	defer t.Rollback()
	// The index first, then the main file: the main file's snapshot is
	// then the newer one.
	mark, found, err := readSearchMark(t)
	if err != nil {
		return fmt.Errorf("store: check search index: %w", err)
	}
	var logged, last int64
	var pending bool
	if err := t.QueryRow(`SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'search_deletes'), 0),
		COALESCE((SELECT MAX(rowid) FROM messages), 0),
		EXISTS (SELECT 1 FROM search_deletes WHERE seq > ?)`, mark.applied).Scan(&logged, &last, &pending); err != nil {
		return fmt.Errorf("store: check search index: %w", err)
	}
	if found && mark.applied <= logged && (pending || mark.position <= last) {
		return nil
	}
	// Deletes up to logged concern messages that are gone from this
	// snapshot, which the empty index does not hold.
	reset, err := s.search.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: reset search index: %w", err)
	}
	defer reset.Rollback()
	if _, err := reset.ExecContext(ctx, "INSERT INTO messages_fts (messages_fts) VALUES ('delete-all')"); err != nil {
		return fmt.Errorf("store: reset search index: %w", err)
	}
	if _, err := reset.ExecContext(ctx, `INSERT INTO search_state (id, position, applied) VALUES (1, 0, ?)
		ON CONFLICT (id) DO UPDATE SET position = 0, applied = excluded.applied`, logged); err != nil {
		return fmt.Errorf("store: reset search index: %w", err)
	}
	if err := reset.Commit(); err != nil {
		return fmt.Errorf("store: reset search index: %w", err)
	}
	return nil
}

// readSearchMark reads search_state through a reader transaction.
func readSearchMark(t *tx) (searchMark, bool, error) {
	var m searchMark
	err := t.QueryRow("SELECT position, applied FROM search.search_state WHERE id = 1").Scan(&m.position, &m.applied)
	if errors.Is(err, sql.ErrNoRows) {
		return m, false, nil
	}
	return m, err == nil, err
}

// IndexForSearch brings the index up to date by up to n steps, each a
// logged delete applied or a message added, and returns how many it took.
// The server calls it shortly after sends and deletes, so search lags a
// commit by a moment, not the send path by a tokenizer.
func (s *Store) IndexForSearch(ctx context.Context, n int) (int, error) {
	return s.dialect.indexForSearch(ctx, s, n)
}

// indexForSearchSQLite is IndexForSearch on SQLite, whose index is a file
// of its own.
func (s *Store) indexForSearchSQLite(ctx context.Context, n int) (int, error) {
	s.searchMu.Lock()
	defer s.searchMu.Unlock()
	if !s.searchChecked {
		if err := s.checkSearch(ctx); err != nil {
			return 0, err
		}
		s.searchChecked = true
	}
	steps, prune, err := s.indexRound(ctx, n)
	if err != nil {
		return 0, fmt.Errorf("store: index for search: %w", err)
	}
	if prune > 0 {
		err := s.updateStatement(ctx, func(tx *writeTx) error {
			_, err := tx.Exec("DELETE FROM search_deletes WHERE seq <= ?", prune)
			return err
		})
		if err != nil {
			return 0, fmt.Errorf("store: index for search: drop applied deletes: %w", err)
		}
	}
	return steps, nil
}

// indexRound is one round of IndexForSearch, in one transaction of the
// index's connection, reading the main file (src) from one snapshot: the
// logged deletes after the mark, replayed in order (a delete the index
// reached leaves it; when the newest messages went, the mark steps back to
// the largest left, since SQLite hands their rowids out again), then, once
// no delete is pending, the messages after the mark, added by one INSERT
// ... SELECT. It returns the steps taken and, when log rows it applied are
// left in the main file, the last of them (else 0).
func (s *Store) indexRound(ctx context.Context, n int) (steps int, prune int64, err error) {
	t, err := s.search.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, err
	}
	defer t.Rollback()
	var mark searchMark
	if err := t.QueryRow("SELECT position, applied FROM main.search_state WHERE id = 1").Scan(&mark.position, &mark.applied); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			err = errors.New("the index has no state")
		}
		return 0, 0, err
	}
	start := mark
	var oldest sql.NullInt64
	if err := t.QueryRow("SELECT MIN(seq) FROM src.search_deletes").Scan(&oldest); err != nil {
		return 0, 0, err
	}
	deletes, logged, err := readDeletes(t, &mark, n)
	if err != nil {
		return 0, 0, err
	}
	if len(deletes) > 0 {
		del, err := t.Prepare("DELETE FROM main.messages_fts WHERE rowid = ?")
		if err != nil {
			return 0, 0, err
		}
		defer del.Close()
		for _, p := range deletes {
			if _, err := del.Exec(p); err != nil {
				return 0, 0, err
			}
		}
	}
	steps = logged
	if logged < n { // no delete pending: the messages after the mark
		var count int
		var last sql.NullInt64
		if err := t.QueryRow(`SELECT COUNT(*), MAX(rowid) FROM
			(SELECT rowid FROM src.messages WHERE rowid > ? ORDER BY rowid LIMIT ?)`,
			mark.position, n-logged).Scan(&count, &last); err != nil {
			return 0, 0, err
		}
		if count > 0 {
			// A message whose channel is gone is not searched: the join
			// leaves it out, and the mark passes it. An urgent message's
			// readers include the channel's escalation list (searchReaders).
			if _, err := t.Exec(`INSERT INTO main.messages_fts (rowid, title, body, readers, channel)
				SELECT m.rowid, m.title, m.body,
					c.user_id || COALESCE((SELECT ' ' || group_concat(j.value, ' ') FROM json_each(m.approval, '$.approvers') j), '')
						|| CASE WHEN m.priority = 'urgent' THEN COALESCE((SELECT ' ' || group_concat(e.entry || COALESCE(' ' || e.user_id, ''), ' ')
							FROM src.channel_escalations e WHERE e.channel_id = m.channel_id), '') ELSE '' END,
					m.channel_id
				FROM src.messages m JOIN src.channels c ON c.id = m.channel_id
				WHERE m.rowid > ? AND m.rowid <= ?`, mark.position, last.Int64); err != nil {
				return 0, 0, err
			}
			mark.position = last.Int64
			steps += count
		}
	}
	if mark != start {
		if _, err := t.Exec("UPDATE main.search_state SET position = ?, applied = ? WHERE id = 1", mark.position, mark.applied); err != nil {
			return 0, 0, err
		}
	}
	if err := t.Commit(); err != nil {
		return 0, 0, err
	}
	if oldest.Valid && oldest.Int64 <= mark.applied {
		prune = mark.applied
	}
	return steps, prune, nil
}

// readDeletes reads up to n logged deletes after mark.applied, moving mark
// past them, and returns the positions the index holds, to take out, and
// how many it read.
func readDeletes(t *tx, mark *searchMark, n int) ([]int64, int, error) {
	rows, err := t.Query("SELECT seq, position, last FROM src.search_deletes WHERE seq > ? ORDER BY seq LIMIT ?", mark.applied, n)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var deletes []int64
	logged := 0
	for rows.Next() {
		var seq, position, last int64
		if err := rows.Scan(&seq, &position, &last); err != nil {
			return nil, 0, err
		}
		logged++
		if position <= mark.position {
			deletes = append(deletes, position)
		}
		mark.position = min(mark.position, last)
		mark.applied = seq
	}
	return deletes, logged, rows.Err()
}

// indexForSearchPG adds up to n messages not yet in PostgreSQL's index,
// oldest first, in one transaction. A deleted message leaves that index
// in its own transaction (a foreign key), so there is no log to apply.
//
// The transaction is the indexer's own, beside the writer rather than one
// of its writes: adding to the index's GIN indexes takes tens of
// milliseconds a batch, which every replica's writes waited for while the
// writer held its lock. Without that lock:
//   - the row lock on search_indexed keeps one indexer at a time, across
//     replicas;
//   - messages commit in the order of their rowid (the writer's lock), so
//     what a snapshot sees up to its largest rowid is all there will ever
//     be up to it, and the mark never passes a message still to come;
//   - a message deleted while it is being indexed fails the batch (the
//     foreign key), which the next one, seeing it gone, does without it.
//
// The index is derived data: its transaction does not wait for the WAL
// flush, and one lost in a crash is done again.
func (s *Store) indexForSearchPG(ctx context.Context, n int) (int, error) {
	// A look first: most wake-ups find nothing new.
	var pending bool
	if err := s.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM messages
		WHERE rowid > (SELECT position FROM search_indexed WHERE id = 1))`).Scan(&pending); err != nil || !pending {
		if err != nil {
			return 0, fmt.Errorf("store: index for search: %w", err)
		}
		return 0, nil
	}
	added, err := s.indexBatchPG(ctx, n)
	if err != nil {
		return 0, fmt.Errorf("store: index for search: %w", err)
	}
	return int(added), nil
}

func (s *Store) indexBatchPG(ctx context.Context, n int) (int64, error) {
	tx, err := s.read.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
		return 0, err
	}
	var from int64
	if err := tx.QueryRowContext(ctx, "SELECT position FROM search_indexed WHERE id = 1 FOR UPDATE").Scan(&from); err != nil {
		return 0, err
	}
	var to sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(rowid) FROM (SELECT rowid FROM messages WHERE rowid > ? ORDER BY rowid LIMIT ?) AS next`,
		from, n).Scan(&to); err != nil || !to.Valid {
		return 0, err // nothing new: another replica's indexer was first
	}
	// herald_words (the PostgreSQL schema) splits as searchWordsPG does.
	// An urgent message's readers include the channel's escalation list
	// (searchReaders).
	res, err := tx.ExecContext(ctx, `INSERT INTO messages_fts (rowid, words, readers, channel)
		SELECT m.rowid, herald_words(m.title || ' ' || m.body),
			ARRAY[c.user_id] || ARRAY(SELECT j.value FROM `+s.dialect.approvers("m")+` WHERE j.value IS NOT NULL)
				|| ARRAY(SELECT v.r FROM channel_escalations e CROSS JOIN LATERAL (VALUES (e.entry), (e.user_id)) AS v(r)
					WHERE m.priority = 'urgent' AND e.channel_id = m.channel_id AND v.r IS NOT NULL),
			m.channel_id
		FROM messages m JOIN channels c ON c.id = m.channel_id
		WHERE m.rowid > ? AND m.rowid <= ?
		ON CONFLICT (rowid) DO NOTHING`, from, to.Int64)
	if err != nil {
		return 0, err
	}
	added, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE search_indexed SET position = ? WHERE id = 1", to.Int64); err != nil {
		return 0, err
	}
	return added, tx.Commit()
}
