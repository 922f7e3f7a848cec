package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// States of an urgent message's alert.
const (
	AlertActive       = "active"
	AlertAcknowledged = "acknowledged"
	AlertCancelled    = "cancelled"
	AlertExpired      = "expired"
)

// TopicAlerts is woken when an alert is stored, so that the alert sweep
// learns its due time.
const TopicAlerts = "alerts"

// ErrAlertClosed is returned when an alert is acknowledged or cancelled
// that is no longer active.
var ErrAlertClosed = errors.New("store: alert is no longer active")

// NewAlert is how an urgent message alerts, stored with it: pushed again
// every Repeat until acknowledged, for at most Expire, and escalated to the
// next person of its channel's escalation list every EscalateAfter (0:
// never). The times run from when the message is delivered.
type NewAlert struct {
	Repeat, Expire, EscalateAfter time.Duration
}

// Alert is where an urgent message's alert stands.
type Alert struct {
	MessageID        string
	ChannelID        string
	CallbackURL      *string // the message's
	CreatedAt        time.Time
	State            string
	Repeat           time.Duration
	Repeats          int // pushes repeated after the first
	Level            int // escalation levels reached
	ExpiresAt        time.Time
	NextRepeatAt     *time.Time // while active
	NextEscalationAt *time.Time // while active and a level may follow
	LastRepeatAt     *time.Time

	AcknowledgedBy     *AlertUser
	AcknowledgedAt     *time.Time
	AcknowledgedDevice string // the device the answer came from, if known
	ResolvedAt         *time.Time
	CancelledBy        string // "sender", or the id of the user who cancelled

	Alerted []AlertRecipient // in the order they were reached
}

// AlertUser is a person an alert names.
type AlertUser struct {
	ID, Name, Email string
}

// AlertRecipient is a person an alert reached, and at which level (0: the
// owner, and approvers of the message).
type AlertRecipient struct {
	AlertUser
	Level     int
	AlertedAt time.Time
}

// AlertAck is an acknowledgement: who, when, and from which device ("":
// not known).
type AlertAck struct {
	UserID string
	At     time.Time
	Device string
}

// AlertNotice builds, inside the write that changed an alert, the callback
// that tells the sender of the change (nil: none, as without a
// callback_url). a is the alert as changed, event names the change.
type AlertNotice func(a *Alert, event string) (*NewDelivery, error)

// Events an alert's change gives rise to (AlertNotice).
const (
	AlertEventAcknowledged = "alert.acknowledged"
	AlertEventCancelled    = "alert.cancelled"
	AlertEventExpired      = "alert.expired"
)

