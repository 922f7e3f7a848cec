package server

import (
	"context"
	"time"

	"github.com/heraldhq/herald/store"
)

// Search indexing: how long the indexer lets a burst of sends gather before
// it indexes them, and how many messages one write indexes.
const (
	indexDelay = 200 * time.Millisecond
	indexBatch = 1000
)

// runIndexer keeps the search index a moment behind the sends: woken by a
// commit, it waits indexDelay, so that a burst is indexed in a few writes,
// then indexes until it has caught up.
func (s *Server) runIndexer(ctx context.Context) {
	wake, cancel := s.st.Subscribe(store.TopicEvents)
	defer cancel()
	delay := time.NewTimer(0)
	defer delay.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-delay.C:
		}
		for {
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
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
		delay.Reset(indexDelay)
	}
}
