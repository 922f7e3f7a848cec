package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// The reads an ntfy subscription needs to turn ntfy's since= into a place
// in a user's stream history, and to tell whether the session it signed in
// with still lives. Events have no index by user (0008): like a stream's
// catch-up, these walk the kept history, at most EventHistory long.

// FirstUserEventSince returns the id of the user's oldest event created at
// or after t; ok is false when there is none.
func (s *Store) FirstUserEventSince(ctx context.Context, userID string, t time.Time) (id int64, ok bool, err error) {
	return s.oneEventID(ctx, "first event since",
		`SELECT MIN(id) FROM events WHERE user_id = ? AND created_at >= ?`, userID, ms(t))
}

// FirstUserEventOf returns the id of the user's oldest event of message
// messageID (its creation, while kept); ok is false when there is none.
func (s *Store) FirstUserEventOf(ctx context.Context, userID, messageID string) (id int64, ok bool, err error) {
	return s.oneEventID(ctx, "first event of message",
		`SELECT MIN(id) FROM events WHERE user_id = ? AND message_id = ?`, userID, messageID)
}

// LastUserMessageEventIn returns the id of the user's newest event in one
// of channelIDs that is not a deletion; ok is false when there is none.
func (s *Store) LastUserMessageEventIn(ctx context.Context, userID string, channelIDs []string) (id int64, ok bool, err error) {
	if len(channelIDs) == 0 {
		return 0, false, nil
	}
	args := []any{userID, EventDeleted}
	for _, c := range channelIDs {
		args = append(args, c)
	}
	return s.oneEventID(ctx, "last message event",
		`SELECT MAX(id) FROM events WHERE user_id = ? AND type != ? AND channel_id IN (?`+
			strings.Repeat(",?", len(channelIDs)-1)+`)`, args...)
}

func (s *Store) oneEventID(ctx context.Context, op, q string, args ...any) (int64, bool, error) {
	var id sql.NullInt64
	if err := s.read.QueryRowContext(ctx, q, args...).Scan(&id); err != nil {
		return 0, false, fmt.Errorf("store: %s: %w", op, err)
	}
	return id.Int64, id.Valid, nil
}

// LiveSession returns the session with this id while it can still be
// refreshed, whether or not its access token has expired; a session ended
// (logout, a password change, a deleted user) or past its refresh expiry
// is ErrNotFound.
func (s *Store) LiveSession(ctx context.Context, id string) (*Session, error) {
	var sess Session
	var aexp, rexp, created int64
	err := s.read.QueryRowContext(ctx, `SELECT id, user_id, access_expires_at, refresh_expires_at, created_at
		FROM sessions WHERE id = ? AND refresh_expires_at > ?`, id, ms(s.now())).
		Scan(&sess.ID, &sess.UserID, &aexp, &rexp, &created)
	if err != nil {
		return nil, fmt.Errorf("store: session %s: %w", id, notFound(err))
	}
	sess.AccessExpiresAt, sess.RefreshExpiresAt, sess.CreatedAt = fromMS(aexp), fromMS(rexp), fromMS(created)
	return &sess, nil
}
