package store

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
)

// BenchmarkCreateMessage measures the durable insert of the send path
// (synchronous=full) from many goroutines at once, which is what group
// commit is for; compare -cpu values and the serial run. cpu-ns/op is the
// process's CPU time (user and system) per message, which moves less than
// ns/op when something else loads the machine.
func BenchmarkCreateMessage(b *testing.B) {
	for _, mode := range []string{"full", "normal"} {
		b.Run("synchronous="+mode, func(b *testing.B) {
			ctx := context.Background()
			st, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"), Options{Synchronous: mode})
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
			actions := json.RawMessage(`[{"type":"button","key":"ok","label":"OK"}]`)
			b.SetParallelism(16) // 16 goroutines per CPU: concurrent sends
			b.ResetTimer()
			cpu, cpuOK := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					m := &Message{ChannelID: ch.ID, Title: "Backup finished", Body: "**42 GB** in 3 minutes",
						Priority: "normal", Actions: actions}
					if err := st.CreateMessage(ctx, m); err != nil {
						b.Error(err)
						return
					}
				}
			})
			if after, ok := processCPU(); ok && cpuOK {
				b.ReportMetric(float64(after-cpu)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
