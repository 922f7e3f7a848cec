package testkit

import (
	"sync"
	"time"
)

// Clock is a test clock: it starts where NewClock puts it and moves only
// when told, so that a test decides when lifetimes and deadlines pass.
// Its methods are safe from any goroutine.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at the current time, in UTC, to the
// millisecond (what the store keeps).
func NewClock() *Clock { return &Clock{t: time.Now().UTC().Truncate(time.Millisecond)} }

// Now is the clock's time; pass it where a func() time.Time is wanted.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
