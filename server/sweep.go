package server

import (
	"context"
	"time"
)

// eventHistory is how far back a live stream can resume with Last-Event-ID.
const eventHistory = 24 * time.Hour

// sweep does the periodic clean-up: responses not read in time expire,
// messages past retention go, subscriptions past their end date end (and
// with them the pro plan), and dead sessions go.
func (s *Server) sweep(ctx context.Context) {
	now, start := s.now(), time.Now()
	if n, err := s.st.ExpireResponses(ctx, s.expireBefore()); err != nil {
		s.log.Warn("sweep: expire responses", "err", err)
	} else if n > 0 {
		s.log.Debug("sweep: expired responses", "count", n)
	}
	deleted, err := s.st.DeleteMessagesBefore(ctx, now.Add(-s.cfg.Retention.Messages.Duration))
	if err != nil {
		s.log.Warn("sweep: delete old messages", "err", err)
	} else if deleted > 0 {
		s.log.Info("sweep: deleted messages past retention", "count", deleted)
	}
	events, err := s.st.DeleteEventsBefore(ctx, now.Add(-eventHistory))
	if err != nil {
		s.log.Warn("sweep: events", "err", err)
	}
	if n, err := s.st.ExpireSubscriptions(ctx, proPlan, s.cfg.DefaultPlan); err != nil {
		s.log.Warn("sweep: subscriptions", "err", err)
	} else if n > 0 {
		s.log.Info("sweep: subscriptions ended", "count", n)
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
