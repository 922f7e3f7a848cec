package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// ErrDeliveryPending is returned when redelivering a job that is still queued.
var ErrDeliveryPending = errors.New("store: delivery is still pending")

// Kinds of delivery job.
const (
	// KindCallback is the message's signed callback, one at most.
	KindCallback = "callback"
	// KindAction is the request of a tapped http action, as its sender
	// described it: not signed.
	KindAction = "action"
	// KindAlert is a signed callback of an urgent message's alert
	// (acknowledged, cancelled, expired), beside the message's own.
	KindAlert = "alert"
)

// NewDelivery is a callback, or an http action's request, to queue
// together with what caused it.
type NewDelivery struct {
	ChannelID string
	Event     string
	URL       string
	Body      []byte
	// Kind is KindCallback when empty. An action's request has its method
	// and headers (a JSON object).
	Kind    string
	Method  string
	Headers []byte
}

// Delivery is a queued callback or action request as a worker claims it.
type Delivery struct {
	ID        string
	MessageID string
	ChannelID string
	Event     string
	URL       string
	Body      []byte
	Attempts  int // attempts made before this one
	Kind      string
	Method    string
	Headers   []byte // a JSON object of an action's headers, nil for a callback
}

// DeliveryStatus is a message's delivery as its resource shows it.
type DeliveryStatus struct {
	State          string
	Attempts       int
	LastStatusCode *int
	NextAttemptAt  *time.Time
}

// Attempt is one logged delivery attempt.
type Attempt struct {
	Event      string // the delivery's: the callback's event, or action.http for an action's request
	Attempt    int
	At         time.Time
	StatusCode *int
	Error      string
	Duration   time.Duration
}

// insertDelivery queues d for messageID inside tx and wakes the workers
// once tx commits.
func (s *Store) insertDelivery(tx *writeTx, messageID string, d *NewDelivery, now time.Time) error {
	var err error
	if d.Kind == "" || d.Kind == KindCallback {
		_, err = tx.Exec(`INSERT INTO deliveries
		(id, message_id, channel_id, event, url, body, state, next_attempt_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			NewID("dlv_"), messageID, d.ChannelID, d.Event, d.URL, d.Body, DeliveryPending, ms(now), ms(now), ms(now))
	} else {
		_, err = tx.Exec(`INSERT INTO deliveries
		(id, message_id, channel_id, event, url, body, state, next_attempt_at, created_at, updated_at, kind, method, headers)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			NewID("dlv_"), messageID, d.ChannelID, d.Event, d.URL, d.Body, DeliveryPending, ms(now), ms(now), ms(now),
			d.Kind, d.Method, nullText(d.Headers))
	}
	if err != nil {
		return fmt.Errorf("queue delivery: %w", err)
	}
	s.wake.mark(TopicDeliveries)
	return nil
}

// ReleaseLeases frees every claim. The server calls it at start: claims left
// by a process that died are then due at once instead of after their lease.
//
// On PostgreSQL it does nothing: other replicas' claims are alive, and a
// dead replica's come back when their lease runs out.
func (s *Store) ReleaseLeases(ctx context.Context) error {
	if s.dialect.replicas() {
		return nil
	}
	_, err := s.sweep(ctx, "release leases", "UPDATE deliveries SET lease_until = NULL WHERE lease_until IS NOT NULL")
	return err
}

// ClaimDeliveries leases up to n due jobs for lease, oldest first, with no
// bound per owner (ClaimDeliveriesFair has one).
func (s *Store) ClaimDeliveries(ctx context.Context, n int, lease time.Duration) ([]Delivery, error) {
	return s.ClaimDeliveriesFair(ctx, n, noShare, lease)
}

