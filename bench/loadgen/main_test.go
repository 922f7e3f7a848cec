package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// server counts the requests it answers.
func server(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1/send/x", &n
}

func TestMeasureSpreadsConnectionsOverURLs(t *testing.T) {
	a, na := server(t)
	b, nb := server(t)
	o := options{req: request{http.MethodPost, "application/json", []byte(`{"title":"t"}`)}, duration: 200 * time.Millisecond, maxRequests: 1000}
	r := measure("pg 2 replicas", []string{a, b}, 4, o)
	if r.Errs != 0 || r.OK == 0 {
		t.Fatalf("ok=%d errors=%d (%s)", r.OK, r.Errs, r.FirstErr)
	}
	if na.Load() == 0 || nb.Load() == 0 {
		t.Fatalf("requests per URL: %d and %d, want both > 0", na.Load(), nb.Load())
	}
	if got := na.Load() + nb.Load(); got != int64(r.OK) {
		t.Fatalf("servers answered %d, loadgen counted %d", got, r.OK)
	}
	if r.Procs != 2 || r.Target != "pg 2 replicas" || r.Conns != 4 {
		t.Fatalf("result %+v", r)
	}
}

// TestMeasureNtfyPublish: -method PUT with a text body reaches the server
// as such, and an answer other than 200 (the 404 of a server without the
// ntfy front door) counts as an error, not a send.
func TestMeasureNtfyPublish(t *testing.T) {
	var bad atomic.Value
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPut || r.Header.Get("Content-Type") != "text/plain" || string(body) != "Backup done" || r.URL.Path != "/tok" {
			bad.Store(fmt.Sprintf("%s %s %q %q", r.Method, r.URL.Path, r.Header.Get("Content-Type"), body))
		}
		if n.Add(1)%2 == 0 {
			http.Error(w, `{"code":40401,"http":404,"error":"page not found"}`, http.StatusNotFound)
			return
		}
		w.Write([]byte(`{"id":"x","time":1,"event":"message","topic":"tok"}`))
	}))
	t.Cleanup(srv.Close)
	o, err := parseFlags([]string{"-url", srv.URL + "/tok", "-method", "PUT", "-content-type", "text/plain", "-body", "Backup done", "-baseline=false"})
	if err != nil {
		t.Fatal(err)
	}
	o.duration, o.warmup = 200*time.Millisecond, 0
	r := measure("ntfy PUT", o.urls, 2, o)
	if v := bad.Load(); v != nil {
		t.Fatalf("the server got %s, want PUT /tok \"text/plain\" \"Backup done\"", v)
	}
	if r.OK == 0 || r.Errs == 0 || int64(r.OK+r.Errs) != n.Load() || !strings.Contains(r.FirstErr, "status 404") {
		t.Fatalf("ok=%d errors=%d of %d (%s): want every other answer, the 404s, counted as errors", r.OK, r.Errs, n.Load(), r.FirstErr)
	}
	if _, err := parseFlags([]string{"-url", srv.URL + "/tok", "-content-type", "text/plain", "-body", "x"}); err == nil {
		t.Error("a text body with the ceiling (which reads JSON) was accepted")
	}
}

func TestParseFlagsRefusesOtherHosts(t *testing.T) {
	if _, err := parseFlags([]string{"-url", "http://127.0.0.1:1/v1/send/a,http://example.com/v1/send/b"}); err == nil {
		t.Fatal("a URL not on 127.0.0.1 was accepted")
	}
	o, err := parseFlags([]string{"-url", "http://127.0.0.1:1/a,http://127.0.0.1:2/b", "-pid", "10,11"})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.urls) != 2 || len(o.pids) != 2 {
		t.Fatalf("urls %v pids %v", o.urls, o.pids)
	}
}

