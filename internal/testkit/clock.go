package testkit

import (
	"sync"
	"time"
)

// Clock is a settable clock for the code under test (its Now goes where a
// package takes a `now func() time.Time`): it stands still until the test
// moves it. The code under test reads it from its own goroutines, so it is
// safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a clock that reads start.
func NewClock(start time.Time) *Clock { return &Clock{t: start} }

// NewClockNow is a clock that reads the present, in UTC and to the
// millisecond (what both databases keep of a time), so that a time read
// from it survives a round trip through the store unchanged.
func NewClockNow() *Clock { return NewClock(time.Now().UTC().Truncate(time.Millisecond)) }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}
