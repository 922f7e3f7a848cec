package store

import (
	"context"
	"fmt"
	"strings"
)

// eventColumns are the columns scanEvents reads, in order.
const eventColumns = "id, user_id, type, message_id, channel_id, created_at, COALESCE(sequence_id, '')"

// EventHorizon is the newest event id handed out: with one writer, every
// event with an id up to it is committed once a commit is seen. On
// PostgreSQL a sequence hands ids out before their transaction commits, so
// it is the newest committed event instead: writer transactions commit one
// at a time (postgres.go), so every smaller id has committed or never will.
func (s *Store) EventHorizon(ctx context.Context) (int64, error) {
	var n int64
	err := s.st.eventHorizon.QueryRowContext(ctx).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: event horizon: %w", err)
	}
	return n, nil
}

// FollowEvents calls commit with the event horizon at once and after every
// commit that wrote events, until ctx ends (nil) or a read fails. It is the
// live stream hub's feed: the writer commits one transaction at a time, so
// everything up to the horizon read after a commit is committed. On SQLite
// the writer reads the horizon inside the transaction that wrote the
// events (sqliteBatch.flush) and stores it before the wake-up, so only the
// first read (which also sees what another process wrote before) asks a
// reader.
func (s *Store) FollowEvents(ctx context.Context, commit func(n int64)) error {
	wake, cancel := s.Subscribe(TopicEvents)
	defer cancel()
	s.wake.followers.Add(1)
	defer s.wake.followers.Add(-1)
	var last int64
	for first := true; ; first = false {
		n := s.wake.events.Load()
		if first || n == 0 {
			var err error
			if n, err = s.EventHorizon(ctx); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
		last = max(last, n) // on PostgreSQL deleting the newest events lowers it
		commit(last)
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		}
	}
}

// EventsBetween returns up to limit events of every user with
// after < id ≤ upTo, oldest first.
func (s *Store) EventsBetween(ctx context.Context, after, upTo int64, limit int) ([]Event, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+eventColumns+` FROM events
		WHERE id > ? AND id <= ? ORDER BY id LIMIT ?`, after, upTo, limit)
	if err != nil {
		return nil, fmt.Errorf("store: events between: %w", err)
	}
	return scanEvents(rows)
}

// UserEventsBetween returns up to limit of a user's events with
// after < id ≤ upTo, oldest first.
func (s *Store) UserEventsBetween(ctx context.Context, userID string, after, upTo int64, limit int) ([]Event, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+eventColumns+` FROM events
		WHERE user_id = ? AND id > ? AND id <= ? ORDER BY id LIMIT ?`, userID, after, upTo, limit)
	if err != nil {
		return nil, fmt.Errorf("store: user events between: %w", err)
	}
	return scanEvents(rows)
}

func scanEvents(rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}) ([]Event, error) {
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var at int64
		if err := rows.Scan(&e.ID, &e.UserID, &e.Type, &e.MessageID, &e.ChannelID, &at, &e.SequenceID); err != nil {
			return nil, fmt.Errorf("store: events: %w", err)
		}
		e.CreatedAt = fromMS(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: events: %w", err)
	}
	return out, nil
}

// MessagesByIDs returns the messages with the given ids that exist, by id,
// whoever owns them; callers check access.
func (s *Store) MessagesByIDs(ctx context.Context, ids []string) (map[string]*Message, error) {
	out := make(map[string]*Message, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.read.QueryContext(ctx, "SELECT "+messageCols+messageFrom+"WHERE m.id IN (?"+strings.Repeat(",?", len(ids)-1)+")", args...)
	if err != nil {
		return nil, fmt.Errorf("store: messages by id: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, fmt.Errorf("store: messages by id: %w", err)
		}
		out[m.ID] = m
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: messages by id: %w", err)
	}
	return out, nil
}

// CredentialChanges counts the changes that can end a credential: a session
// ended or refreshed, an API key revoked, a user deleted, by any process.
// A stream re-checks its credential when the count moves.
func (s *Store) CredentialChanges(ctx context.Context) (int64, error) {
	var n int64
	if err := s.read.QueryRowContext(ctx, "SELECT n FROM credential_changes WHERE id = 1").Scan(&n); err != nil {
		return 0, fmt.Errorf("store: credential changes: %w", err)
	}
	return n, nil
}