func TestPgCounts(t *testing.T) {
	for _, c := range []struct {
		title string
		want  bool
	}{
		{"postgres: 15/main: postgres herald_bench_1 127.0.0.1(39818) idle", true},
		{"postgres: 15/main: postgres herald_bench_1 127.0.0.1(39818) COMMIT", true},
		{"postgres: postgres herald_bench_1 [local] idle", true},
		{"postgres: 15/main: postgres smoke 127.0.0.1(39818) idle", false},
		{"postgres: 15/main: postgres herald_bench_12 127.0.0.1(39818) idle", false},
		{"postgres: 15/main: walwriter ", true},
		{"postgres: 15/main: checkpointer ", true},
		{"postgres: 15/main: autovacuum worker herald_bench_1", true},
		{"postgres: 15/main: autovacuum worker smoke", false},
	} {
		if got := pgCounts(c.title, "herald_bench_1"); got != c.want {
			t.Errorf("pgCounts(%q) = %v, want %v", c.title, got, c.want)
		}
	}
}

// TestPgProcs starts two children of this process with backends' titles,
// one for our database and one for another, and checks which are counted.
func TestPgProcs(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	start := func(title string) int {
		cmd := exec.Command("bash", "-c", `exec -a "$0" sleep 30`, title)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd.Process.Pid
	}
	mine := start("postgres: 15/main: postgres herald_bench_1 127.0.0.1(1) idle")
	other := start("postgres: 15/main: postgres smoke 127.0.0.1(2) idle")
	// Until bash has exec'd sleep with the title, in both children: before,
	// a child's title is bash's, which reads as a background process's.
	titled := func(pid int) bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		return strings.HasPrefix(string(b), "postgres: ")
	}
	for i := 0; i < 250 && !(titled(mine) && titled(other)); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	procs := pgProcs(os.Getpid(), "herald_bench_1")
	if _, ok := procs[mine]; !ok {
		t.Errorf("our database's backend %d not counted: %v", mine, procs)
	}
	if _, ok := procs[other]; ok {
		t.Errorf("another database's backend %d counted", other)
	}
	if _, ok := procs[os.Getpid()]; !ok {
		t.Errorf("the postmaster itself not counted")
	}
}

// TestReportJoinsRuns appends runs of separate calls with -json and renders
// them as one table with the ratios to the ceiling and to the first target.
func TestReportJoinsRuns(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs.jsonl")
	for _, r := range []result{
		{Target: "ceiling", Conns: 8, OK: 4000, Elapsed: time.Second},
		{Target: "sqlite", Conns: 8, OK: 1000, Elapsed: time.Second, CPU: 100 * time.Millisecond},
		{Target: "pg 1 replica", Conns: 8, OK: 500, Elapsed: time.Second, CPU: 100 * time.Millisecond, PGCPU: 50 * time.Millisecond, P99: 30 * time.Millisecond},
	} {
		if err := appendJSON(runs, r); err != nil {
			t.Fatal(err)
		}
	}
	stats := filepath.Join(dir, "pg-stats.tsv")
	os.WriteFile(stats, []byte("start\tpg 1 replica\t8\t100\t0\t0\t0\t0\nend\tpg 1 replica\t8\t102\t3000\t2048000\t300\t200\n"), 0o644)

	out := captureStdout(t, func() {
		if err := report([]string{runs, "-pg-stats", stats, "-note", "a note"}); err != nil {
			t.Fatal(err)
		}
	})
	for _, want := range []string{
		"- a note",
		"| sqlite | 8 | 1000 | 0 | 1000 | 0.00 | 0.00 | 25% | 100% | 100 |  | 100 |",
		"| pg 1 replica | 8 | 500 | 0 | 500 | 0.00 | 30.00 | 12% | 50% | 200 | 100 | 300 |",
		"- throughput >= 50% of sqlite: 50% (met)",
		"- p99 < 25 ms: 30.00 ms (MISSED)",
		// In 2 s: 3000 transactions, 200 WAL flushes (5 sends each), 300 WAL writes, 2000 KB of WAL.
		"| pg 1 replica | 8 | 500 | 1500 | 100 | 5.0 | 150 | 2.00 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		done <- []byte(b.String())
	}()
	f()
	os.Stdout = old
	w.Close()
	return string(<-done)
}
