// Command loadgen measures Herald's send endpoint against a ceiling: a bare
// net/http handler, started in this process, that decodes the same JSON and
// answers 200 {"ok":true}. For each connection count it runs the ceiling and
// then Herald, each in a closed loop for -duration (after a -warmup that is
// not counted), and prints a markdown table of req/s, p50, p99, errors, the
// Herald/ceiling ratio and Herald's peak RSS. bench/load.sh sets Herald up
// and calls it; see bench/README.md.
//
// "loadgen -free-port" prints a free 127.0.0.1 port, for the script.
//
// It only targets 127.0.0.1 and always stops by itself: every run is bounded
// by its duration and by -max-requests.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const defaultBody = `{"title":"Load test","body":"**bold** message body of a realistic length for a homelab alert","priority":"high"}`

// options are the command-line flags.
type options struct {
	url         string
	conns       []int
	duration    time.Duration
	warmup      time.Duration
	body        []byte
	baseline    bool
	pid         int
	outDir      string
	maxRequests int64
	note        string
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-free-port" {
		port, err := freePort()
		if err != nil {
			fatal(err)
		}
		fmt.Println(port)
		return
	}
	opts, err := parseFlags(os.Args[1:])
	if err != nil {
		fatal(err)
	}
	if err := run(opts); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "loadgen:", err)
	os.Exit(1)
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	var o options
	var conns, body string
	fs.StringVar(&o.url, "url", "", "Herald send URL, http://127.0.0.1:PORT/v1/send/TOKEN (empty: ceiling only)")
	fs.StringVar(&conns, "conns", "8,32", "comma-separated connection counts")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time per run")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured time before each run")
	fs.StringVar(&body, "body", defaultBody, "JSON payload sent with every request")
	fs.BoolVar(&o.baseline, "baseline", true, "also measure the bare net/http ceiling")
	fs.IntVar(&o.pid, "pid", 0, "pid of the Herald process, for its peak RSS (VmHWM)")
	fs.StringVar(&o.outDir, "out", "", "directory to write the table to (timestamped file); empty: stdout only")
	fs.Int64Var(&o.maxRequests, "max-requests", 2_000_000, "hard cap on requests per run")
	fs.StringVar(&o.note, "note", "", "free text added to the report header")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.body = []byte(body)
	if !json.Valid(o.body) {
		return o, errors.New("-body is not valid JSON")
	}
	for _, s := range strings.Split(conns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 4096 {
			return o, fmt.Errorf("-conns: %q is not a connection count", s)
		}
		o.conns = append(o.conns, n)
	}
	if o.url != "" {
		if err := checkLoopback(o.url); err != nil {
			return o, err
		}
	}
	if o.url == "" && !o.baseline {
		return o, errors.New("nothing to do: give -url or keep -baseline")
	}
	if o.duration <= 0 || o.maxRequests <= 0 {
		return o, errors.New("-duration and -max-requests must be positive")
	}
	return o, nil
}

// checkLoopback refuses any target but 127.0.0.1: this tool must never be
// pointed at someone else's server.
func checkLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("-url: %w", err)
	}
	if u.Scheme != "http" || u.Hostname() != "127.0.0.1" {
		return fmt.Errorf("-url must be http://127.0.0.1:PORT/..., got %q", raw)
	}
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// run measures every target at every connection count and reports.
func run(o options) error {
	ceilingURL := ""
	if o.baseline {
		u, stop, err := startCeiling()
		if err != nil {
			return err
		}
		defer stop()
		ceilingURL = u
	}
	var rows []result
	for _, n := range o.conns {
		if ceilingURL != "" {
			rows = append(rows, measure("ceiling", ceilingURL, n, o))
			fmt.Fprintln(os.Stderr, rows[len(rows)-1].summary())
		}
		if o.url != "" {
			r := measure("herald", o.url, n, o)
			r.rssKB = peakRSS(o.pid)
			rows = append(rows, r)
			fmt.Fprintln(os.Stderr, rows[len(rows)-1].summary())
		}
	}
	report := render(o, rows)
	fmt.Print(report)
	if o.outDir == "" {
		return nil
	}
	if err := os.MkdirAll(o.outDir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(o.outDir, "load-"+time.Now().Format("20060102-150405")+".md")
	if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "report written to", path)
	return nil
}

// ceilingPayload mirrors the fields of Herald's send payload, so the ceiling
// does the same JSON work a minimal send handler must do.
type ceilingPayload struct {
	Title       *string           `json:"title"`
	Body        string            `json:"body"`
	Priority    string            `json:"priority"`
	CallbackURL *string           `json:"callback_url"`
	Actions     []json.RawMessage `json:"actions"`
}

// startCeiling serves the bare handler on 127.0.0.1 and returns its URL.
func startCeiling() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p ceilingPayload
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil || p.Title == nil {
			http.Error(w, `{"error":"invalid_payload"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`+"\n")
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/v1/send/ceiling", func() { srv.Close() }, nil
}

// peakRSS reads VmHWM (peak resident set, kB) of pid from /proc; 0 if unknown.
func peakRSS(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// processCPU reads the user+system CPU time of pid from /proc; 0 if unknown.
func processCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0
	}
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}

// result is one measured run.
type result struct {
	target   string
	conns    int
	ok       int
	errs     int
	firstErr string
	elapsed  time.Duration
	p50, p99 time.Duration
	rssKB    int64
	cpu      time.Duration // CPU time of the Herald process during the run
}

func (r result) rps() float64 { return float64(r.ok) / r.elapsed.Seconds() }

// cpuPerReq is the Herald process's CPU time per answered request, in µs: a
// figure that moves less than req/s when something else loads the machine.
func (r result) cpuPerReq() string {
	if r.cpu <= 0 || r.ok+r.errs == 0 {
		return ""
	}
	return strconv.FormatFloat(float64(r.cpu.Microseconds())/float64(r.ok+r.errs), 'f', 0, 64)
}

