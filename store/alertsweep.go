package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// AlertSweep is what one round of SweepAlerts did.
type AlertSweep struct {
	Claimed   int // alerts that were due
	Repeated  int // repeats queued
	Escalated int // people reached by escalation
	Expired   int // alerts that expired
}

// The SQL of an alert's next times as of ?1 (now), from its row as it was:
// the next repeat on the alert's own grid, after now (a sweep that comes
// late sends one repeat, not one per interval missed); the next level one
// escalation interval after the last; and the earliest of these and the
// expiry, when the alert is due next.
const (
	alertNextRepeat = `(CASE WHEN next_repeat_at <= ?1 THEN next_repeat_at + repeat_ms * ((?1 - next_repeat_at) / repeat_ms + 1)
		ELSE next_repeat_at END)`
	alertNextEscalation = `(CASE WHEN next_escalation_at <= ?1 THEN next_escalation_at + escalate_ms ELSE next_escalation_at END)`
)

// alertClaimSQL claims up to ?2 alerts due at ?1 in one statement, and
// moves each on: an alert past its expiry expires; else a due repeat is
// counted and the next one scheduled, and a due level is reached and the
// next one scheduled. last_repeat_at and last_escalation_at are set to ?1
// on what this claim did, which RETURNING reports. {lock} locks the
// claimed rows on PostgreSQL and passes over those another replica holds;
// the outer condition is checked again on the row as committed, so that
// two replicas never move the same alert on from the same state.
var alertClaimSQL = strings.NewReplacer("{due}", `(CASE WHEN COALESCE({esc}, expire_at) < {rep}
		THEN (CASE WHEN COALESCE({esc}, expire_at) < expire_at THEN COALESCE({esc}, expire_at) ELSE expire_at END)
		ELSE (CASE WHEN {rep} < expire_at THEN {rep} ELSE expire_at END) END)`).Replace(`UPDATE alerts SET
	state = CASE WHEN expire_at <= ?1 THEN 'expired' ELSE state END,
	resolved_at = CASE WHEN expire_at <= ?1 THEN ?1 ELSE resolved_at END,
	repeats = repeats + CASE WHEN expire_at > ?1 AND next_repeat_at <= ?1 THEN 1 ELSE 0 END,
	last_repeat_at = CASE WHEN expire_at > ?1 AND next_repeat_at <= ?1 THEN ?1 ELSE last_repeat_at END,
	next_repeat_at = {rep},
	level = level + CASE WHEN expire_at > ?1 AND next_escalation_at <= ?1 THEN 1 ELSE 0 END,
	last_escalation_at = CASE WHEN expire_at > ?1 AND next_escalation_at <= ?1 THEN ?1 ELSE last_escalation_at END,
	next_escalation_at = {esc},
	due_at = {due}
	WHERE state = 'active' AND due_at <= ?1 AND message_id IN (
		SELECT message_id FROM alerts WHERE state = 'active' AND due_at <= ?1 ORDER BY due_at LIMIT ?2{lock})
	RETURNING message_id, state, COALESCE(last_repeat_at, 0), COALESCE(last_escalation_at, 0), level`)

// claimedAlert is one alert a claim moved on.
type claimedAlert struct {
	id                  string
	state               string
	repeated, escalated bool
	level               int
}

// SweepAlerts moves on up to n alerts due at now, in one write: their
// repeats are queued as push jobs to everyone the alert reached, a level
// reached adds its person to the alert (and to the message's readers) and
// pushes to their devices, and an expired alert's sender is told through
// notice. Everything is in the database: a process killed at any point
// leaves each alert either moved on with its pushes queued or not at all,
// and another replica's sweep passes over the alerts this one holds.
func (s *Store) SweepAlerts(ctx context.Context, now time.Time, n int, notice AlertNotice) (AlertSweep, error) {
	var out AlertSweep
	q := strings.NewReplacer("{rep}", alertNextRepeat, "{esc}", alertNextEscalation, "{lock}", s.dialect.skipLocked()).
		Replace(alertClaimSQL)
	err := s.update(ctx, func(tx *writeTx) error {
		out = AlertSweep{}
		claimed, err := claimAlerts(tx, q, now, n)
		if err != nil {
			return err
		}
		out.Claimed = len(claimed)
		for _, c := range claimed {
			if err := s.moveAlert(tx, c, now, notice, &out); err != nil {
				return fmt.Errorf("alert of %s: %w", c.id, err)
			}
		}
		return nil
	})
	if err != nil {
		return AlertSweep{}, fmt.Errorf("store: sweep alerts: %w", err)
	}
	return out, nil
}

