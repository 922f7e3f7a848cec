package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TotalCap is how far a list counts its matches: a larger total is
// reported as TotalCap, with TotalExact false. Counting stops there so that
// a list costs what its page costs, whatever the table holds.
const TotalCap = 10000

// MessageQuery selects a page of messages, newest first. With ChannelID set
// it lists that channel (the caller has checked access); otherwise every
// channel UserID owns.
type MessageQuery struct {
	UserID    string
	ChannelID string
	// Approver, with ChannelID, keeps only the messages whose own approval
	// rule (the one in force when each was sent) names this user.
	Approver string
	// Search keeps the messages whose title or body has every word (a word
	// ending in * of 3 characters or more: a word's start); "" keeps all.
	Search string
	// Before is a cursor (MessagePage.Next): only older messages follow.
	Before int64
	Limit  int
	Offset int
}

// MessagePage is one page of a list.
type MessagePage struct {
	Messages []Message
	// Total counts every match (not only this page's), up to TotalCap.
	Total      int
	TotalExact bool
	// Next is the cursor of the next page, 0 after the last one.
	Next int64
}

// ErrBadSearch is a search without a word.
var ErrBadSearch = errors.New("store: a search needs at least one word")

// ListMessages returns a page of messages. Each kind of list walks an index
// backwards from the cursor: a channel's messages by messages_channel, an
// approver's by message_approvers, a search by the full-text index, and all
// of a user's channels by merging each channel's walk.
func (s *Store) ListMessages(ctx context.Context, q MessageQuery) (*MessagePage, error) {
	before := q.Before
	if before <= 0 {
		before = 1<<63 - 1
	}
	want := q.Limit + 1 // one more tells whether a next page exists
	var positions []int64
	var total int
	var err error
	switch {
	case q.Search != "":
		positions, total, err = s.searchPositions(ctx, q, before, want)
	case q.ChannelID != "" && q.Approver != "":
		positions, err = s.positions(ctx, `SELECT position FROM message_approvers
			WHERE user_id = ? AND channel_id = ? AND position < ? ORDER BY position DESC LIMIT ? OFFSET ?`,
			q.Approver, q.ChannelID, before, want, q.Offset)
		if err == nil {
			total, err = s.countUpTo(ctx, `SELECT 1 FROM message_approvers WHERE user_id = ? AND channel_id = ?`, q.Approver, q.ChannelID)
		}
	case q.ChannelID != "":
		positions, total, err = s.channelPositions(ctx, q.ChannelID, before, want, q.Offset)
	default:
		positions, total, err = s.userPositions(ctx, q.UserID, before, want, q.Offset)
	}
	if err != nil {
		return nil, fmt.Errorf("store: list messages: %w", err)
	}
	page := &MessagePage{Total: min(total, TotalCap), TotalExact: total <= TotalCap}
	if len(positions) > q.Limit {
		positions = positions[:q.Limit]
		if q.Limit > 0 {
			page.Next = positions[q.Limit-1]
		}
	}
	if page.Messages, err = s.messagesAt(ctx, positions); err != nil {
		return nil, fmt.Errorf("store: list messages: %w", err)
	}
	return page, nil
}

// channelPositions walks one channel's messages backwards from before.
func (s *Store) channelPositions(ctx context.Context, channelID string, before int64, n, offset int) ([]int64, int, error) {
	pos, err := s.positions(ctx, `SELECT rowid FROM messages WHERE channel_id = ? AND rowid < ?
		ORDER BY rowid DESC LIMIT ? OFFSET ?`, channelID, before, n, offset)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.countUpTo(ctx, "SELECT 1 FROM messages WHERE channel_id = ?", channelID)
	return pos, total, err
}

// userPositions merges the walks of every channel the user owns: each
// channel gives its newest offset+n, and the merge keeps the page.
func (s *Store) userPositions(ctx context.Context, userID string, before int64, n, offset int) ([]int64, int, error) {
	rows, err := s.read.QueryContext(ctx, "SELECT id FROM channels WHERE user_id = ?", userID)
	if err != nil {
		return nil, 0, err
	}
	var channels []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, 0, err
		}
		channels = append(channels, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	var all []int64
	total := 0
	for _, id := range channels {
		pos, count, err := s.channelPositions(ctx, id, before, offset+n, 0)
		if err != nil {
			return nil, 0, err
		}
		all = append(all, pos...)
		if total <= TotalCap {
			total += count
		}
	}
	slices.SortFunc(all, func(a, b int64) int { return cmp.Compare(b, a) }) // newest first
	if offset >= len(all) {
		return nil, total, nil
	}
	all = all[offset:]
	return all[:min(n, len(all))], total, nil
}

