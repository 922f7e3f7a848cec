//go:build pprof

// Profiling endpoints for performance work, compiled in only with
// `go build -tags pprof`: HERALD_PPROF=127.0.0.1:6060 serves net/http/pprof
// there. Release builds carry none of this.
package cli

import (
	"log/slog"
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	addr := os.Getenv("HERALD_PPROF")
	if addr == "" {
		return
	}
	go func() {
		slog.Warn("pprof listening", "addr", addr)
		if err := http.ListenAndServe(addr, nil); err != nil {
			slog.Error("pprof", "err", err)
		}
	}()
}