func claimAlerts(tx *writeTx, q string, now time.Time, n int) ([]claimedAlert, error) {
	rows, err := tx.Query(q, ms(now), n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []claimedAlert
	for rows.Next() {
		var c claimedAlert
		var repeated, escalated int64
		if err := rows.Scan(&c.id, &c.state, &repeated, &escalated, &c.level); err != nil {
			return nil, err
		}
		c.repeated, c.escalated = c.state == AlertActive && repeated == ms(now), c.state == AlertActive && escalated == ms(now)
		out = append(out, c)
	}
	return out, rows.Err()
}

// moveAlert does, inside tx, what the claim decided for one alert.
func (s *Store) moveAlert(tx *writeTx, c claimedAlert, now time.Time, notice AlertNotice, out *AlertSweep) error {
	if c.state == AlertExpired {
		out.Expired++
		if _, err := s.noticeAlert(tx, c.id, AlertEventExpired, now, notice); err != nil {
			return err
		}
		if err := s.insertEvent(tx, EventUpdated, c.id); err != nil {
			return err
		}
		return s.queueUpdatePush(tx, c.id)
	}
	if c.repeated {
		// A fan-out, as the first push: everyone the alert reached.
		if _, err := tx.Exec(`INSERT INTO push_jobs (message_id, next_attempt_at) VALUES (?, ?)`, c.id, ms(now)); err != nil {
			return err
		}
		s.wake.mark(TopicPush)
		out.Repeated++
	}
	if !c.escalated {
		return nil
	}
	reached, err := s.escalate(tx, c, now)
	if err != nil || !reached {
		return err
	}
	out.Escalated++
	return nil
}

// escalate reaches the person of level c.level inside tx: the c.level-th
// of the channel's escalation contacts who accepted, the owner left out.
// They join the alert's recipients and the message's readers, get its
// stream event and, unless the alert's repeat just went to everyone, a
// push to each of their devices. When nobody is left to reach, the alert
// stops escalating; reached is false.
func (s *Store) escalate(tx *writeTx, c claimedAlert, now time.Time) (reached bool, err error) {
	var userID string
	err = tx.QueryRow(`SELECT e.user_id FROM messages m JOIN channels c ON c.id = m.channel_id
		JOIN channel_escalations e ON e.channel_id = m.channel_id
		WHERE m.id = ? AND e.state = 'accepted' AND e.user_id IS NOT NULL AND e.user_id <> c.user_id
		ORDER BY e.position LIMIT 1 OFFSET ?`, c.id, c.level-1).Scan(&userID)
	if err := notFound(err); err == ErrNotFound {
		// The list ends here: no further level, and this one not reached.
		_, err := tx.Exec(`UPDATE alerts SET level = level - 1, last_escalation_at = NULL, next_escalation_at = NULL,
			due_at = CASE WHEN next_repeat_at < expire_at THEN next_repeat_at ELSE expire_at END WHERE message_id = ?`, c.id)
		return false, err
	} else if err != nil {
		return false, err
	}
	at := ms(now)
	res, err := tx.Exec(`INSERT INTO alert_recipients (message_id, user_id, level, alerted_at)
		VALUES (?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT)) ON CONFLICT DO NOTHING`, c.id, userID, c.level, at)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil // reached already (an approver of the message)
	}
	if _, err := tx.Exec(`INSERT INTO message_approvers (user_id, channel_id, position, message_id)
		SELECT CAST(?1 AS TEXT), m.channel_id, m.rowid, m.id FROM messages m WHERE m.id = ?2
		ON CONFLICT DO NOTHING`, userID, c.id); err != nil {
		return false, err
	}
	if _, err := tx.Exec(`INSERT INTO events (user_id, type, message_id, channel_id, created_at, sequence_id)
		SELECT CAST(?1 AS TEXT), ?2, m.id, m.channel_id, CAST(?3 AS BIGINT), m.sequence_id FROM messages m WHERE m.id = ?4`,
		userID, EventCreated, at, c.id); err != nil {
		return false, err
	}
	s.wake.mark(TopicEvents)
	if c.repeated {
		return true, nil
	}
	if _, err := tx.Exec(`INSERT INTO push_jobs (message_id, device_id, attempts, next_attempt_at, kind, owner_id)
		SELECT ?1, d.id, 0, CAST(?2 AS BIGINT), ?3, d.user_id FROM devices d WHERE d.user_id = ?4 AND d.active = 1`,
		c.id, at, PushMessage, userID); err != nil {
		return false, err
	}
	s.wake.mark(TopicPush)
	return true, nil
}

// forgetEscalated takes off userID's list, inside tx, the messages of
// channelID that reached them by escalation only: they declined to be
// reached.
func (s *Store) forgetEscalated(tx *writeTx, userID, channelID string) error {
	_, err := tx.Exec(`DELETE FROM message_approvers WHERE user_id = ?1 AND channel_id = ?2
		AND message_id IN (SELECT message_id FROM alert_recipients WHERE user_id = ?1 AND level > 0)
		AND NOT EXISTS (SELECT 1 FROM channel_approvers WHERE channel_id = ?2 AND user_id = ?1 AND state = 'accepted')`,
		userID, channelID)
	return err
}
