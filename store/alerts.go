package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
