package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Rate limits shared by replicas. On SQLite one process serves, and its
// limits live in its memory (package ratelimit). On PostgreSQL several
// replicas serve the same channels, so each limit is one row that every
// replica's takes update: a token bucket refilled by the time between
// takes. A take is one statement, committed on its own without waiting for
// the WAL flush (a take lost in a crash is one the limit forgets) and
// beside the writer rather than in its batches: PostgreSQL's row lock
// orders the takes of one bucket.

// errPostgresOnly refuses what only a shared database needs.
var errPostgresOnly = errors.New("store: shared rate limits live in PostgreSQL only")

// takeBucket spends one token of a bucket, creating it full. avail is what
// the bucket holds now: what it held, adjusted by a change of its size (the
// tokens already used count against the new size, down to empty), plus what
// the time since its last take refilled, at most its size. As package
// ratelimit's buckets do.
const takeBucket = `INSERT INTO rate_buckets AS b (key, tokens, per_minute, updated_at, took)
	VALUES (?1, CAST(?2 AS DOUBLE PRECISION) - 1, ?2, ?3, 1)
	ON CONFLICT (key) DO UPDATE SET
		tokens = CASE WHEN ` + availTokens + ` >= 1 THEN ` + availTokens + ` - 1 ELSE ` + availTokens + ` END,
		took = CASE WHEN ` + availTokens + ` >= 1 THEN 1 ELSE 0 END,
		per_minute = excluded.per_minute,
		updated_at = GREATEST(b.updated_at, excluded.updated_at)
	RETURNING tokens, took`

const availTokens = `LEAST(excluded.per_minute, GREATEST(0, b.tokens + (excluded.per_minute - b.per_minute))
	+ GREATEST(0, excluded.updated_at - b.updated_at) * excluded.per_minute / 60000.0)`

// TakeRateToken spends one token of key's shared bucket of perMinute
// tokens a minute. ok tells whether there was one; tokens is what is left.
func (s *Store) TakeRateToken(ctx context.Context, key string, perMinute int) (tokens float64, ok bool, err error) {
	if !s.pg {
		return 0, false, errPostgresOnly
	}
	var took int
	if err := s.limits.QueryRowContext(ctx, takeBucket, key, perMinute, ms(s.now())).Scan(&tokens, &took); err != nil {
		return 0, false, fmt.Errorf("store: take rate token: %w", err)
	}
	return tokens, took == 1, nil
}

// SweepRateBuckets deletes the shared buckets untouched for over a minute:
// full again by then, they are the same as none.
func (s *Store) SweepRateBuckets(ctx context.Context) (int64, error) {
	if !s.pg {
		return 0, nil
	}
	return s.sweep(ctx, "sweep rate buckets", "DELETE FROM rate_buckets WHERE updated_at < ?", ms(s.now().Add(-time.Minute-time.Second)))
}