// insertAlert stores message m's alert inside tx, with its owner and the
// approvers the message lists as reached at level 0.
func (s *Store) insertAlert(tx *writeTx, m *Message) error {
	a := m.Alert
	start := m.CreatedAt
	if m.DeliverAt != nil {
		start = *m.DeliverAt
	}
	next, expire := ms(start.Add(a.Repeat)), ms(start.Add(a.Expire))
	due := min(next, expire)
	var escalate, nextEsc any
	if a.EscalateAfter > 0 {
		e := ms(start.Add(a.EscalateAfter))
		escalate, nextEsc, due = a.EscalateAfter.Milliseconds(), e, min(due, e)
	}
	if _, err := tx.Exec(`INSERT INTO alerts (message_id, state, repeat_ms, expire_at, next_repeat_at, escalate_ms,
		next_escalation_at, due_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, AlertActive, a.Repeat.Milliseconds(), expire, next, escalate, nextEsc, due, ms(m.CreatedAt)); err != nil {
		return fmt.Errorf("store alert: %w", err)
	}
	if _, err := tx.Exec(`INSERT INTO alert_recipients (message_id, user_id, level, alerted_at)
		SELECT ?1, c.user_id, 0, CAST(?2 AS BIGINT) FROM channels c WHERE c.id = ?3
		UNION SELECT ?1, a.user_id, 0, CAST(?2 AS BIGINT) FROM message_approvers a
			JOIN users u ON u.id = a.user_id WHERE a.message_id = ?1`, m.ID, ms(start), m.ChannelID); err != nil {
		return fmt.Errorf("store alert's recipients: %w", err)
	}
	s.wake.mark(TopicAlerts)
	return nil
}

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

// Alerted reports whether message id's alert reached userID.
func (s *Store) Alerted(ctx context.Context, id, userID string) (bool, error) {
	var ok bool
	err := s.read.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM alert_recipients WHERE message_id = ? AND user_id = ?)",
		id, userID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("store: alerted %s: %w", id, err)
	}
	return ok, nil
}

// AcknowledgeAlert records ack on message id's active alert: no more
// repeats or escalation. The sender's callback, from notice, and the
// message's stream event and notification update commit with it. An alert
// no longer active is ErrAlertClosed.
func (s *Store) AcknowledgeAlert(ctx context.Context, id string, ack AlertAck, notice AlertNotice) (*Alert, error) {
	var out *Alert
	err := s.update(ctx, func(tx *writeTx) error {
		var err error
		out, err = s.ackAlert(tx, id, ack, notice)
		if err != nil {
			return err
		}
		if out == nil {
			return closedOr(tx, id)
		}
		if err := s.insertEvent(tx, EventUpdated, id); err != nil {
			return err
		}
		return s.queueUpdatePush(tx, id)
	})
	if err != nil {
		return nil, fmt.Errorf("store: acknowledge alert of %s: %w", id, err)
	}
	return out, nil
}

// ackAlert acknowledges message id's alert inside tx if it is active, and
// queues notice's callback; it returns the alert as acknowledged, or nil
// when none was active.
func (s *Store) ackAlert(tx *writeTx, id string, ack AlertAck, notice AlertNotice) (*Alert, error) {
	err := execOne(tx, `UPDATE alerts SET state = ?, acknowledged_by = ?, acknowledged_at = ?, acknowledged_device = ?,
		resolved_at = ? WHERE message_id = ? AND state = ?`,
		AlertAcknowledged, ack.UserID, ms(ack.At), nullString(ack.Device), ms(ack.At), id, AlertActive)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return s.noticeAlert(tx, id, AlertEventAcknowledged, ack.At, notice)
}

// CancelAlert resolves message id's active alert as cancelled by by
// ("sender", or a user id): no more repeats or escalation. As
// AcknowledgeAlert otherwise.
func (s *Store) CancelAlert(ctx context.Context, id, by string, notice AlertNotice) (*Alert, error) {
	var out *Alert
	now := s.now()
	err := s.update(ctx, func(tx *writeTx) error {
		err := execOne(tx, `UPDATE alerts SET state = ?, cancelled_by = ?, resolved_at = ? WHERE message_id = ? AND state = ?`,
			AlertCancelled, by, ms(now), id, AlertActive)
		if errors.Is(err, ErrNotFound) {
			return closedOr(tx, id)
		}
		if err != nil {
			return err
		}
		if out, err = s.noticeAlert(tx, id, AlertEventCancelled, now, notice); err != nil {
			return err
		}
		if err := s.insertEvent(tx, EventUpdated, id); err != nil {
			return err
		}
		return s.queueUpdatePush(tx, id)
	})
	if err != nil {
		return nil, fmt.Errorf("store: cancel alert of %s: %w", id, err)
	}
	return out, nil
}

// closedOr is the error for an alert that was not active: ErrAlertClosed,
// or ErrNotFound when message id has none.
func closedOr(tx *writeTx, id string) error {
	var n int
	if err := tx.QueryRow("SELECT count(*) FROM alerts WHERE message_id = ?", id).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return ErrAlertClosed
}

// noticeAlert reads message id's alert inside tx after its change event
// and queues the callback notice makes of it.
func (s *Store) noticeAlert(tx *writeTx, id, event string, at time.Time, notice AlertNotice) (*Alert, error) {
	a, err := loadAlert(tx, id)
	if err != nil {
		return nil, err
	}
	if notice == nil {
		return a, nil
	}
	d, err := notice(a, event)
	if err != nil || d == nil {
		return a, err
	}
	d.Kind = KindAlert
	return a, s.insertDelivery(tx, id, d, at)
}

// NextAlertDue returns when the earliest active alert is next due.
func (s *Store) NextAlertDue(ctx context.Context) (time.Time, bool, error) {
	var next sql.NullInt64
	err := s.read.QueryRowContext(ctx, "SELECT MIN(due_at) FROM alerts WHERE state = ?", AlertActive).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: next alert: %w", err)
	}
	return fromMS(next.Int64), next.Valid, nil
}
