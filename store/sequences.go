package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// EventCleared is the stream event of a sequence whose notifications were
// read and dismissed (ntfy's message_clear): its message is the
// sequence's newest.
const EventCleared = "message.cleared"

// TopicScheduled is woken when a scheduled message is stored.
const TopicScheduled = "scheduled"

// sequenceMessages lists the ids of a channel's messages in sequence seq
// that also meet cond (SQL on the messages table, "" for none).
func sequenceMessages(tx *writeTx, channelID, seq, cond string) ([]string, error) {
	rows, err := tx.Query("SELECT id FROM messages WHERE channel_id = ? AND sequence_id = ?"+cond+" ORDER BY rowid",
		channelID, seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// deleteMessages deletes messages inside tx, each with its
// message.deleted event.
func (s *Store) deleteMessages(tx *writeTx, ids []string) error {
	for _, id := range ids {
		if err := s.insertEvent(tx, EventDeleted, id); err != nil {
			return err
		}
		if _, err := tx.Exec("DELETE FROM messages WHERE id = ?", id); err != nil {
			return err
		}
	}
	return nil
}

// deleteScheduled deletes the messages of a sequence still waiting to be
// delivered: a newer message of the sequence replaces them (ntfy's dead
// man's switch).
func (s *Store) deleteScheduled(tx *writeTx, channelID, seq string) error {
	ids, err := sequenceMessages(tx, channelID, seq, " AND deliver_at IS NOT NULL")
	if err != nil {
		return fmt.Errorf("scheduled of sequence: %w", err)
	}
	return s.deleteMessages(tx, ids)
}

// DeleteSequence deletes every message of a channel's sequence, each with
// its message.deleted event, and returns how many it deleted.
func (s *Store) DeleteSequence(ctx context.Context, channelID, seq string) (int, error) {
	var n int
	err := s.update(ctx, func(tx *writeTx) error {
		ids, err := sequenceMessages(tx, channelID, seq, "")
		if err != nil {
			return err
		}
		n = len(ids)
		return s.deleteMessages(tx, ids)
	})
	if err != nil {
		return 0, fmt.Errorf("store: delete sequence: %w", err)
	}
	return n, nil
}

// ClearSequence records that a channel's sequence was read and dismissed:
// a message.cleared event for its newest delivered message, whose id it
// returns. A sequence with no delivered message is ErrNotFound.
func (s *Store) ClearSequence(ctx context.Context, channelID, seq string) (string, error) {
	var id string
	err := s.update(ctx, func(tx *writeTx) error {
		err := tx.QueryRow(`SELECT id FROM messages WHERE channel_id = ? AND sequence_id = ? AND deliver_at IS NULL
			ORDER BY rowid DESC LIMIT 1`, channelID, seq).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		return s.insertEvent(tx, EventCleared, id)
	})
	if err != nil {
		return "", fmt.Errorf("store: clear sequence: %w", err)
	}
	return id, nil
}

// ReleaseScheduled delivers the scheduled messages due at now: one
// statement a batch sets their deliver_at to NULL, and the
// messages_released trigger records their stream events and push jobs
// (migration 0026). On PostgreSQL the batch locks its rows and skips
// those another replica holds, and the outer condition is checked again
// on the row as committed, so that no message is released twice.
func (s *Store) ReleaseScheduled(ctx context.Context, now time.Time) (int64, error) {
	q := `UPDATE messages SET deliver_at = NULL WHERE deliver_at <= ? AND rowid IN (
		SELECT rowid FROM messages WHERE deliver_at <= ? ORDER BY deliver_at LIMIT ?` + s.dialect.skipLocked() + ")"
	return s.sweepBatchesWaking(ctx, "release scheduled messages", []string{TopicEvents, TopicPush}, q,
		ms(now), ms(now))
}

// NextScheduled returns when the earliest scheduled message is due.
func (s *Store) NextScheduled(ctx context.Context) (time.Time, bool, error) {
	var next sql.NullInt64
	err := s.read.QueryRowContext(ctx, "SELECT MIN(deliver_at) FROM messages WHERE deliver_at IS NOT NULL").Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: next scheduled: %w", err)
	}
	return fromMS(next.Int64), next.Valid, nil
}

// DeleteDeliveredEphemeral deletes the ephemeral messages created before
// cutoff whose push is done (no push job left for them).
func (s *Store) DeleteDeliveredEphemeral(ctx context.Context, cutoff time.Time) (int64, error) {
	return s.sweepBatches(ctx, "delete delivered ephemeral messages", `DELETE FROM messages WHERE rowid IN (
		SELECT m.rowid FROM messages m WHERE m.ephemeral = 1 AND m.created_at < ?
		AND NOT EXISTS (SELECT 1 FROM push_jobs j WHERE j.message_id = m.id) LIMIT ?)`, ms(cutoff))
}
