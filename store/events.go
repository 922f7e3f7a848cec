package store

import (
	"context"
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
	Type      string
	MessageID string
	ChannelID string
	CreatedAt time.Time
}

// insertEvent records typ for message id, for the channel's owner and every
// approver of the message, inside tx.
func (s *Store) insertEvent(tx *writeTx, typ, id string) error {
	_, err := tx.Exec(`INSERT INTO events (user_id, type, message_id, channel_id, created_at)
		SELECT c.user_id, ?1, m.id, m.channel_id, ?2 FROM messages m JOIN channels c ON c.id = m.channel_id WHERE m.id = ?3
		UNION
		SELECT j.value, ?1, m.id, m.channel_id, ?2 FROM messages m, json_each(m.approval, '$.approvers') j WHERE m.id = ?3`,
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
		e.CreatedAt = fromMS(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// LastEventID is the newest event id overall (0 when none): a new stream
// starts after it.
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	var id int64
	if err := s.read.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM events").Scan(&id); err != nil {
		return 0, fmt.Errorf("store: last event: %w", err)
	}
	return id, nil
}

// DeleteEventsBefore drops stream history older than cutoff. Ids grow with
// time, so it walks from the oldest id and stops at the first newer event
// (no index on created_at needed). The newest event always stays, so that
// ids never start again from 1 under a client's Last-Event-ID.
func (s *Store) DeleteEventsBefore(ctx context.Context, cutoff time.Time) (int64, error) {
	return s.sweep(ctx, "delete old events", `DELETE FROM events WHERE id < COALESCE(
		(SELECT id FROM events WHERE created_at >= ? ORDER BY id LIMIT 1),
		(SELECT MAX(id) FROM events))`, ms(cutoff))
}
