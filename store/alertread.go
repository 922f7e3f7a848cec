package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// queryer is what reads an alert: the writer's transaction or a reader.
type queryer interface {
	Query(q string, args ...any) (*sql.Rows, error)
	QueryRow(q string, args ...any) *sql.Row
}

// ctxReader reads from a pool under ctx.
type ctxReader struct {
	ctx context.Context
	db  *db
}

func (r ctxReader) Query(q string, args ...any) (*sql.Rows, error) {
	return r.db.QueryContext(r.ctx, q, args...)
}

func (r ctxReader) QueryRow(q string, args ...any) *sql.Row {
	return r.db.QueryRowContext(r.ctx, q, args...)
}

const alertCols = `a.message_id, m.channel_id, m.callback_url, a.created_at, a.state, a.repeat_ms, a.repeats, a.level, a.expire_at, a.next_repeat_at,
	a.next_escalation_at, a.last_repeat_at, COALESCE(a.acknowledged_by, ''), COALESCE(u.name, ''), COALESCE(u.email, ''),
	a.acknowledged_at, COALESCE(a.acknowledged_device, ''), a.resolved_at, COALESCE(a.cancelled_by, '')
	FROM alerts a JOIN messages m ON m.id = a.message_id LEFT JOIN users u ON u.id = a.acknowledged_by`

func scanAlert(row scanner) (*Alert, error) {
	var a Alert
	var repeat, expire, next int64
	var nextEsc, lastRepeat, ackAt, resolved sql.NullInt64
	var ack AlertUser
	var callback sql.NullString
	var created int64
	err := row.Scan(&a.MessageID, &a.ChannelID, &callback, &created, &a.State, &repeat, &a.Repeats, &a.Level, &expire, &next,
		&nextEsc, &lastRepeat, &ack.ID, &ack.Name, &ack.Email, &ackAt, &a.AcknowledgedDevice, &resolved, &a.CancelledBy)
	if err != nil {
		return nil, notFound(err)
	}
	a.Repeat, a.ExpiresAt, a.CreatedAt = time.Duration(repeat)*time.Millisecond, fromMS(expire), fromMS(created)
	if callback.Valid {
		a.CallbackURL = &callback.String
	}
	if a.State == AlertActive {
		t := fromMS(next)
		a.NextRepeatAt, a.NextEscalationAt = &t, nullTime(nextEsc)
	}
	a.LastRepeatAt, a.AcknowledgedAt, a.ResolvedAt = nullTime(lastRepeat), nullTime(ackAt), nullTime(resolved)
	if ack.ID != "" {
		a.AcknowledgedBy = &ack
	}
	return &a, nil
}

// loadAlerts reads the alerts of messages ids, with whom each reached.
func loadAlerts(q queryer, ids []string) (map[string]*Alert, error) {
	out := make(map[string]*Alert, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := q.Query("SELECT "+alertCols+" WHERE a.message_id IN ("+marks+")", args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		a, err := scanAlert(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out[a.MessageID] = a
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	rows, err = q.Query(`SELECT r.message_id, r.user_id, COALESCE(u.name, ''), COALESCE(u.email, ''), r.level, r.alerted_at
		FROM alert_recipients r LEFT JOIN users u ON u.id = r.user_id
		WHERE r.message_id IN (`+marks+`) ORDER BY r.level, r.alerted_at, r.user_id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var r AlertRecipient
		var at int64
		if err := rows.Scan(&id, &r.ID, &r.Name, &r.Email, &r.Level, &at); err != nil {
			return nil, err
		}
		r.AlertedAt = fromMS(at)
		if a := out[id]; a != nil {
			a.Alerted = append(a.Alerted, r)
		}
	}
	return out, rows.Err()
}

func loadAlert(q queryer, id string) (*Alert, error) {
	all, err := loadAlerts(q, []string{id})
	if err != nil {
		return nil, err
	}
	a := all[id]
	if a == nil {
		return nil, ErrNotFound
	}
	return a, nil
}

// Alert returns the alert of message id; a message without one is
// ErrNotFound. Callers check access.
func (s *Store) Alert(ctx context.Context, id string) (*Alert, error) {
	a, err := loadAlert(ctxReader{ctx, s.read}, id)
	if err != nil {
		return nil, fmt.Errorf("store: alert of %s: %w", id, err)
	}
	return a, nil
}

// Alerts returns the alerts of the messages ids that have one, by message
// id, in two reads whatever their number. Callers check access.
func (s *Store) Alerts(ctx context.Context, ids []string) (map[string]*Alert, error) {
	out, err := loadAlerts(ctxReader{ctx, s.read}, ids)
	if err != nil {
		return nil, fmt.Errorf("store: alerts: %w", err)
	}
	return out, nil
}

// Alerted reports whether message id's alert reached userID by escalation
// while they still are one of its channel's accepted escalation contacts:
// one who declines, or withdraws, is no longer reached by what reached them.
func (s *Store) Alerted(ctx context.Context, id, userID string) (bool, error) {
	var ok bool
	err := s.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM alert_recipients r
		JOIN messages m ON m.id = r.message_id
		JOIN channel_escalations e ON e.channel_id = m.channel_id AND e.user_id = r.user_id AND e.state = 'accepted'
		WHERE r.message_id = ? AND r.user_id = ? AND r.level > 0)`,
		id, userID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("store: alerted %s: %w", id, err)
	}
	return ok, nil
}
