package testkit

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// fatals records what Eventually reports instead of ending the test.
type fatals struct{ msgs []string }

func (f *fatals) Helper() {}
func (f *fatals) Fatalf(format string, args ...any) {
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}

// TestEventuallyReturnsOnceMet: a condition met on the fifth call ends the
// wait there, without a failure.
func TestEventuallyReturnsOnceMet(t *testing.T) {
	var calls atomic.Int32
	var f fatals
	Eventually(&f, time.Minute, func() error {
		if n := calls.Add(1); n < 5 {
			return fmt.Errorf("%d calls", n)
		}
		return nil
	})
	if len(f.msgs) != 0 {
		t.Errorf("failed with %q", f.msgs)
	}
	if got := calls.Load(); got != 5 {
		t.Errorf("cond called %d times, want 5", got)
	}
}

// TestEventuallyFailsWithTheLastError: a condition never met fails the
// test once, naming the timeout and what the last call found.
func TestEventuallyFailsWithTheLastError(t *testing.T) {
	var calls int
	var f fatals
	Eventually(&f, 30*time.Millisecond, func() error {
		calls++
		return fmt.Errorf("call %d: %w", calls, errors.New("still 3 rows"))
	})
	if len(f.msgs) != 1 {
		t.Fatalf("failed %d times (%q), want once", len(f.msgs), f.msgs)
	}
	want := fmt.Sprintf("not within 30ms: call %d: still 3 rows", calls)
	if f.msgs[0] != want {
		t.Errorf("failure %q, want %q", f.msgs[0], want)
	}
	if calls < 2 {
		t.Errorf("cond called %d times in 30ms, want it polled", calls)
	}
}

// TestClock: the clock stands still until moved, by Advance or Set.
func TestClock(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := NewClockAt(start)
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("Now() = %s, want %s", got, start)
	}
	c.Advance(90 * time.Second)
	if got, want := c.Now(), start.Add(90*time.Second); !got.Equal(want) {
		t.Errorf("after Advance(90s) Now() = %s, want %s", got, want)
	}
	later := start.Add(48 * time.Hour)
	c.Set(later)
	if got := c.Now(); !got.Equal(later) {
		t.Errorf("after Set Now() = %s, want %s", got, later)
	}
	now := NewClock().Now()
	if now.Location() != time.UTC || now.Nanosecond()%int(time.Millisecond) != 0 {
		t.Errorf("NewClock reads %s, want UTC to the millisecond", now)
	}
	if d := time.Since(now); d < 0 || d > time.Minute {
		t.Errorf("NewClock reads %s, %s from now", now, d)
	}
}
