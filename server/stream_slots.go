package server

import (
	"net/http"
	"sync"

	"github.com/heraldhq/herald/config"
)

// streamRetry is the Retry-After of a stream refused for the cap: the
// time for one of the user's other streams to end is unknown, and a
// client that retries sooner is refused at no cost but a request.
const streamRetry = "10"

// streamSlots counts the live streams each user has open in this process.
// Each replica counts its own: a user's streams spread over N replicas
// may number N times the cap, which still bounds what one process holds.
type streamSlots struct {
	mu   sync.Mutex
	open map[string]int
}

func newStreamSlots() *streamSlots { return &streamSlots{open: map[string]int{}} }

// take holds a stream for userID unless max are open already; it returns
// how many were open before it.
func (c *streamSlots) take(userID string, max int) (open int, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	open = c.open[userID]
	if open >= max {
		return open, false
	}
	c.open[userID] = open + 1
	return open, true
}

// release gives back a stream that take held.
func (c *streamSlots) release(userID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[userID] <= 1 {
		delete(c.open, userID)
		return
	}
	c.open[userID]--
}

// holdStream holds one of the user's live streams for the request, or
// refuses it with 429 when the plan's max_streams are open already. The
// caller calls release when the stream ends.
func (s *Server) holdStream(w http.ResponseWriter, who *principal) (release func(), err error) {
	max := s.cfg.Plans.Limits(who.user.Plan).MaxStreams
	open, ok := s.streamsOpen.take(who.user.ID, max)
	if !ok {
		w.Header().Set("Retry-After", streamRetry)
		return nil, newError(http.StatusTooManyRequests, "rate_limited",
			"you have %d live streams open, the limit of your plan (%s) is %d; close one to open another",
			open, config.EffectivePlan(who.user.Plan), max)
	}
	return func() { s.streamsOpen.release(who.user.ID) }, nil
}
