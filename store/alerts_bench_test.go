package store

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// BenchmarkSweepAlerts measures the alert sweep with 1,000 urgent alerts
// active at once, all due together: one op is one sweep round, every
// alert repeated (its push job queued) in writes of 256. It reports the
// CPU time per repeat and the heap that stays in use, which a sweep keeps
// bounded by its batch: no goroutine or memory per alert.
func BenchmarkSweepAlerts(b *testing.B) {
	const alerts, batch = 1000, 256
	ctx := context.Background()
	clock := testkit.NewClock()
	st, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"), Options{Now: clock.Now, Synchronous: "normal"})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	u := &User{Email: "bench@example.com", Plan: "free"}
	if err := st.CreateUser(ctx, u); err != nil {
		b.Fatal(err)
	}
	ch := &Channel{UserID: u.ID, Name: "bench"}
	if err := st.CreateChannel(ctx, ch); err != nil {
		b.Fatal(err)
	}
	for range alerts {
		m := &Message{ChannelID: ch.ID, Title: "disk failing", Priority: "urgent",
			Alert: &NewAlert{Repeat: time.Minute, Expire: 3 * time.Hour}}
		if err := st.CreateMessage(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
	goroutines := runtime.NumGoroutine()
	repeats := 0
	b.ResetTimer()
	for b.Loop() {
		clock.Advance(time.Minute)
		for {
			r, err := st.SweepAlerts(ctx, clock.Now(), batch, nil)
			if err != nil {
				b.Fatal(err)
			}
			repeats += r.Repeated
			if r.Claimed < batch {
				break
			}
		}
		b.StopTimer()
		// The queued pushes are not the sweep's cost: clear them.
		if _, err := st.write.Exec("DELETE FROM push_jobs"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	if repeats != alerts*b.N {
		b.Fatalf("%d repeats in %d rounds, want %d", repeats, b.N, alerts*b.N)
	}
	if n := runtime.NumGoroutine(); n > goroutines+2 {
		b.Fatalf("goroutines grew from %d to %d", goroutines, n)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(repeats), "ns/repeat")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
}
