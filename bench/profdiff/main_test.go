package main

import (
	"strings"
	"testing"
	"time"
)

// traces is the shape of "go tool pprof -traces" output.
const traces = `File: herald
Type: cpu
Duration: 12s, Total samples = 70ms (0.58%)
-----------+-------------------------------------------------------
      30ms   internal/runtime/syscall/linux.Syscall6
             modernc.org/libc.Xfsync
             database/sql.(*Tx).Commit
             github.com/heraldhq/herald/store.(*Store).runBatch
             github.com/heraldhq/herald/store.(*Store).writer
-----------+-------------------------------------------------------
      20ms   encoding/json.(*Decoder).readValue (inline)
             github.com/heraldhq/herald/server.(*Server).handleSend
             net/http.serverHandler.ServeHTTP
             net/http.(*conn).serve
-----------+-------------------------------------------------------
      10ms   runtime.gcDrain
             runtime.gcBgMarkWorker
-----------+-------------------------------------------------------
      10ms   runtime.futex
             runtime.findRunnable
             runtime.schedule
-----------+-------------------------------------------------------
`

func TestParseSortsSamplesIntoParts(t *testing.T) {
	b, err := parse(strings.NewReader(traces), 10)
	if err != nil {
		t.Fatal(err)
	}
	if b.total != 70*time.Millisecond {
		t.Errorf("total = %v, want 70ms", b.total)
	}
	want := map[string]time.Duration{
		"store: the writer (inserts, commits)": 30 * time.Millisecond,
		"HTTP: the handler":                    20 * time.Millisecond,
		"GC (background)":                      10 * time.Millisecond,
		"other":                                10 * time.Millisecond,
	}
	for name, d := range want {
		if b.parts[name] != d {
			t.Errorf("part %q = %v, want %v (all: %v)", name, b.parts[name], d, b.parts)
		}
	}
	if b.flat["encoding/json.(*Decoder).readValue"] != 20*time.Millisecond {
		t.Errorf("flat time of the inlined leaf: %v", b.flat)
	}
}

func TestRenderGivesMicrosecondsASend(t *testing.T) {
	ref, err := parse(strings.NewReader(traces), 1000)
	if err != nil {
		t.Fatal(err)
	}
	work, err := parse(strings.NewReader(traces), 500)
	if err != nil {
		t.Fatal(err)
	}
	out := render(ref, work, 3)
	// 30 ms over 1,000 sends is 30 µs a send; over 500, 60.
	for _, want := range []string{
		"| store: the writer (inserts, commits) | 30.0 | 60.0 | +30.0 |",
		"| **total** | **70.0** | **140.0** | **+70.0** (2.00x) |",
		"| `internal/runtime/syscall/linux.Syscall6` | 30.0 | 60.0 | +30.0 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestParseRefusesWhatIsNotTraces(t *testing.T) {
	if _, err := parse(strings.NewReader("File: x\n-----------+---\nnot a time\n"), 1); err == nil {
		t.Error("a block without a time was accepted")
	}
	if _, err := parse(strings.NewReader("File: x\n"), 1); err == nil {
		t.Error("a profile without samples was accepted")
	}
}
