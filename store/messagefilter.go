package store

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"
)

// StateAnswered, as a list filter, keeps every message that is no longer
// pending: submitted, already_read, expired and failed.
const StateAnswered = "answered"

// StateScheduled, as a list filter, keeps the scheduled messages not yet
// delivered (their deliver_at is ahead).
const StateScheduled = "scheduled"

// ListStates are the values MessageQuery.State accepts: the polling states,
// StateAnswered and StateScheduled.
var ListStates = []string{StatePending, StateSubmitted, StateAlreadyRead, StateExpired, StateFailed, StateAnswered,
	StateScheduled}

// ErrBadState is a list filter that is not one of ListStates.
var ErrBadState = errors.New("store: unknown message state")

// notPending is the condition of messages_channel_answered (SQLite's
// migration 0027), the index of a channel's messages that left pending.
const notPending = "m.state != 'pending'"

// stateCond is one condition on a message (alias m) that an index on
// (channel_id, state) serves: a state, and for submitted answers which
// side of the expiry they are on.
type stateCond struct {
	sql  string
	args []any
}

// stateConds turns a list filter into conditions, any of which keeps a
// message. A submitted answer older than expired reads as expired (the
// sweeper has not reached it yet), so the filter agrees with the status a
// message shows. No filter is one condition that keeps everything.
func stateConds(state string, expired time.Time) ([]stateCond, error) {
	// Every state but pending also names "m.state != 'pending'", the
	// condition of SQLite's index of answered messages, with the literal
	// its planner needs to see that the index serves the walk.
	is := func(s string) stateCond {
		if s == StatePending {
			return stateCond{"m.state = ?", []any{s}}
		}
		return stateCond{"m.state = ? AND " + notPending, []any{s}}
	}
	fresh := stateCond{"m.state = ? AND " + notPending + " AND m.submitted_at > ?", []any{StateSubmitted, ms(expired)}}
	stale := stateCond{"m.state = ? AND " + notPending + " AND m.submitted_at <= ?", []any{StateSubmitted, ms(expired)}}
	switch state {
	case "":
		return []stateCond{{}}, nil
	case StatePending, StateAlreadyRead, StateFailed:
		return []stateCond{is(state)}, nil
	case StateSubmitted:
		return []stateCond{fresh}, nil
	case StateExpired:
		return []stateCond{is(StateExpired), stale}, nil
	case StateScheduled:
		return []stateCond{{"m.deliver_at IS NOT NULL", nil}}, nil
	case StateAnswered:
		return []stateCond{is(StateSubmitted), is(StateAlreadyRead), is(StateExpired), is(StateFailed)}, nil
	}
	return nil, ErrBadState
}

// and is the condition as a clause to append to a WHERE.
func (c stateCond) and() string {
	if c.sql == "" {
		return ""
	}
	return " AND " + c.sql
}

// anyOf joins conditions into one: for walks that test each message anyway.
func anyOf(conds []stateCond) stateCond {
	if len(conds) == 1 {
		return conds[0]
	}
	var parts []string
	var args []any
	for _, c := range conds {
		parts = append(parts, "("+c.sql+")")
		args = append(args, c.args...)
	}
	return stateCond{"(" + strings.Join(parts, " OR ") + ")", args}
}

// listPosition is a message's place in the lists, in commit order: SQLite's
// rowid. The queries that filter lists name it only through this constant,
// so another dialect changes it in one place.
const listPosition = "m.rowid"

// walk is one index walk of a list: list selects positions, newest first,
// with args followed by the cursor, a limit and an offset; count selects a
// row per match, with countArgs if set, else args.
type walk struct {
	list, count string
	args        []any
	countArgs   []any
}

// merge runs walks and keeps the page of their union, newest first: each
// walk gives its newest offset+n, and the merge skips offset. One walk
// takes the offset itself. The total adds the walks' counts, up to TotalCap.
func (s *Store) merge(ctx context.Context, walks []walk, before int64, n, offset int) ([]int64, int, error) {
	var all []int64
	total := 0
	each, skip := offset+n, 0
	if len(walks) == 1 {
		each, skip = n, offset
	}
	for _, w := range walks {
		pos, err := s.positions(ctx, w.list, append(slices.Clone(w.args), before, each, skip)...)
		if err != nil {
			return nil, 0, err
		}
		all = append(all, pos...)
		if total <= TotalCap {
			args := w.args
			if w.countArgs != nil {
				args = w.countArgs
			}
			count, err := s.countUpTo(ctx, w.count, args...)
			if err != nil {
				return nil, 0, err
			}
			total += count
		}
	}
	if len(walks) == 1 {
		return all, total, nil
	}
	slices.SortFunc(all, func(a, b int64) int { return cmp.Compare(b, a) }) // newest first
	if offset >= len(all) {
		return nil, total, nil
	}
	all = all[offset:]
	return all[:min(n, len(all))], total, nil
}

// channelWalks are the walks of one channel's messages, one per condition:
// each follows an index on (channel_id, state) when there is one.
func channelWalks(channelID string, conds []stateCond) []walk {
	walks := make([]walk, len(conds))
	for i, c := range conds {
		walks[i] = walk{
			list: "SELECT " + listPosition + " FROM messages m WHERE m.channel_id = ?" + c.and() +
				" AND " + listPosition + " < ? ORDER BY " + listPosition + " DESC LIMIT ? OFFSET ?",
			count: "SELECT 1 FROM messages m WHERE m.channel_id = ?" + c.and(),
			args:  append([]any{channelID}, c.args...),
		}
	}
	return walks
}

// approverWalk walks the messages of one channel whose rule names userID,
// testing each against the filter.
func approverWalk(userID, channelID string, conds []stateCond) walk {
	c := anyOf(conds)
	if c.sql == "" {
		return walk{
			list:  "SELECT position FROM message_approvers WHERE user_id = ? AND channel_id = ? AND position < ? ORDER BY position DESC LIMIT ? OFFSET ?",
			count: "SELECT 1 FROM message_approvers WHERE user_id = ? AND channel_id = ?",
			args:  []any{userID, channelID},
		}
	}
	from := " FROM message_approvers a JOIN messages m ON " + listPosition + " = a.position WHERE a.user_id = ? AND a.channel_id = ? AND " + c.sql
	return walk{
		list:  "SELECT a.position" + from + " AND a.position < ? ORDER BY a.position DESC LIMIT ? OFFSET ?",
		count: "SELECT 1" + from,
		args:  append([]any{userID, channelID}, c.args...),
	}
}

// approvedChannels lists the channels where userID approves any message,
// one index step per channel (a loose index scan: the table holds a row per
// message and approver, the list a row per channel).
func (s *Store) approvedChannels(ctx context.Context, userID string) ([]string, error) {
	rows, err := s.read.QueryContext(ctx, `WITH RECURSIVE c(id) AS (
			SELECT (SELECT MIN(channel_id) FROM message_approvers WHERE user_id = ?)
			UNION ALL
			SELECT (SELECT MIN(channel_id) FROM message_approvers WHERE user_id = ? AND channel_id > c.id)
			FROM c WHERE c.id IS NOT NULL
		) SELECT id FROM c WHERE id IS NOT NULL`, userID, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