// searchPositions walks the full-text index backwards from before.
func (s *Store) searchPositions(ctx context.Context, q MessageQuery, before int64, n int) ([]int64, int, error) {
	if s.pg {
		return s.searchPositionsPG(ctx, q, before, n)
	}
	match, err := searchMatch(q)
	if err != nil {
		return nil, 0, err
	}
	pos, err := s.positions(ctx, `SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? AND rowid < ?
		ORDER BY rowid DESC LIMIT ? OFFSET ?`, match, before, n, q.Offset)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.countUpTo(ctx, "SELECT 1 FROM messages_fts WHERE messages_fts MATCH ?", match)
	return pos, total, err
}

// searchMatch turns a search into an FTS5 query: every word in the title
// or the body of a message the user may read (and of the channel, when one
// is given). A word ending in * of at least 3 characters before it matches
// as a word's start. Words are quoted, so that no other character of theirs
// is query syntax.
func searchMatch(q MessageQuery) (string, error) {
	var words []string
	for _, w := range strings.Fields(q.Search) {
		prefix := false
		if stem := strings.TrimRight(w, "*"); stem != w && utf8.RuneCountInString(stem) >= 3 {
			w, prefix = stem, true
		}
		word := `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
		if prefix {
			word += "*"
		}
		words = append(words, word)
	}
	if len(words) == 0 {
		return "", ErrBadSearch
	}
	reader := q.UserID
	if q.Approver != "" {
		reader = q.Approver
	}
	match := `readers:"` + reader + `" AND {title body}: (` + strings.Join(words, " AND ") + ")"
	if q.ChannelID != "" {
		match += ` AND channel:"` + q.ChannelID + `"`
	}
	return match, nil
}

// positions runs a query that returns message rowids.
func (s *Store) positions(ctx context.Context, query string, args ...any) ([]int64, error) {
	rows, err := s.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var p int64
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// countUpTo counts the rows of query, stopping past TotalCap.
func (s *Store) countUpTo(ctx context.Context, query string, args ...any) (int, error) {
	var n int
	err := s.read.QueryRowContext(ctx, "SELECT count(*) FROM ("+query+" LIMIT "+strconv.Itoa(TotalCap+1)+") AS matches", args...).Scan(&n)
	return n, err
}

// messagesAt reads the messages at positions, in that order.
func (s *Store) messagesAt(ctx context.Context, positions []int64) ([]Message, error) {
	out := make([]Message, 0, len(positions))
	if len(positions) == 0 {
		return out, nil
	}
	args := make([]any, len(positions))
	for i, p := range positions {
		args[i] = p
	}
	rows, err := s.read.QueryContext(ctx, "SELECT "+messageCols+messageFrom+"WHERE m.rowid IN (?"+
		strings.Repeat(", ?", len(positions)-1)+") ORDER BY m.rowid DESC", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *m)
	}
	return out, rows.Err()
}

// ApproverOf reports whether userID approves any message of a channel.
func (s *Store) ApproverOf(ctx context.Context, userID, channelID string) (bool, error) {
	var ok bool
	err := s.read.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM message_approvers WHERE user_id = ? AND channel_id = ?)",
		userID, channelID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("store: approver of %s: %w", channelID, err)
	}
	return ok, nil
}

// IndexForSearch adds up to n messages not yet in the search index, oldest
// first, in one write, and returns how many it added. The server calls it
// shortly after sends, so search lags a commit by a moment, not the send
// path by a tokenizer.
func (s *Store) IndexForSearch(ctx context.Context, n int) (int, error) {
	// A look on the reader first: most wake-ups find nothing new, and
	// they need not queue a write for that.
	var pending bool
	if err := s.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM messages
		WHERE rowid > (SELECT position FROM search_indexed WHERE id = 1))`).Scan(&pending); err != nil || !pending {
		if err != nil {
			return 0, fmt.Errorf("store: index for search: %w", err)
		}
		return 0, nil
	}
	var added int64
	err := s.update(ctx, func(tx *writeTx) error {
		var from int64
		if err := tx.QueryRow("SELECT position FROM search_indexed WHERE id = 1").Scan(&from); err != nil {
			return err
		}
		var to sql.NullInt64
		if err := tx.QueryRow(`SELECT MAX(rowid) FROM (SELECT rowid FROM messages WHERE rowid > ? ORDER BY rowid LIMIT ?) AS next`,
			from, n).Scan(&to); err != nil || !to.Valid {
			return err
		}
		res, err := tx.Exec(s.indexMessages(), from, to.Int64)
		if err != nil {
			return err
		}
		if added, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = tx.Exec("UPDATE search_indexed SET position = ? WHERE id = 1", to.Int64)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: index for search: %w", err)
	}
	return int(added), nil
}

// indexMessages adds the messages with ? < rowid <= ? to the search index.
func (s *Store) indexMessages() string {
	if s.pg {
		// herald_words (the PostgreSQL schema) splits as searchWordsPG does.
		return `INSERT INTO messages_fts (rowid, words, readers, channel)
			SELECT m.rowid, herald_words(m.title || ' ' || m.body),
				ARRAY[c.user_id] || ARRAY(SELECT j.value FROM ` + s.approvers("m") + ` WHERE j.value IS NOT NULL),
				m.channel_id
			FROM messages m JOIN channels c ON c.id = m.channel_id
			WHERE m.rowid > ? AND m.rowid <= ?
			ON CONFLICT (rowid) DO NOTHING`
	}
	// A message leaves the index with the values it was indexed with: these
	// columns must be computed exactly as the messages_unindex trigger
	// computes them (migration 0014).
	return `INSERT INTO messages_fts (rowid, title, body, readers, channel)
		SELECT m.rowid, m.title, m.body,
			c.user_id || COALESCE((SELECT ' ' || group_concat(j.value, ' ') FROM json_each(m.approval, '$.approvers') j), ''),
			m.channel_id
		FROM messages m JOIN channels c ON c.id = m.channel_id
		WHERE m.rowid > ? AND m.rowid <= ?`
}

// searchPositionsPG is searchPositions on PostgreSQL, where the index is a
// table of each message's words (a tsvector), readers and channel.
func (s *Store) searchPositionsPG(ctx context.Context, q MessageQuery, before int64, n int) ([]int64, int, error) {
	query, err := searchQueryPG(q.Search)
	if err != nil || query == "" {
		return nil, 0, err
	}
	reader := q.UserID
	if q.Approver != "" {
		reader = q.Approver
	}
	where := "readers @> ARRAY[CAST(? AS TEXT)] AND words @@ CAST(? AS tsquery)"
	args := []any{reader, query}
	if q.ChannelID != "" {
		where += " AND channel = ?"
		args = append(args, q.ChannelID)
	}
	pos, err := s.positions(ctx, "SELECT rowid FROM messages_fts WHERE "+where+" AND rowid < ? ORDER BY rowid DESC LIMIT ? OFFSET ?",
		append(args, before, n, q.Offset)...)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.countUpTo(ctx, "SELECT 1 FROM messages_fts WHERE "+where, args...)
	return pos, total, err
}

// searchQueryPG turns a search into a tsquery with the rules of searchMatch:
// every word, a word ending in * of 3 characters or more as a word's start.
// A search word is split into the index's words (letters, digits and _,
// lower-cased, as herald_words splits a message), each of which must be
// there.
func searchQueryPG(search string) (string, error) {
	fields := strings.Fields(search)
	if len(fields) == 0 {
		return "", ErrBadSearch
	}
	var terms []string
	for _, w := range fields {
		prefix := false
		if stem := strings.TrimRight(w, "*"); stem != w && utf8.RuneCountInString(stem) >= 3 {
			w, prefix = stem, true
		}
		words := searchWordsPG(w)
		for i, word := range words {
			term := "'" + word + "'"
			if prefix && i == len(words)-1 {
				term += ":*"
			}
			terms = append(terms, term)
		}
	}
	return strings.Join(terms, " & "), nil // "": only signs, which no message's words hold
}

// searchWordsPG splits s into lower-cased runs of letters, digits and _.
func searchWordsPG(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	})
}
