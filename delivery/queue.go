// Package delivery works Herald's durable queues: signed callbacks (the
// Queue) and pushes to devices (the Pusher). The server commits each job in
// the same transaction as what caused it (an outbox in the database, SQLite
// or PostgreSQL); this package is the only reader: workers claim due jobs,
// send them, record every attempt, back off, and give a job up after its
// last attempt. On PostgreSQL the workers of every replica share the
// queues: a claim leases a job to one of them.
package delivery

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/store"
)

// Config tunes the queue.
type Config struct {
	Workers int
	Timeout time.Duration // per attempt
	// FirstByte bounds the wait for the receiver's answer to begin, within
	// Timeout; 0: netguard.FirstByteTimeout.
	FirstByte   time.Duration
	BackoffBase time.Duration
	BackoffMax  time.Duration
	MaxAttempts int
	Guard       netguard.Policy // where callbacks may not connect
	UserAgent   string
}

// Queue delivers callbacks.
type Queue struct {
	st      *store.Store
	cfg     Config
	log     *slog.Logger
	now     func() time.Time
	client  *http.Client
	metrics *metrics
	hosts   *circuit // receivers' hosts that keep not answering
}

// Options are the optional parts of a Queue.
type Options struct {
	Logger   *slog.Logger
	Now      func() time.Time
	Registry prometheus.Registerer
	// Transport replaces the guarded transport (tests may add TLS roots; it
	// should still refuse blocked networks).
	Transport http.RoundTripper
}

// New builds a queue over st.
func New(st *store.Store, cfg Config, opts Options) *Queue {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	q := &Queue{st: st, cfg: cfg, log: opts.Logger, now: opts.Now, hosts: newCircuit(opts.Now)}
	// A redirect is an answer, not a hop: 3xx counts as a failed attempt.
	// A receiver that never answers holds a worker for the first-byte
	// bound, not for the whole attempt.
	q.client = cfg.Guard.ClientWith(netguard.Limits{FirstByte: cfg.FirstByte, Total: cfg.Timeout})
	if opts.Transport != nil {
		q.client.Transport = opts.Transport
	}
	q.metrics = newMetrics(opts.Registry, st)
	return q
}

// Backoff is the wait before attempt n+1 after n failed attempts:
// min(base * 2^(n-1), max).
func Backoff(base, maxWait time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n; i++ {
		d *= 2
		if d >= maxWait || d <= 0 {
			return maxWait
		}
	}
	return min(d, maxWait)
}

// leaseFor is how long a claim lasts: long enough for an attempt, after which
// a job whose worker died is taken up again.
func (q *Queue) leaseFor() time.Duration { return 2*q.cfg.Timeout + 30*time.Second }

// Run delivers until ctx ends, then waits for attempts in flight.
func (q *Queue) Run(ctx context.Context) error {
	// Claims of a process that died are free again at once.
	if err := q.st.ReleaseLeases(ctx); err != nil {
		return err
	}
	share := fairShare(q.cfg.Workers)
	p := &pool[store.Delivery]{st: q.st, topic: store.TopicDeliveries, workers: q.cfg.Workers, now: q.now, log: q.log,
		claim: func(ctx context.Context, n int) ([]store.Delivery, error) {
			return q.st.ClaimDeliveriesFair(ctx, n, share, q.leaseFor())
		},
		next: q.st.NextDeliveryAt,
		work: func(ctx context.Context, job store.Delivery) { q.attempt(ctx, &job) },
	}
	p.run(ctx)
	return nil
}
