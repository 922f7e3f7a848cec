package service

import (
	"context"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/schedule"
	"github.com/heraldhq/herald/store"
)

// Background work of the rules, as scheduled by Schedule.
const (
	// EventHistory is how far back a live stream can resume with
	// Last-Event-ID.
	EventHistory = 24 * time.Hour
	// sweepEvery is how often the sweep runs.
	sweepEvery = 30 * time.Second
	// indexDelay is how long the search indexer lets a burst of sends
	// gather before it indexes them; indexBatch, how many messages one
	// write indexes.
	indexDelay = time.Second
	indexBatch = 5000
	// EphemeralGrace is how long an ephemeral message (ntfy's cache=no)
	// is kept at least: live streams read it after its event, and its
	// push must be done. The sweep deletes it after that.
	EphemeralGrace = time.Minute
)

// Schedule adds the rules' background jobs to sch: the sweep, the
// resolution of approvals at their deadline, and the search indexer.
func (s *Service) Schedule(sch *schedule.Scheduler) {
	sch.Every("sweep", sweepEvery, s.Sweep)
	sch.Loop("approvals", s.runApprovals)
	sch.Loop("scheduled", s.runScheduled)
	sch.Loop("alerts", s.runAlerts)
	sch.Loop("search index", s.runIndexer)
}

// ExpireBefore is the submission time at or before which a stored answer
// has expired unread.
func (s *Service) ExpireBefore() time.Time { return s.now().Add(-s.opts.ResponseTTL) }

// Sweep does the periodic clean-up: answers not read in time expire,
// messages past retention go, stream history past EventHistory goes,
// subscriptions past their end date end (and with them the pro plan), dead
// sessions go, and the space they held is given back.
func (s *Service) Sweep(ctx context.Context) {
	now, start := s.now(), time.Now()
	if n, err := s.st.ExpireResponses(ctx, s.ExpireBefore()); err != nil {
		s.log.Warn("sweep: expire responses", "err", err)
	} else if n > 0 {
		s.log.Debug("sweep: expired responses", "count", n)
	}
	deleted, err := s.st.DeleteMessagesBefore(ctx, now.Add(-s.opts.Retention))
	if err != nil {
		s.log.Warn("sweep: delete old messages", "err", err)
	} else if deleted > 0 {
		s.log.Info("sweep: deleted messages past retention", "count", deleted)
	}
	events, err := s.st.DeleteEventsBefore(ctx, now.Add(-EventHistory))
	if err != nil {
		s.log.Warn("sweep: events", "err", err)
	}
	if n, err := s.st.ExpireSubscriptions(ctx, config.PlanPro, s.opts.DefaultPlan); err != nil {
		s.log.Warn("sweep: subscriptions", "err", err)
	} else if n > 0 {
		s.log.Info("sweep: subscriptions ended", "count", n)
	}
	if n, err := s.st.DeleteDeliveredEphemeral(ctx, now.Add(-EphemeralGrace)); err != nil {
		s.log.Warn("sweep: ephemeral messages", "err", err)
	} else if n > 0 {
		s.log.Debug("sweep: deleted delivered ephemeral messages", "count", n)
	}
	if _, err := s.st.DeleteExpiredSessions(ctx); err != nil {
		s.log.Warn("sweep: sessions", "err", err)
	}
	if deleted+events > 0 {
		pages, err := s.st.ReclaimSpace(ctx)
		if err != nil {
			s.log.Warn("sweep: reclaim space", "err", err)
		}
		s.log.Info("sweep finished", "messages", deleted, "events", events, "pages_reclaimed", pages,
			"took_ms", time.Since(start).Milliseconds())
	}
}

// runApprovals resolves approvals whose window has passed, at their
// deadline: it sleeps until the earliest open deadline or until a new
// approval message is stored. Deadlines are in the database, so a restart
// picks up where it left.
func (s *Service) runApprovals(ctx context.Context) {
	s.untilDue(ctx, store.TopicApprovals, s.st.NextApprovalDeadline, func(ctx context.Context) {
		res, err := s.ExpireApprovals(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Error("approvals: expire", "err", err)
		}
		for _, r := range res {
			s.log.Info("approval window closed", "message", r.MessageID, "status", r.Status, "approvals", r.Approvals)
		}
	})
}

// runScheduled delivers scheduled messages when they are due: it sleeps
// until the earliest is due or until a scheduled message is stored here.
// The times are in the database, so a restart picks up where it left.
func (s *Service) runScheduled(ctx context.Context) {
	s.untilDue(ctx, store.TopicScheduled, s.st.NextScheduled, func(ctx context.Context) {
		if n, err := s.ReleaseScheduled(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("scheduled: release", "err", err)
		} else if n > 0 {
			s.log.Debug("scheduled: released", "count", n)
		}
	})
}

// runAlerts moves urgent messages' alerts on when they are due (repeats,
// escalations, expiries): it sleeps until the earliest is due or until an
// alert is stored here. Everything is in the database, so a restart picks
// up where it left, and replicas share the work (store.SweepAlerts).
func (s *Service) runAlerts(ctx context.Context) {
	s.untilDue(ctx, store.TopicAlerts, s.st.NextAlertDue, func(ctx context.Context) {
		if r, err := s.SweepAlerts(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("alerts: sweep", "err", err)
		} else if r.Claimed > 0 {
			s.log.Debug("alerts: swept", "repeated", r.Repeated, "escalated", r.Escalated, "expired", r.Expired)
		}
	})
}

// untilDue runs work, then sleeps until next says the earliest thing is
// due (at least 10 ms, at most a minute: another replica may have stored
// an earlier one) or until a write here marks topic, and again, until ctx
// ends.
func (s *Service) untilDue(ctx context.Context, topic string, next func(context.Context) (time.Time, bool, error),
	work func(context.Context)) {
	wake := s.st.Wakeup(topic)
	timer := time.NewTimer(time.Hour)
	for {
		work(ctx)
		wait := time.Minute
		if t, ok, err := next(ctx); err == nil && ok {
			wait = min(max(t.Sub(s.now()), 10*time.Millisecond), time.Minute)
		}
		if _, live := schedule.Sleep(ctx, timer, wait, wake); !live {
			return
		}
	}
}

// ReleaseScheduled delivers the scheduled messages that are due: their
// stream events and push jobs are created now.
func (s *Service) ReleaseScheduled(ctx context.Context) (int64, error) {
	return s.st.ReleaseScheduled(ctx, s.now())
}

// runIndexer keeps the search index a moment behind the sends: woken by a
// commit, it waits indexDelay, so that a burst is indexed in a few writes,
// then indexes until it has caught up.
func (s *Service) runIndexer(ctx context.Context) {
	wake, cancel := s.st.Subscribe(store.TopicEvents)
	defer cancel()
	timer := time.NewTimer(time.Hour)
	for {
		for {
			start := time.Now()
			n, err := s.st.IndexForSearch(ctx, indexBatch)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("search: index messages", "err", err)
				}
				break
			}
			if n < indexBatch {
				break
			}
			// A backlog (a sweep's deletes, an upgrade's rebuild) is
			// worked through at half speed, so that it leaves the sends
			// their share of the machine's cores.
			if _, live := schedule.Sleep(ctx, timer, time.Since(start), nil); !live {
				return
			}
		}
		if _, live := schedule.Sleep(ctx, timer, time.Hour, wake); !live {
			return
		}
		if _, live := schedule.Sleep(ctx, timer, indexDelay, nil); !live {
			return
		}
	}
}