// ClaimDeliveriesFair leases up to n due jobs for lease, oldest first, such
// that no user (a channel's owner) has more than perOwner callbacks leased
// once it returns: the jobs of a user already at that share are passed
// over and stay due. A job whose worker died becomes due again when its
// lease runs out.
func (s *Store) ClaimDeliveriesFair(ctx context.Context, n, perOwner int, lease time.Duration) ([]Delivery, error) {
	var out []Delivery
	err := s.update(ctx, func(tx *writeTx) error {
		now := s.now()
		rows, err := tx.Query(s.claimSQL(deliveryQueue), ms(now.Add(lease)), ms(now), perOwner, claimWindow(n), n)
		if err != nil {
			return err
		}
		defer rows.Close()
		out = out[:0]
		for rows.Next() {
			var d Delivery
			var method, headers sql.NullString
			if err := rows.Scan(&d.ID, &d.MessageID, &d.ChannelID, &d.Event, &d.URL, &d.Body, &d.Attempts,
				&d.Kind, &method, &headers); err != nil {
				return err
			}
			d.Method = method.String
			if headers.Valid {
				d.Headers = []byte(headers.String)
			}
			out = append(out, d)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim deliveries: %w", err)
	}
	return out, nil
}

// DeferDelivery hands a claimed job back, due again at at, without
// counting an attempt: its receiver's host is being given a rest.
func (s *Store) DeferDelivery(ctx context.Context, id string, at time.Time) error {
	err := s.update(ctx, func(tx *writeTx) error {
		_, err := tx.Exec(`UPDATE deliveries SET next_attempt_at = ?, lease_until = NULL WHERE id = ? AND state = ?`,
			ms(at), id, DeliveryPending)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: defer delivery %s: %w", id, err)
	}
	return nil
}

// NextDeliveryAt returns when the earliest pending job is due (ok false: none).
func (s *Store) NextDeliveryAt(ctx context.Context) (time.Time, bool, error) {
	var next sql.NullInt64
	err := s.st.nextDelivery.QueryRowContext(context.WithoutCancel(ctx)).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: next delivery: %w", err)
	}
	if !next.Valid {
		return time.Time{}, false, nil
	}
	return fromMS(next.Int64), true, nil
}

// PendingDeliveries counts queued jobs (the queue depth).
func (s *Store) PendingDeliveries(ctx context.Context) (int, error) {
	var n int
	err := s.read.QueryRowContext(ctx, "SELECT count(*) FROM deliveries WHERE state = ?", DeliveryPending).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count deliveries: %w", err)
	}
	return n, nil
}

// ChannelSecret returns a channel's current signing secret.
func (s *Store) ChannelSecret(ctx context.Context, channelID string) (string, error) {
	var secret string
	err := s.read.QueryRowContext(ctx, "SELECT webhook_secret FROM channels WHERE id = ?", channelID).Scan(&secret)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("store: channel secret %s: %w", channelID, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("store: channel secret %s: %w", channelID, err)
	}
	return secret, nil
}

// AttemptResult is the outcome of one delivery attempt.
type AttemptResult struct {
	At         time.Time
	StatusCode int // 0: no answer
	Error      string
	Duration   time.Duration
	Success    bool
}

// RecordAttempt logs an attempt of d and moves the job on: delivered on
// success; dead-lettered after maxAttempts failures, which also sets the
// message's polling state to failed; else due again at retryAt. It returns
// the job's new state ("" when the job was deleted meanwhile).
func (s *Store) RecordAttempt(ctx context.Context, d *Delivery, res AttemptResult, maxAttempts int, retryAt time.Time) (string, error) {
	n := d.Attempts + 1
	var state string
	err := s.update(ctx, func(tx *writeTx) error {
		var code any
		if res.StatusCode != 0 {
			code = res.StatusCode
		}
		if _, err := tx.Exec(`INSERT INTO delivery_attempts (delivery_id, attempt, at, status_code, error, duration_ms)
			SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM deliveries WHERE id = ?)`,
			d.ID, n, ms(res.At), code, res.Error, res.Duration.Milliseconds(), d.ID); err != nil {
			return err
		}
		next := ms(retryAt)
		switch {
		case res.Success:
			state = DeliveryDelivered
		case n >= maxAttempts:
			state = DeliveryFailed
		default:
			state = DeliveryPending
		}
		err := execOne(tx, `UPDATE deliveries SET state = ?, attempts = ?, next_attempt_at = ?, lease_until = NULL,
			last_status_code = ?, last_error = ?, updated_at = ? WHERE id = ?`,
			state, n, next, code, res.Error, ms(res.At), d.ID)
		if errors.Is(err, ErrNotFound) {
			state = ""
			return nil
		}
		if err != nil {
			return err
		}
		if state == DeliveryFailed && d.Kind != KindAlert {
			// failed is the last word of polling, even after a read or expiry.
			if _, err := tx.Exec("UPDATE messages SET state = ?, response = NULL WHERE id = ?", StateFailed, d.MessageID); err != nil {
				return err
			}
		}
		if state != DeliveryPending || n == 1 {
			// The delivery's state changed: delivered, failed, or retrying.
			return s.insertEvent(tx, EventUpdated, d.MessageID)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("store: record attempt %s: %w", d.ID, err)
	}
	return state, nil
}

// DeliveryLog returns a message's delivery status and every attempt, oldest
// first. A message without a delivery has a nil status.
func (s *Store) DeliveryLog(ctx context.Context, messageID string) (*DeliveryStatus, []Attempt, error) {
	// One read transaction, so that the status and the attempts come from
	// the same snapshot even while a worker records an attempt.
	// One snapshot for the delivery and its attempts: SQLite's read
	// transactions are one; PostgreSQL's need repeatable read for it.
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: s.dialect.snapshot()})
	if err != nil {
		return nil, nil, fmt.Errorf("store: delivery log %s: %w", messageID, err)
	}
	defer tx.Rollback()
	var st DeliveryStatus
	var id string
	var code, next sql.NullInt64
	// The status is the callback's, else the first action request's; the
	// attempts are those of every delivery of the message.
	err = tx.QueryRow(`SELECT id, state, attempts, last_status_code, next_attempt_at FROM deliveries WHERE message_id = ?
		ORDER BY CASE WHEN kind = 'callback' THEN 0 ELSE 1 END, created_at, id LIMIT 1`,
		messageID).Scan(&id, &st.State, &st.Attempts, &code, &next)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, []Attempt{}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("store: delivery log %s: %w", messageID, err)
	}
	fillStatus(&st, code, next)
	rows, err := tx.Query(`SELECT a.attempt, a.at, a.status_code, a.error, a.duration_ms, d.event FROM delivery_attempts a
		JOIN deliveries d ON d.id = a.delivery_id WHERE d.message_id = ? ORDER BY a.id`, messageID)
	if err != nil {
		return nil, nil, fmt.Errorf("store: delivery log %s: %w", messageID, err)
	}
	defer rows.Close()
	out := []Attempt{}
	for rows.Next() {
		var a Attempt
		var at, dur int64
		var c sql.NullInt64
		if err := rows.Scan(&a.Attempt, &at, &c, &a.Error, &dur, &a.Event); err != nil {
			return nil, nil, fmt.Errorf("store: delivery log %s: %w", messageID, err)
		}
		a.At, a.Duration = fromMS(at), time.Duration(dur)*time.Millisecond
		if c.Valid {
			v := int(c.Int64)
			a.StatusCode = &v
		}
		out = append(out, a)
	}
	return &st, out, rows.Err()
}

