package testkit

import "time"

// NewClockAt returns a clock at start, for a test whose times are fixed
// dates rather than the present.
func NewClockAt(start time.Time) *Clock { return &Clock{t: start} }

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}
