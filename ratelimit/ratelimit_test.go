package ratelimit

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// newTestLimiter is a limiter on a clock that moves only when told.
func newTestLimiter() (*Limiter, *testkit.Clock) {
	c := testkit.NewClockAt(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	return New(c.Now), c
}

// want checks every field of a verdict.
func want(t *testing.T, step string, got Verdict, ok bool, limit, remaining int, reset time.Time, retryAfter time.Duration) {
	t.Helper()
	if got.OK != ok || got.Limit != limit || got.Remaining != remaining || !got.Reset.Equal(reset) || got.RetryAfter != retryAfter {
		t.Errorf("%s: got %+v, want ok=%v limit=%d remaining=%d reset=%s retryAfter=%s",
			step, got, ok, limit, remaining, reset, retryAfter)
	}
}

// TestTakeDrainsAndRefills: 3 a minute is one token every 20 s, up to 3.
func TestTakeDrainsAndRefills(t *testing.T) {
	l, c := newTestLimiter()
	t0 := c.Now()
	want(t, "take 1", l.Take("k", 3), true, 3, 2, t0.Add(20*time.Second), 0)
	want(t, "take 2", l.Take("k", 3), true, 3, 1, t0.Add(40*time.Second), 0)
	want(t, "take 3", l.Take("k", 3), true, 3, 0, t0.Add(60*time.Second), 0)
	want(t, "take 4", l.Take("k", 3), false, 3, 0, t0.Add(60*time.Second), 20*time.Second)

	// Half a token later: still refused, and the wait is the other half.
	c.Advance(10 * time.Second)
	want(t, "after 10s", l.Take("k", 3), false, 3, 0, t0.Add(60*time.Second), 10*time.Second)
	// A whole token later: one more goes through.
	c.Advance(10 * time.Second)
	want(t, "after 20s", l.Take("k", 3), true, 3, 0, t0.Add(80*time.Second), 0)

	// A full minute idle refills the bucket completely, and no further.
	c.Advance(10 * time.Minute)
	t1 := c.Now()
	want(t, "after 10 min", l.Take("k", 3), true, 3, 2, t1.Add(20*time.Second), 0)
}

// TestTakeKeysAreSeparate: one key's bucket does not drain another's.
func TestTakeKeysAreSeparate(t *testing.T) {
	l, c := newTestLimiter()
	l.Take("a", 1)
	if v := l.Take("a", 1); v.OK {
		t.Fatalf("second take of a 1-a-minute bucket: %+v, want refused", v)
	}
	want(t, "other key", l.Take("b", 1), true, 1, 0, c.Now().Add(time.Minute), 0)
	if got := l.Size(); got != 2 {
		t.Errorf("Size = %d, want 2", got)
	}
}

// TestTakePlanChange: what was used carries over to the new limit.
func TestTakePlanChange(t *testing.T) {
	cases := []struct {
		name          string
		from, used    int
		to            int
		ok            bool
		wantRemaining int
	}{
		{"upgrade with all used", 3, 3, 10, true, 6},
		{"upgrade with one used", 3, 1, 10, true, 8},
		{"upgrade with none used", 3, 0, 10, true, 9},
		{"downgrade with fewer used than the new limit", 10, 2, 3, true, 0},
		{"downgrade with more used than the new limit", 10, 5, 3, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := newTestLimiter()
			for i := range tc.used {
				if v := l.Take("k", tc.from); !v.OK {
					t.Fatalf("take %d at %d a minute refused", i+1, tc.from)
				}
			}
			v := l.Take("k", tc.to)
			if v.OK != tc.ok || v.Limit != tc.to || v.Remaining != tc.wantRemaining {
				t.Errorf("after %d of %d used, a take at %d a minute: %+v, want ok=%v remaining=%d",
					tc.used, tc.from, tc.to, v, tc.ok, tc.wantRemaining)
			}
			if got := l.Size(); got != 1 {
				t.Errorf("Size = %d, want 1: a plan change keeps the bucket", got)
			}
		})
	}
}

// TestTakePlanChangeAfterRefill: tokens refilled before the change are not
// counted as used.
func TestTakePlanChangeAfterRefill(t *testing.T) {
	l, c := newTestLimiter()
	for range 3 {
		l.Take("k", 3)
	}
	c.Advance(30 * time.Second) // 1.5 tokens back: 1.5 used, which counts as 2
	v := l.Take("k", 6)
	if !v.OK || v.Remaining != 3 {
		t.Errorf("take at 6 a minute with 1.5 of 3 used: %+v, want ok with 3 remaining", v)
	}
}

// TestSweepKeepsBucketsInUse: a sweep forgets only the buckets idle for
// over a minute, so it never gives a client back a drained bucket.
func TestSweepKeepsBucketsInUse(t *testing.T) {
	l, c := newTestLimiter()
	l.Take("idle", 1)
	c.Advance(30 * time.Second)
	l.Take("busy", 1)
	if v := l.Take("busy", 1); v.OK {
		t.Fatalf("second take of a 1-a-minute bucket: %+v, want refused", v)
	}
	l.Sweep()
	if got := l.Size(); got != 2 {
		t.Fatalf("after a sweep with both buckets used within the minute: Size = %d, want 2", got)
	}
	if v := l.Take("busy", 1); v.OK {
		t.Fatalf("a drained bucket was refilled by a sweep: %+v", v)
	}

	// "idle" was last used exactly 61 s before the next sweep: kept.
	c.Advance(31 * time.Second)
	l.Sweep()
	if got := l.Size(); got != 2 {
		t.Fatalf("a bucket idle for exactly 61 s was swept: Size = %d, want 2", got)
	}
	// A moment later it goes; "busy", used 31 s ago, stays drained.
	c.Advance(time.Nanosecond)
	l.Sweep()
	if got := l.Size(); got != 1 {
		t.Fatalf("after the idle bucket's time: Size = %d, want 1", got)
	}
	if v := l.Take("busy", 1); v.OK {
		t.Errorf("the busy bucket was reset by the sweep: %+v", v)
	}
	want(t, "idle key after eviction", l.Take("idle", 1), true, 1, 0, c.Now().Add(time.Minute), 0)
}

// TestSweepForgetsIdleBuckets: memory follows active keys.
func TestSweepForgetsIdleBuckets(t *testing.T) {
	l, c := newTestLimiter()
	for i := range 100 {
		l.Take(fmt.Sprint("key", i), 60)
	}
	c.Advance(2 * time.Minute)
	l.Sweep()
	if got := l.Size(); got != 0 {
		t.Errorf("Size after every bucket sat idle for 2 minutes = %d, want 0", got)
	}
}
