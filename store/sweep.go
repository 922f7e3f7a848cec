package store

import (
	"context"
	"fmt"
	"time"
)

// Sweeps delete or change rows in batches, each its own short write, so
// that sends interleave with a large backlog instead of queueing behind
// one long transaction (which would also grow the WAL without bound). A
// batch's size adapts so that its statement runs about sweepTarget, and
// the sweep rests sweepRest times as long as the whole write took (queue
// and commit included) before the next one, so it takes about a quarter of
// the writer's time, less when sends keep the writer busy. Measured on a
// 2-core machine with 8 senders and a 100,000-message backlog: 1 ms and 3x
// kept the senders' p99 within 2x of no sweep (3.4 ms against 1.6-2.0),
// where 2 ms and 1x gave 8 ms. Resting after the statement's time alone
// was enough while each deleted message also left the search index in
// the same write; without that (search.go) the batches held more rows,
// their commits took longer, and the senders' p99 during the sweep of a
// 1-million-message backlog rose to 2.0-2.2x (bench/growth).
const (
	sweepTarget   = time.Millisecond
	sweepRest     = 3 // times the batch's own write
	sweepMinBatch = 16
	sweepMaxBatch = 4096
	sweepFirst    = 256
)

// ExpireResponses marks responses submitted at or before cutoff and never
// read as expired, and clears them.
func (s *Store) ExpireResponses(ctx context.Context, cutoff time.Time) (int64, error) {
	return s.sweepBatches(ctx, "expire responses", `UPDATE messages SET state = ?, response = NULL
		WHERE rowid IN (SELECT rowid FROM messages WHERE state = ? AND submitted_at <= ? LIMIT ?)`,
		StateExpired, StateSubmitted, ms(cutoff))
}

// DeleteMessagesBefore deletes messages created before cutoff (retention).
func (s *Store) DeleteMessagesBefore(ctx context.Context, cutoff time.Time) (int64, error) {
	return s.deleteOlder(ctx, "delete old messages", "messages", "rowid", cutoff)
}

// DeleteEventsBefore drops stream history older than cutoff.
func (s *Store) DeleteEventsBefore(ctx context.Context, cutoff time.Time) (int64, error) {
	return s.deleteOlder(ctx, "delete old events", "events", "id", cutoff)
}

// deleteOlder deletes the rows of table created before cutoff, in batches.
// Its key (rowid or id) grows with created_at, so no index on created_at is
// needed: the first row to keep is found once, walking from the oldest, and
// the batches delete from the oldest up to it.
func (s *Store) deleteOlder(ctx context.Context, op, table, key string, cutoff time.Time) (int64, error) {
	var end int64
	if err := s.read.QueryRowContext(ctx, `SELECT COALESCE(
		(SELECT `+key+` FROM `+table+` WHERE created_at >= ? ORDER BY `+key+` LIMIT 1),
		(SELECT MAX(`+key+`) + 1 FROM `+table+`), 0)`, ms(cutoff)).Scan(&end); err != nil {
		return 0, fmt.Errorf("store: %s: %w", op, err)
	}
	return s.sweepBatches(ctx, op, `DELETE FROM `+table+`
		WHERE `+key+` IN (SELECT `+key+` FROM `+table+` WHERE `+key+` < ? ORDER BY `+key+` LIMIT ?)`, end)
}

// DeleteExpiredSessions removes sessions whose refresh token has expired.
func (s *Store) DeleteExpiredSessions(ctx context.Context) (int64, error) {
	return s.sweepBatches(ctx, "sweep sessions", `DELETE FROM sessions
		WHERE rowid IN (SELECT rowid FROM sessions WHERE refresh_expires_at <= ? LIMIT ?)`, ms(s.now()))
}

// sweepBatches runs q, a statement that changes at most as many rows as its
// last argument (a LIMIT the sweep appends), until a batch changes fewer:
// then nothing is left. It returns how many rows changed in all.
func (s *Store) sweepBatches(ctx context.Context, op, q string, args ...any) (int64, error) {
	return s.sweepBatchesWaking(ctx, op, nil, q, args...)
}

// sweepBatchesWaking is sweepBatches for a sweep whose changes concern
// workers or streams: a batch that changed rows wakes topics.
func (s *Store) sweepBatchesWaking(ctx context.Context, op string, topics []string, q string, args ...any) (int64, error) {
	var total int64
	size := int64(sweepFirst)
	rest := time.NewTimer(0)
	defer rest.Stop()
	for {
		var n int64
		var took time.Duration
		write := time.Now()
		err := s.update(ctx, func(tx *writeTx) error {
			start := time.Now()
			res, err := tx.Exec(q, append(args, size)...)
			took = time.Since(start)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			if n > 0 {
				for _, t := range topics {
					s.wake.mark(t)
				}
			}
			return err
		})
		total += n
		if err != nil {
			return total, fmt.Errorf("store: %s: %w", op, err)
		}
		if n < size {
			return total, nil
		}
		switch {
		case took < sweepTarget/2 && size < sweepMaxBatch:
			size *= 2
		case took > sweepTarget*2 && size > sweepMinBatch:
			size /= 2
		}
		// The rest follows the whole write, commit included: a batch of
		// cheap rows still dirties many pages, and its commit is the
		// sends' wait too.
		rest.Reset(time.Since(write) * sweepRest)
		select {
		case <-ctx.Done():
			return total, fmt.Errorf("store: %s: %w", op, ctx.Err())
		case <-rest.C:
		}
	}
}

func (s *Store) sweep(ctx context.Context, op, q string, args ...any) (int64, error) {
	var n int64
	err := s.update(ctx, func(tx *writeTx) error {
		res, err := tx.Exec(q, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: %s: %w", op, err)
	}
	return n, nil
}
