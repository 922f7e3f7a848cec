package testkit

import (
	"time"
)

// Fataler is the part of testing.TB that Eventually uses.
type Fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Eventually calls cond until it returns nil, and fails the test with
// cond's last error when that has not happened within timeout. It waits a
// millisecond after the first call and twice as long after each next one,
// up to 20 ms, so a condition met soon is seen soon and a slow one is not
// polled harder than it is worth. Like t.Fatalf, it must be called from the
// test's goroutine.
func Eventually(t Fataler, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %v", timeout, err)
			return
		}
		time.Sleep(pause)
		pause = min(2*pause, 20*time.Millisecond)
	}
}
