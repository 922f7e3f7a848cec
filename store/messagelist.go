package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
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
	// Approver keeps only the messages whose own approval rule (the one in
	// force when each was sent) names this user: in ChannelID, or without
	// it in every channel, UserID's or anyone's.
	Approver string
	// Search keeps the messages whose title or body has every word (a word
	// ending in * of 3 characters or more: a word's start); "" keeps all.
	Search string
	// ReaderEmail is the searching user's lower-cased email address, which
	// a rule may name them by (the search index holds rules as written).
	// It only widens what the index offers: an approver's match is kept
	// only when message_approvers lists it for them.
	ReaderEmail string
	// State keeps the messages in one of ListStates; "" keeps all.
	State string
	// Expired is when an answer submitted at or before it reads as
	// expired: the State filter follows the status a message shows.
	Expired time.Time
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
// backwards from the cursor: a channel's messages by messages_channel or, in
// the states an answer leaves, messages_channel_answered (one
// walk per state the filter keeps, merged), an approver's by
// message_approvers, a search by the full-text index, and several channels
// by merging each channel's walks.
func (s *Store) ListMessages(ctx context.Context, q MessageQuery) (*MessagePage, error) {
	before := q.Before
	if before <= 0 {
		before = 1<<63 - 1
	}
	conds, err := stateConds(q.State, q.Expired)
	if err != nil {
		return nil, fmt.Errorf("store: list messages: %w", err)
	}
	var walks []walk
	switch {
	case q.Search != "":
		walks, err = s.dialect.searchWalks(s, q, conds)
	case q.Approver != "":
		channels := []string{q.ChannelID}
		if q.ChannelID == "" {
			channels, err = s.approvedChannels(ctx, q.Approver)
		}
		for _, id := range channels {
			walks = append(walks, approverWalk(q.Approver, id, conds))
		}
	case q.ChannelID != "":
		walks = channelWalks(q.ChannelID, conds)
	default:
		var channels []string
		channels, err = s.ownedChannels(ctx, q.UserID)
		for _, id := range channels {
			walks = append(walks, channelWalks(id, conds)...)
		}
	}
	var positions []int64
	var total int
	if err == nil {
		// One more than the page tells whether a next page exists.
		positions, total, err = s.merge(ctx, walks, before, q.Limit+1, q.Offset)
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

// ownedChannels lists the ids of the channels userID owns.
func (s *Store) ownedChannels(ctx context.Context, userID string) ([]string, error) {
	rows, err := s.read.QueryContext(ctx, "SELECT id FROM channels WHERE user_id = ?", userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var channels []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		channels = append(channels, id)
	}
	return channels, rows.Err()
}

// searchWalks is the walk of a search: backwards through the full-text
// index, testing each match against the filter and against who may read
// it: the index's readers are each channel's owner and the entries of the
// message's rule as written, whether or not they accepted it, so that an
// approver's match is kept only when message_approvers lists it for them.
// This is SQLite's (dialect.searchWalks).
func (s *Store) searchWalksSQLite(q MessageQuery, conds []stateCond) ([]walk, error) {
	match, err := searchMatch(q)
	if err != nil {
		return nil, err
	}
	// SQLite's index follows the messages a moment behind (search.go):
	// until it has applied a delete, it may hold a message whose rowid a
	// newer message, anyone's, has taken again. Each match is therefore
	// checked against the message it joins: in the channel asked for, or
	// one the user owns or approves (an approver's list checks that in
	// searchWalk).
	where, args := " WHERE f.messages_fts MATCH ?", []any{match}
	switch {
	case q.ChannelID != "":
		where += " AND m.channel_id = ?"
		args = append(args, q.ChannelID)
	case q.Approver == "":
		where += readableBy
		args = append(args, q.UserID, q.UserID)
	}
	c := anyOf(conds)
	walks := searchWalk("search.messages_fts", where, args, q, c)
	if c.sql == "" && q.Approver == "" && q.ChannelID != "" {
		// In the owner's channel, without a filter, the index alone counts
		// the matches, up to TotalCap, as cheaply as it finds them; only
		// the page's messages are checked. Such a total may include, for a
		// moment, a message deleted since the indexer last ran. Elsewhere
		// the index's readers name approvers who never accepted, whose
		// matches the count must not include.
		walks[0].count = "SELECT 1 FROM search.messages_fts WHERE messages_fts MATCH ?"
		walks[0].countArgs = []any{match}
	}
	return walks, nil
}

// readableBy keeps, in a search of every channel, the messages the user
// (given twice) owns or lists as an approver.
const readableBy = ` AND (EXISTS (SELECT 1 FROM channels c WHERE c.id = m.channel_id AND c.user_id = ?)
	OR EXISTS (SELECT 1 FROM message_approvers a WHERE a.message_id = m.id AND a.user_id = ?))`

// searchWalk walks the entries (f) of the index table that match (where,
// args) joined to their messages (m), testing each against the filter c
// and, for an approver's list, against message_approvers: the index's
// readers are the rule as written, message_approvers who accepted it.
func searchWalk(table, where string, args []any, q MessageQuery, c stateCond) []walk {
	where = " FROM " + table + " f JOIN messages m ON " + listPosition + " = f.rowid" + where + c.and()
	args = append(args, c.args...)
	if q.Approver != "" {
		where += " AND EXISTS (SELECT 1 FROM message_approvers a WHERE a.message_id = m.id AND a.user_id = ?)"
		args = append(args, q.Approver)
	}
	return []walk{{
		list:  "SELECT f.rowid" + where + " AND f.rowid < ? ORDER BY f.rowid DESC LIMIT ? OFFSET ?",
		count: "SELECT 1" + where,
		args:  args,
	}}
}

// searchTerm is a word of a search; prefix: it ended in * and matches as a
// word's start.
type searchTerm struct {
	word   string
	prefix bool
}

// searchTerms splits a search into its words. A word ending in * of at least
// 3 characters before it is a prefix.
func searchTerms(search string) []searchTerm {
	var out []searchTerm
	for _, w := range strings.Fields(search) {
		t := searchTerm{word: w}
		if stem := strings.TrimRight(w, "*"); stem != w && utf8.RuneCountInString(stem) >= 3 {
			t = searchTerm{word: stem, prefix: true}
		}
		out = append(out, t)
	}
	return out
}

// searchMatch turns a search into an FTS5 query: every word in the title
// or the body of a message the user may read (and of the channel, when one
// is given). A word ending in * of at least 3 characters before it matches
// as a word's start. Words are quoted, so that no other character of theirs
// is query syntax.
func searchMatch(q MessageQuery) (string, error) {
	var words []string
	for _, t := range searchTerms(q.Search) {
		word := `"` + strings.ReplaceAll(t.word, `"`, `""`) + `"`
		if t.prefix {
			word += "*"
		}
		words = append(words, word)
	}
	if len(words) == 0 {
		return "", ErrBadSearch
	}
	readers := `"` + strings.ReplaceAll(q.reader(), `"`, `""`) + `"`
	if q.ReaderEmail != "" {
		readers = "(" + readers + ` OR "` + strings.ReplaceAll(q.ReaderEmail, `"`, `""`) + `")`
	}
	match := `readers: ` + readers + ` AND {title body}: (` + strings.Join(words, " AND ") + ")"
	if q.ChannelID != "" {
		match += ` AND channel:"` + q.ChannelID + `"`
	}
	return match, nil
}

// reader is the user whose messages a search finds.
func (q MessageQuery) reader() string {
	if q.Approver != "" {
		return q.Approver
	}
	return q.UserID
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

// messagesAt reads the messages at positions, in that order, but for
// ephemeral ones: those are delivered live and never listed. (They are
// deleted a minute or so after their push, so a page may come up short
// meanwhile; counting them out everywhere would cost every list a read of
// each message it walks.)
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
		strings.Repeat(", ?", len(positions)-1)+") AND m.ephemeral = 0 ORDER BY m.rowid DESC", args...)
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

// searchWalksPG is the walk of a search on PostgreSQL, where the index is
// a table of each message's words (a tsvector), readers and channel.
func searchWalksPG(q MessageQuery, conds []stateCond) ([]walk, error) {
	query, err := searchQueryPG(q.Search)
	if err != nil || query == "" {
		return nil, err
	}
	where := " WHERE f.readers @> ARRAY[CAST(? AS TEXT)] AND f.words @@ CAST(? AS tsquery)"
	args := []any{q.reader(), query}
	if q.ReaderEmail != "" {
		where = " WHERE f.readers && ARRAY[CAST(? AS TEXT), CAST(? AS TEXT)] AND f.words @@ CAST(? AS tsquery)"
		args = []any{q.reader(), q.ReaderEmail, query}
	}
	switch {
	case q.ChannelID != "":
		where += " AND f.channel = ?"
		args = append(args, q.ChannelID)
	case q.Approver == "":
		where += readableBy
		args = append(args, q.UserID, q.UserID)
	}
	return searchWalk("messages_fts", where, args, q, anyOf(conds)), nil
}

// searchQueryPG turns a search into a tsquery with the rules of searchMatch:
// every word, a word ending in * of 3 characters or more as a word's start.
// A search word is split into the index's words (letters, digits and _,
// lower-cased, as herald_words splits a message), each of which must be
// there.
func searchQueryPG(search string) (string, error) {
	given := searchTerms(search)
	if len(given) == 0 {
		return "", ErrBadSearch
	}
	var terms []string
	for _, t := range given {
		words := searchWordsPG(t.word)
		for i, word := range words {
			term := "'" + word + "'"
			if t.prefix && i == len(words)-1 {
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
