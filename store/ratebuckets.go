package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Rate limits shared by replicas. On SQLite one process serves, and its
// limits live in its memory (package ratelimit). On PostgreSQL several
// replicas serve the same channels, so each limit is one row that every
// replica's takes update: a token bucket refilled by the time between
// takes. PostgreSQL's row lock orders the takes of one bucket.
//
// Takes are grouped as writes are: one goroutine (takeLoop) takes every
// token asked for while its last statement ran, all keys in one statement,
// committed on its own without waiting for the WAL flush (a take lost in a
// crash is one the limit forgets) and beside the writer rather than in its
// batches. One statement a take cost more than the send it limited: at 32
// connections sending to one channel each take waited for the row lock
// of the one before it.

// errPostgresOnly refuses what only a shared database needs.
var errPostgresOnly = errors.New("store: shared rate limits live in PostgreSQL only")

// takeBuckets spends tokens of several buckets, creating each one full:
// for key ?1[i], of size ?2[i] tokens a minute, up to ?4[i] tokens, at
// most its size. avail is what a bucket holds now: what it held, adjusted
// by a change of its size (the tokens already used count against the new
// size, down to empty), plus what the time since its last take refilled,
// at most its size. As package ratelimit's buckets do, one take at a time:
// of n takes, the first floor(avail) get a token. took is how many did;
// tokens is what is left after them.
//
// excluded.took carries the tokens asked for into the update, as
// LEAST(n, size): a bucket never holds more than its size, so no more can
// be taken.
const takeBuckets = `INSERT INTO rate_buckets AS b (key, tokens, per_minute, updated_at, took)
	SELECT k, size - LEAST(n, size), size, ?3, LEAST(n, size)
		FROM unnest(CAST(?1 AS TEXT[]), CAST(?2 AS BIGINT[]), CAST(?4 AS BIGINT[])) AS t(k, size, n)
	ON CONFLICT (key) DO UPDATE SET
		tokens = ` + availTokens + ` - LEAST(excluded.took, FLOOR(` + availTokens + `)),
		took = LEAST(excluded.took, FLOOR(` + availTokens + `)),
		per_minute = excluded.per_minute,
		updated_at = GREATEST(b.updated_at, excluded.updated_at)
	RETURNING key, tokens, took`

const availTokens = `LEAST(excluded.per_minute, GREATEST(0, b.tokens + (excluded.per_minute - b.per_minute))
	+ GREATEST(0, excluded.updated_at - b.updated_at) * excluded.per_minute / 60000.0)`

// takeTimeout bounds one statement of takes: a caller whose database does
// not answer falls back to its own replica's limit (server/ratelimit.go).
const takeTimeout = 5 * time.Second

// maxTakes bounds how many takes share one statement.
const maxTakes = 512

// takeReq is one take waiting for takeLoop.
type takeReq struct {
	key       string
	perMinute int
	done      chan takeResult // buffered: takeLoop never waits for a caller
}

type takeResult struct {
	tokens float64
	ok     bool
	err    error
}

// TakeRateToken spends one token of key's shared bucket of perMinute
// tokens a minute. ok tells whether there was one; tokens is what is left.
// A caller that gives up returns at once; its take may still be spent.
func (s *Store) TakeRateToken(ctx context.Context, key string, perMinute int) (tokens float64, ok bool, err error) {
	if !s.dialect.replicas() {
		return 0, false, errPostgresOnly
	}
	req := &takeReq{key: key, perMinute: perMinute, done: make(chan takeResult, 1)}
	select {
	case s.takes <- req:
	case <-s.stop:
		return 0, false, ErrClosed
	case <-ctx.Done():
		return 0, false, ctx.Err()
	}
	select {
	case r := <-req.done:
		return r.tokens, r.ok, r.err
	case <-ctx.Done():
		return 0, false, ctx.Err()
	}
}

// takeLoop runs every take queued while its last statement ran in one
// statement, until the store closes.
func (s *Store) takeLoop() {
	defer close(s.taking)
	var next []*takeReq // takes left for the next statement
	for {
		if len(next) == 0 {
			select {
			case req := <-s.takes:
				next = append(next, req)
			case <-s.stop:
				s.refuseTakes()
				return
			}
		}
	queued:
		for len(next) < maxTakes {
			select {
			case req := <-s.takes:
				next = append(next, req)
			default:
				break queued
			}
		}
		next = s.runTakes(next)
	}
}

// refuseTakes answers the takes queued at Close.
func (s *Store) refuseTakes() {
	for {
		select {
		case req := <-s.takes:
			req.done <- takeResult{err: ErrClosed}
		default:
			return
		}
	}
}

// runTakes takes tokens for reqs in one statement and answers each, in
// order within a key. A key asked for with two sizes (its plan changed) is
// updated once a statement: the takes of its second size are returned for
// the next statement.
func (s *Store) runTakes(reqs []*takeReq) (later []*takeReq) {
	type bucket struct {
		size int
		reqs []*takeReq
	}
	buckets := map[string]*bucket{}
	for _, r := range reqs {
		b := buckets[r.key]
		if b == nil {
			b = &bucket{size: r.perMinute}
			buckets[r.key] = b
		}
		if b.size != r.perMinute || len(later) > 0 && slices.ContainsFunc(later, func(l *takeReq) bool { return l.key == r.key }) {
			later = append(later, r)
			continue
		}
		b.reqs = append(b.reqs, r)
	}
	// Keys in order, so that two replicas' statements lock shared rows in
	// the same order and never wait on each other in a cycle.
	keys := make([]string, 0, len(buckets))
	for k := range buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	sizes, counts := make([]int64, len(keys)), make([]int64, len(keys))
	for i, k := range keys {
		sizes[i], counts[i] = int64(buckets[k].size), int64(len(buckets[k].reqs))
	}

	fail := func(err error) []*takeReq {
		for _, b := range buckets {
			for _, r := range b.reqs {
				r.done <- takeResult{err: err}
			}
		}
		return later
	}
	ctx, cancel := context.WithTimeout(context.Background(), takeTimeout)
	defer cancel()
	rows, err := s.limits.QueryContext(ctx, takeBuckets, keys, sizes, ms(s.now()), counts)
	if err != nil {
		return fail(fmt.Errorf("store: take rate tokens: %w", err))
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var left float64
		var took int
		if err := rows.Scan(&key, &left, &took); err != nil {
			return fail(fmt.Errorf("store: take rate tokens: %w", err))
		}
		b := buckets[key]
		if b == nil {
			continue
		}
		avail := left + float64(took)
		for i, r := range b.reqs {
			n := min(i+1, took)
			r.done <- takeResult{tokens: avail - float64(n), ok: i < took}
		}
		delete(buckets, key)
	}
	if err := rows.Err(); err != nil {
		return fail(fmt.Errorf("store: take rate tokens: %w", err))
	}
	if len(buckets) > 0 {
		return fail(errors.New("store: take rate tokens: a bucket missing from the answer"))
	}
	return later
}

// SweepRateBuckets deletes the shared buckets untouched for over a minute:
// full again by then, they are the same as none.
func (s *Store) SweepRateBuckets(ctx context.Context) (int64, error) {
	if !s.dialect.replicas() {
		return 0, nil
	}
	return s.sweep(ctx, "sweep rate buckets", "DELETE FROM rate_buckets WHERE updated_at < ?", ms(s.now().Add(-time.Minute-time.Second)))
}
