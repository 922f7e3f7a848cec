package server

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestStreamFirstBeatsSpread: 5,000 streams opened at once (clients
// reconnecting after a restart) make their first credential check spread
// over the heartbeat interval, not all together at its end: every first
// check falls within the interval, and no second of it holds much more
// than its share. Computed from the schedule with a seeded source, so no
// clock is involved.
func TestStreamFirstBeatsSpread(t *testing.T) {
	t.Parallel()
	const streams = 5000
	every := heartbeat
	src := rand.New(rand.NewPCG(2026, 11))
	seconds := make([]int, every/time.Second)
	for range streams {
		first := firstBeat(every, src.Int64N)
		if first <= 0 || first > every {
			t.Fatalf("first check after %v, want within (0, %v]", first, every)
		}
		seconds[first.Nanoseconds()*int64(len(seconds))/(every.Nanoseconds()+1)]++
	}
	share := streams / len(seconds)
	if lo, hi := slices.Min(seconds), slices.Max(seconds); lo < share*3/4 || hi > share*5/4 {
		t.Errorf("first checks per second of the interval: %v; want each near %d (%d to %d)", seconds, share, share*3/4, share*5/4)
	}
	if got := firstBeat(every, func(n int64) int64 { return n - 1 }); got != every {
		t.Errorf("the latest first check is after %v, want %v", got, every)
	}
}

// TestStreamFirstHeartbeatFromOffset: a stream's first heartbeat, and
// credential check, comes at the offset its random source picks within
// the interval: here at once, with an hour's interval.
func TestStreamFirstHeartbeatFromOffset(t *testing.T) {
	env := newTestEnv(t)
	env.s.heartbeat.Store(int64(time.Hour))
	var mu sync.Mutex
	var asked []int64
	offset := offsetFunc(func(n int64) int64 {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, n)
		return 0
	})
	env.s.beatOffset.Store(&offset)
	ann := env.newUser("ann@example.com")
	c := streamOpen(env, ann.Token)
	c.waitComment("heartbeat")
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0] != int64(time.Hour) {
		t.Fatalf("offsets asked for %v, want one within an hour (%d)", asked, int64(time.Hour))
	}
}