func (r result) summary() string {
	s := fmt.Sprintf("%-7s conns=%-4d ok=%-8d errors=%-6d %8.0f req/s  p50=%s p99=%s",
		r.target, r.conns, r.ok, r.errs, r.rps(), ms(r.p50), ms(r.p99))
	if c := r.cpuPerReq(); c != "" {
		s += "  cpu=" + c + "µs/req"
	}
	if r.firstErr != "" {
		s += "  first error: " + r.firstErr
	}
	return s
}

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) }

// measure runs a warm-up, then the measured closed loop, on a fresh client
// whose pool holds exactly conns connections.
func measure(target, u string, conns int, o options) result {
	tr := &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	if o.warmup > 0 {
		loop(client, u, conns, o.body, o.warmup, o.maxRequests)
	}
	pid := 0
	if target == "herald" {
		pid = o.pid
	}
	cpu0 := processCPU(pid)
	r := loop(client, u, conns, o.body, o.duration, o.maxRequests)
	if cpu0 > 0 {
		r.cpu = processCPU(pid) - cpu0
	}
	r.target, r.conns = target, conns
	return r
}

// worker is one closed-loop client's share of a run.
type worker struct {
	lat      []time.Duration
	ok, errs int
	firstErr string
}

// loop runs conns goroutines, each sending one request at a time, until d
// has passed or limit requests have started.
func loop(client *http.Client, u string, conns int, body []byte, d time.Duration, limit int64) result {
	var started atomic.Int64
	workers := make([]worker, conns)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func(w *worker) {
			defer wg.Done()
			for time.Now().Before(deadline) && started.Add(1) <= limit {
				t0 := time.Now()
				err := send(client, u, body)
				w.lat = append(w.lat, time.Since(t0))
				if err == nil {
					w.ok++
					continue
				}
				if w.errs++; w.firstErr == "" {
					w.firstErr = err.Error()
				}
			}
		}(&workers[i])
	}
	wg.Wait()
	return collect(workers, time.Since(start))
}

func collect(workers []worker, elapsed time.Duration) result {
	r := result{elapsed: elapsed}
	var lat []time.Duration
	for _, w := range workers {
		lat = append(lat, w.lat...)
		r.ok += w.ok
		r.errs += w.errs
		if r.firstErr == "" {
			r.firstErr = w.firstErr
		}
	}
	slices.Sort(lat)
	r.p50, r.p99 = percentile(lat, 50), percentile(lat, 99)
	return r
}

// percentile is the nearest-rank percentile of sorted latencies.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(0, i-1)]
}

// send posts body once; anything but a 200 is an error.
func send(client *http.Client, u string, body []byte) error {
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return fmt.Errorf("status %d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// render writes the report: a header saying what was measured and where,
// the table, and the targets checked at the largest connection count.
func render(o options, rows []result) string {
	var b strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&b, "# Herald load test, %s\n\n", time.Now().Format(time.RFC3339))
	fmt.Fprintf(&b, "- machine: %s, %d CPUs (shared by Herald, this load generator and its ceiling server), %s %s/%s\n",
		host, runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "- %s measured per run after %s warm-up; closed loop, one request in flight per connection\n", o.duration, o.warmup)
	fmt.Fprintf(&b, "- body (%d bytes): `%s`\n", len(o.body), o.body)
	if o.note != "" {
		fmt.Fprintf(&b, "- %s\n", o.note)
	}
	b.WriteString("\n| target | conns | ok | errors | req/s | p50 ms | p99 ms | herald/ceiling | herald CPU µs/req | herald peak RSS MB |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	ceiling := map[int]float64{}
	for _, r := range rows {
		ratio, rss := "", ""
		if r.target == "ceiling" {
			ceiling[r.conns] = r.rps()
		} else {
			if c := ceiling[r.conns]; c > 0 {
				ratio = fmt.Sprintf("%.0f%%", 100*r.rps()/c)
			}
			if r.rssKB > 0 {
				rss = fmt.Sprintf("%.1f", float64(r.rssKB)/1024)
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.0f | %s | %s | %s | %s | %s |\n",
			r.target, r.conns, r.ok, r.errs, r.rps(), ms(r.p50), ms(r.p99), ratio, r.cpuPerReq(), rss)
	}
	b.WriteString(targets(rows, ceiling))
	return b.String()
}

// targets checks the goals at the largest connection count Herald ran with:
// at least 30% of the ceiling, p99 under 25 ms, peak RSS under 60 MB, no errors.
func targets(rows []result, ceiling map[int]float64) string {
	var h *result
	for i := range rows {
		if rows[i].target == "herald" && (h == nil || rows[i].conns >= h.conns) {
			h = &rows[i]
		}
	}
	if h == nil {
		return ""
	}
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nTargets at %d conns:\n", h.conns)
	if c := ceiling[h.conns]; c > 0 {
		fmt.Fprintf(&b, "- throughput >= 30%% of ceiling: %.0f%% (%s)\n", 100*h.rps()/c, verdict(h.rps() >= 0.3*c))
	}
	fmt.Fprintf(&b, "- p99 < 25 ms: %s ms (%s)\n", ms(h.p99), verdict(h.p99 < 25*time.Millisecond))
	if h.rssKB > 0 {
		fmt.Fprintf(&b, "- peak RSS < 60 MB: %.1f MB (%s)\n", float64(h.rssKB)/1024, verdict(h.rssKB < 60*1024))
	}
	fmt.Fprintf(&b, "- no errors: %d (%s)\n", h.errs, verdict(h.errs == 0))
	return b.String()
}