func fillStatus(st *DeliveryStatus, code, next sql.NullInt64) {
	if code.Valid {
		v := int(code.Int64)
		st.LastStatusCode = &v
	}
	if st.State == DeliveryPending && next.Valid {
		st.NextAttemptAt = nullTime(next)
	}
}

// Redeliver queues a message's delivered or dead-lettered callback again,
// due now, with its attempt count starting again. A job still pending is
// ErrDeliveryPending; a message without a callback is ErrNotFound.
func (s *Store) Redeliver(ctx context.Context, messageID string) error {
	err := s.update(ctx, func(tx *writeTx) error {
		var state string
		err := tx.QueryRow("SELECT state FROM deliveries WHERE message_id = ? AND kind = 'callback'", messageID).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if state == DeliveryPending {
			return ErrDeliveryPending
		}
		now := ms(s.now())
		if _, err := tx.Exec(`UPDATE deliveries SET state = ?, attempts = 0, next_attempt_at = ?, lease_until = NULL,
			updated_at = ? WHERE message_id = ? AND kind = 'callback'`, DeliveryPending, now, now, messageID); err != nil {
			return err
		}
		s.wake.mark(TopicDeliveries)
		return s.insertEvent(tx, EventUpdated, messageID)
	})
	if err != nil {
		return fmt.Errorf("store: redeliver %s: %w", messageID, err)
	}
	return nil
}
