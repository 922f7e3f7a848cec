package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"time"
)

// TopicPush is woken when push jobs are committed.
const TopicPush = "push"

// Kinds of push job.
const (
	// PushMessage notifies a message's recipients of it.
	PushMessage = "message"
	// PushUpdate tells the recipients' browsers that the message was
	// answered or its approval resolved, so that its notification is
	// replaced and its buttons go.
	PushUpdate = "update"
)

// PushJob is a claimed push: a fan-out to every recipient device of the
// message (DeviceID empty), or a retry to one device.
type PushJob struct {
	ID        int64
	MessageID string
	DeviceID  string
	Attempts  int
	Kind      string // PushMessage or PushUpdate
}

// PushRetry is a device to try again at At.
type PushRetry struct {
	DeviceID string
	OwnerID  string // the device's user, whose share of the workers it takes
	Attempts int
	At       time.Time
}

// ReleasePushLeases frees every claimed push job (at start). On
// PostgreSQL it does nothing, as ReleaseLeases.
func (s *Store) ReleasePushLeases(ctx context.Context) error {
	if s.dialect.replicas() {
		return nil
	}
	_, err := s.sweep(ctx, "release push leases", "UPDATE push_jobs SET lease_until = NULL WHERE lease_until IS NOT NULL")
	return err
}

// ClaimPushJobs leases up to n due push jobs, oldest first, with no bound
// per owner (ClaimPushJobsFair has one).
func (s *Store) ClaimPushJobs(ctx context.Context, n int, lease time.Duration) ([]PushJob, error) {
	return s.ClaimPushJobsFair(ctx, n, noShare, lease)
}

// ClaimPushJobsFair leases up to n due push jobs, oldest first, such that
// no owner has more than perOwner jobs leased once it returns: the jobs of
// an owner already at that share are passed over, and stay due for a later
// claim. One statement, whatever the queue holds: the owners' jobs in
// flight come from an index of the leased rows only.
func (s *Store) ClaimPushJobsFair(ctx context.Context, n, perOwner int, lease time.Duration) ([]PushJob, error) {
	var out []PushJob
	err := s.update(ctx, func(tx *writeTx) error {
		now := s.now()
		rows, err := tx.Query(s.claimSQL(pushQueue), ms(now.Add(lease)), ms(now), perOwner, claimWindow(n), n)
		if err != nil {
			return err
		}
		defer rows.Close()
		out = out[:0]
		for rows.Next() {
			var j PushJob
			if err := rows.Scan(&j.ID, &j.MessageID, &j.DeviceID, &j.Attempts, &j.Kind); err != nil {
				return err
			}
			out = append(out, j)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim push jobs: %w", err)
	}
	return out, nil
}

// NextPushAt returns when the earliest push job is due.
func (s *Store) NextPushAt(ctx context.Context) (time.Time, bool, error) {
	var next sql.NullInt64
	err := s.st.nextPush.QueryRowContext(context.WithoutCancel(ctx)).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: next push: %w", err)
	}
	if !next.Valid {
		return time.Time{}, false, nil
	}
	return fromMS(next.Int64), true, nil
}

// PushTargets returns the active devices that should get message id: the
// channel owner's and, on an approval message, those of every approver who
// lists it (who accepted to approve: nobody is prompted unasked). With
// deviceID set, only that device (if still active and still a recipient).
// An update goes to web devices only: phones' apps follow the message
// themselves. Each device carries its user's quiet hours (Device.Quiet),
// read by primary key beside it: no query more.
func (s *Store) PushTargets(ctx context.Context, id, deviceID, kind string) ([]Device, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+deviceCols+`, (SELECT u.quiet_hours FROM users u WHERE u.id = devices.user_id)
		FROM devices WHERE active = 1 AND (?2 = '' OR id = ?2)
		AND (?3 != 'update' OR platform = 'web') AND user_id IN (
			SELECT c.user_id FROM messages m JOIN channels c ON c.id = m.channel_id WHERE m.id = ?1
			UNION SELECT a.user_id FROM message_approvers a WHERE a.message_id = ?1)
		ORDER BY created_at, id`, id, deviceID, kind)
	if err != nil {
		return nil, fmt.Errorf("store: push targets %s: %w", id, err)
	}
	defer rows.Close()
	var out []Device
	for rows.Next() {
		var quiet sql.NullString
		d, err := scanDevice(rows, &quiet)
		if err != nil {
			return nil, fmt.Errorf("store: push targets %s: %w", id, err)
		}
		d.Quiet = quietOf(quiet)
		out = append(out, *d)
	}
	return out, rows.Err()
}

// FinishPushJob removes a job and queues the retries it left, in one write.
func (s *Store) FinishPushJob(ctx context.Context, job PushJob, retries []PushRetry) error {
	err := s.update(ctx, func(tx *writeTx) error {
		if _, err := tx.Exec("DELETE FROM push_jobs WHERE id = ?", job.ID); err != nil {
			return err
		}
		for _, r := range retries {
			if _, err := tx.Exec(`INSERT INTO push_jobs (message_id, device_id, attempts, next_attempt_at, kind, owner_id)
				SELECT ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT), ?, ? WHERE EXISTS (SELECT 1 FROM messages WHERE id = ?)`,
				job.MessageID, r.DeviceID, r.Attempts, ms(r.At), cmp.Or(job.Kind, PushMessage), r.OwnerID,
				job.MessageID); err != nil {
				return err
			}
		}
		if len(retries) > 0 {
			s.wake.mark(TopicPush)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: finish push job %d: %w", job.ID, err)
	}
	return nil
}

// DeactivateDevice marks a device whose token a provider rejected for good;
// it gets no more pushes until the app registers a new token.
func (s *Store) DeactivateDevice(ctx context.Context, id string) error {
	return s.updateOne(ctx, "deactivate device", "UPDATE devices SET active = 0, updated_at = ? WHERE id = ?", ms(s.now()), id)
}

// queueUpdatePush queues, inside tx, the push that replaces message id's
// notification on its recipients' browsers after it was answered or its
// approval resolved: only when it was pushed (not muted) and a recipient
// has an active web device, so most answers cost one indexed look.
func (s *Store) queueUpdatePush(tx *writeTx, id string) error {
	res, err := tx.Exec(`INSERT INTO push_jobs (message_id, kind, next_attempt_at)
		SELECT m.id, 'update', CAST(?2 AS BIGINT) FROM messages m WHERE m.id = ?1 AND m.muted = 0 AND EXISTS (
			SELECT 1 FROM devices d WHERE d.active = 1 AND d.platform = 'web' AND d.user_id IN (
				SELECT c.user_id FROM channels c WHERE c.id = m.channel_id
				UNION SELECT a.user_id FROM message_approvers a WHERE a.message_id = m.id))`, id, ms(s.now()))
	if err != nil {
		return fmt.Errorf("queue update push: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		s.wake.mark(TopicPush)
	}
	return nil
}
