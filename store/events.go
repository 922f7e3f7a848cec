package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Event types of the live stream.
const (
	EventCreated = "message.created"
	EventUpdated = "message.updated"
	EventDeleted = "message.deleted"
)

// TopicEvents is woken when events are committed.
const TopicEvents = "events"

// Event is one entry of a user's stream.
type Event struct {
	ID        int64
	UserID    string // whose stream it belongs to
	Type      string
	MessageID string
	ChannelID string
	CreatedAt time.Time
	// SequenceID is the message's sequence, on the events recorded after
	// a send (an answer, a deletion, a clear): a deletion's event names
	// the notification to remove once the message is gone.
	SequenceID string
}

// insertEvent records typ for message id, for the channel's owner and every
// approver who lists the message (who accepted to approve), inside tx.
func (s *Store) insertEvent(tx *writeTx, typ, id string) error {
	_, err := tx.Exec(`INSERT INTO events (user_id, type, message_id, channel_id, created_at, sequence_id)
		SELECT c.user_id, ?1, m.id, m.channel_id, CAST(?2 AS BIGINT), m.sequence_id FROM messages m JOIN channels c ON c.id = m.channel_id WHERE m.id = ?3
		UNION
		SELECT a.user_id, ?1, a.message_id, a.channel_id, CAST(?2 AS BIGINT), (SELECT sequence_id FROM messages WHERE id = ?3)
			FROM message_approvers a WHERE a.message_id = ?3`,
		typ, ms(s.now()), id)
	if err != nil {
		return fmt.Errorf("record event: %w", err)
	}
	s.wake.mark(TopicEvents)
	return nil
}

// EventsAfter returns up to limit of a user's events with id > after, oldest first.
func (s *Store) EventsAfter(ctx context.Context, userID string, after int64, limit int) ([]Event, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, type, message_id, channel_id, created_at FROM events
		WHERE user_id = ? AND id > ? ORDER BY id LIMIT ?`, userID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var at int64
		if err := rows.Scan(&e.ID, &e.Type, &e.MessageID, &e.ChannelID, &at); err != nil {
			return nil, fmt.Errorf("store: events: %w", err)
		}
		e.UserID, e.CreatedAt = userID, fromMS(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// LastEventID is the newest event id ever handed out (0 when none): a new
// stream starts after it.
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	h, err := s.EventHistory(ctx)
	return h.Last, err
}

// EventHistory is what the events table can replay: ids above Floor are
// all kept (none was swept); Last is the newest id ever handed out. Ids are
// never reused (AUTOINCREMENT), and only sweeps and user deletions remove
// rows.
type EventHistory struct {
	Floor, Last int64
}

// EventHistory returns the bounds of the stream's kept history.
func (s *Store) EventHistory(ctx context.Context) (EventHistory, error) {
	var h EventHistory
	var oldest sql.NullInt64
	err := s.read.QueryRowContext(ctx, s.dialect.eventHistory()).Scan(&h.Last, &oldest)
	if err != nil {
		return h, fmt.Errorf("store: event history: %w", err)
	}
	h.Floor = h.Last
	if oldest.Valid {
		h.Floor = oldest.Int64 - 1
	}
	return h, nil
}
