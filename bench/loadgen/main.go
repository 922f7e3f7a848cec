// Command loadgen measures Herald's send endpoint against a ceiling: a bare
// net/http handler, started in this process, that decodes the same JSON and
// answers 200 {"ok":true}. For each connection count it runs the ceiling and
// then Herald, each in a closed loop for -duration (after a -warmup that is
// not counted), and prints a markdown table of req/s, p50, p99, errors, the
// Herald/ceiling ratio and Herald's peak RSS. bench/load.sh sets Herald up
// and calls it; see bench/README.md.
//
// -url may name several Herald processes (replicas): the connections are
// spread over them. -pg-pid adds the CPU of a PostgreSQL server's processes.
// -json appends every run to a file, and "loadgen -report FILE" renders the
// runs of several calls as one table, so that targets which need processes
// started and stopped between them (SQLite, one and two replicas on
// PostgreSQL) are still compared in one report. "loadgen -compare FILE"
// renders runs of two builds named ref and work (bench/compare.sh) as
// per-round ratios.
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
	"os/exec"
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

// request is what every request of a run sends: Herald's JSON send by
// default, or another front door's (ntfy's PUT /<topic> with a text body).
type request struct {
	method, contentType string
	body                []byte
}

// options are the command-line flags.
type options struct {
	urls        []string // Herald send URLs; connections are spread over them
	target      string   // the name of Herald's rows in the report
	conns       []int
	duration    time.Duration
	warmup      time.Duration
	req         request
	upload      string // with -file: the uploaded file's name and size, for the report
	baseline    bool
	pids        []int // Herald processes, for CPU and peak RSS
	pgPID       int   // PostgreSQL's postmaster, for the server's CPU
	pgDB        string
	hook        string // shell command run before and after each measured Herald run
	jsonOut     string // file every run is appended to, one JSON object a line
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
	if len(os.Args) >= 3 && os.Args[1] == "-report" {
		if err := report(os.Args[2:]); err != nil {
			fatal(err)
		}
		return
	}
	if len(os.Args) >= 2 && os.Args[1] == "-make-jpeg" {
		if err := makeJPEG(os.Args[2:]); err != nil {
			fatal(err)
		}
		return
	}
	if len(os.Args) >= 3 && os.Args[1] == "-compare" {
		if err := compareReport(os.Args[2:]); err != nil {
			fatal(err)
		}
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
	var conns, body, urls, pids, file string
	fs.StringVar(&urls, "url", "", "Herald send URL, http://127.0.0.1:PORT/v1/send/TOKEN, or several, comma-separated, to spread the connections over (empty: ceiling only)")
	fs.StringVar(&o.target, "target", "herald", "name of Herald's rows in the report")
	fs.StringVar(&conns, "conns", "8,32", "comma-separated connection counts")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time per run")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured time before each run")
	fs.StringVar(&body, "body", defaultBody, "payload sent with every request (JSON unless -content-type says otherwise)")
	fs.StringVar(&o.req.method, "method", http.MethodPost, "request method: POST (Herald's send) or PUT (ntfy's publish)")
	fs.StringVar(&o.req.contentType, "content-type", "application/json", "Content-Type of the payload; text/plain for ntfy's publish")
	fs.StringVar(&file, "file", "", "upload this file with every request: multipart/form-data, part payload = -body (JSON), part file = the file")
	fs.BoolVar(&o.baseline, "baseline", true, "also measure the bare net/http ceiling")
	fs.StringVar(&pids, "pid", "", "pid of the Herald process, or several, comma-separated, for CPU time and peak RSS (VmHWM)")
	fs.IntVar(&o.pgPID, "pg-pid", 0, "pid of PostgreSQL's postmaster: also count the CPU of the server's processes (see pgProcs)")
	fs.StringVar(&o.pgDB, "pg-db", "", "with -pg-pid: the database Herald uses; other databases' backends are not counted")
	fs.StringVar(&o.hook, "hook", "", "shell command run as `sh -c HOOK hook start|end TARGET CONNS` right before and after each measured Herald run")
	fs.StringVar(&o.jsonOut, "json", "", "append every run to this file, one JSON object a line (see -report)")
	fs.StringVar(&o.outDir, "out", "", "directory to write the table to (timestamped file); empty: stdout only")
	fs.Int64Var(&o.maxRequests, "max-requests", 2_000_000, "hard cap on requests per run")
	fs.StringVar(&o.note, "note", "", "free text added to the report header")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.req.body = []byte(body)
	if o.req.contentType == "application/json" && !json.Valid(o.req.body) {
		return o, errors.New("-body is not valid JSON")
	}
	if file != "" {
		if o.req.contentType != "application/json" {
			return o, errors.New("-file sends -body as the JSON part: give no -content-type")
		}
		b, ct, err := multipartBody(o.req.body, file)
		if err != nil {
			return o, err
		}
		st, _ := os.Stat(file)
		o.upload = fmt.Sprintf("%s (%d bytes)", filepath.Base(file), st.Size())
		o.req.body, o.req.contentType = b, ct
	}
	if o.req.method != http.MethodPost && o.req.method != http.MethodPut {
		return o, fmt.Errorf("-method %q: POST or PUT", o.req.method)
	}
	if o.baseline && o.req.contentType != "application/json" && o.upload == "" {
		return o, errors.New("the ceiling reads Herald's JSON payload: give -baseline=false with another -content-type")
	}
	for _, s := range strings.Split(conns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 4096 {
			return o, fmt.Errorf("-conns: %q is not a connection count", s)
		}
		o.conns = append(o.conns, n)
	}
	for _, u := range strings.Split(urls, ",") {
		if u = strings.TrimSpace(u); u == "" {
			continue
		}
		if err := checkLoopback(u); err != nil {
			return o, err
		}
		o.urls = append(o.urls, u)
	}
	for _, s := range strings.Split(pids, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return o, fmt.Errorf("-pid: %q is not a pid", s)
		}
		o.pids = append(o.pids, n)
	}
	if o.pgPID != 0 && o.pgDB == "" {
		return o, errors.New("-pg-pid needs -pg-db")
	}
	if o.target == "" || o.target == "ceiling" {
		return o, fmt.Errorf("-target %q: give Herald's rows another name", o.target)
	}
	if len(o.urls) == 0 && !o.baseline {
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
			r := measure("ceiling", []string{ceilingURL}, n, o)
			rows = append(rows, r)
			fmt.Fprintln(os.Stderr, r.summary())
			if err := appendJSON(o.jsonOut, r); err != nil {
				return err
			}
		}
		if len(o.urls) > 0 {
			r := measure(o.target, o.urls, n, o)
			for _, pid := range o.pids {
				r.RSSKB = max(r.RSSKB, peakRSS(pid))
			}
			rows = append(rows, r)
			fmt.Fprintln(os.Stderr, r.summary())
			if err := appendJSON(o.jsonOut, r); err != nil {
				return err
			}
		}
	}
	return write(render(header(o), rows), o.outDir)
}

// write prints the report and, if dir is set, saves it there under a
// timestamped name.
func write(report, dir string) error {
	fmt.Print(report)
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, "load-"+time.Now().Format("20060102-150405")+".md")
	if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "report written to", path)
	return nil
}

// appendJSON appends r to path as one line of JSON; nothing if path is "".
func appendJSON(path string, r result) error {
	if path == "" {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// report renders the runs appended to the file by earlier calls with -json,
// in their order, as one table: "loadgen -report FILE [-out DIR] [-note TEXT]...".
func report(args []string) error {
	var pgStats *string
	rows, head, outDir, err := readRuns("loadgen -report", "Herald load test", args, func(fs *flag.FlagSet) {
		pgStats = fs.String("pg-stats", "", "file of PostgreSQL statistics the -hook took before and after each run (see pgActivity)")
	})
	if err != nil {
		return err
	}
	out := render(head, rows)
	if *pgStats != "" {
		t, err := pgActivity(*pgStats, rows)
		if err != nil {
			return err
		}
		out += t
	}
	return write(out, outDir)
}

// readRuns parses "FILE [-out DIR] [-note TEXT]..." (and the flags more
// adds), reads the runs -json appended to FILE, and makes the report's
// header: title, machine and notes.
func readRuns(name, title string, args []string, more func(*flag.FlagSet)) (rows []result, head, outDir string, err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	out := fs.String("out", "", "directory to write the table to (timestamped file); empty: stdout only")
	var notes []string
	fs.Func("note", "a line of the report header (repeatable)", func(s string) error {
		notes = append(notes, s)
		return nil
	})
	if more != nil {
		more(fs)
	}
	if err := fs.Parse(args[1:]); err != nil {
		return nil, "", "", err
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		return nil, "", "", err
	}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, "", "", fmt.Errorf("%s line %d: %w", args[0], i+1, err)
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, "", "", fmt.Errorf("%s: no runs", args[0])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s, %s\n\n", title, time.Now().Format(time.RFC3339))
	fmt.Fprintf(&b, "- machine: %s\n", machine())
	for _, n := range notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	return rows, b.String(), *out, nil
}

// pgSnapshot is one line of the -pg-stats file, tab-separated: phase
// (start or end), target, conns, then the server's clock (epoch seconds),
// pg_stat_database's xact_commit for Herald's database (every transaction,
// reads too), and pg_stat_wal's wal_bytes, wal_write and wal_sync (for the
// whole server). A read-only transaction flushes no WAL, so with
// synchronous_commit on, WAL flushes count the commits of writes.
type pgSnapshot struct {
	at                               float64
	commits, walBytes, writes, syncs float64
}

// pgActivity renders what PostgreSQL did during each run the snapshots
// bracket: commits a second against sends a second (how many sends each
// commit carried: group commit), and WAL writes and flushes a second.
func pgActivity(path string, rows []result) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	type key struct {
		target string
		conns  int
	}
	start := map[key]pgSnapshot{}
	var b strings.Builder
	b.WriteString("\nPostgreSQL during each run (pg_stat_database for Herald's database; pg_stat_wal for the whole server):\n\n")
	b.WriteString("| target | conns | sends/s | transactions/s | WAL flushes/s (wal_sync) | sends per WAL flush | WAL writes/s | WAL KB per send |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 8 {
			return "", fmt.Errorf("%s line %d: want 8 tab-separated fields, got %d", path, i+1, len(f))
		}
		conns, err := strconv.Atoi(f[2])
		if err != nil {
			return "", fmt.Errorf("%s line %d: conns: %w", path, i+1, err)
		}
		var v [5]float64
		for j := range v {
			if v[j], err = strconv.ParseFloat(f[3+j], 64); err != nil {
				return "", fmt.Errorf("%s line %d: field %d: %w", path, i+1, 4+j, err)
			}
		}
		snap := pgSnapshot{at: v[0], commits: v[1], walBytes: v[2], writes: v[3], syncs: v[4]}
		k := key{f[1], conns}
		if f[0] == "start" {
			start[k] = snap
			continue
		}
		s0, ok := start[k]
		if !ok || snap.at <= s0.at {
			continue
		}
		secs := snap.at - s0.at
		sends := 0.0
		for _, r := range rows {
			if r.Target == k.target && r.Conns == k.conns {
				sends = r.rps()
			}
		}
		flushes := (snap.syncs - s0.syncs) / secs
		perFlush, walPerSend := "", ""
		if flushes > 0 {
			perFlush = fmt.Sprintf("%.1f", sends/flushes)
		}
		if sends > 0 {
			walPerSend = fmt.Sprintf("%.2f", (snap.walBytes-s0.walBytes)/secs/sends/1024)
		}
		fmt.Fprintf(&b, "| %s | %d | %.0f | %.0f | %.0f | %s | %.0f | %s |\n", k.target, k.conns, sends,
			(snap.commits-s0.commits)/secs, flushes, perFlush, (snap.writes-s0.writes)/secs, walPerSend)
	}
	return b.String(), nil
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
		if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
			if !ceilingUpload(w, r) {
				http.Error(w, `{"error":"invalid_payload"}`, http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"ok":true}`+"\n")
			return
		}
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
	st, ok := readStat(pid)
	if !ok {
		return 0
	}
	return st.cpu
}

// stat is what /proc/PID/stat says about a process's CPU.
type stat struct {
	ppid     int
	cpu      time.Duration // user + system
	children time.Duration // user + system of its children that have exited and been waited for
}

func readStat(pid int) (stat, bool) {
	if pid <= 0 {
		return stat{}, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stat{}, false
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return stat{}, false
	}
	var v [5]int64
	for j, k := range []int{1, 11, 12, 13, 14} { // fields 4 (ppid), 14-17 (utime, stime, cutime, cstime)
		n, err := strconv.ParseInt(f[k], 10, 64)
		if err != nil {
			return stat{}, false
		}
		v[j] = n
	}
	const ticksPerSecond = 100 // USER_HZ on Linux
	tick := func(n int64) time.Duration { return time.Duration(n) * time.Second / ticksPerSecond }
	return stat{ppid: int(v[0]), cpu: tick(v[1] + v[2]), children: tick(v[3] + v[4])}, true
}

// pgProcs reads the CPU time of PostgreSQL's processes that work for
// database db: the postmaster and its children, except the backends of
// other databases. Background processes (WAL writer, checkpointer,
// background writer, autovacuum launcher) serve every database and are
// counted whole. The processes are told apart by their titles: a backend's
// reads "postgres: [cluster: ]USER DATABASE HOST(PORT) STATE".
//
// Children that exit are not counted (the kernel adds their CPU to the
// postmaster's children's time, but with every other database's backends,
// which a shared server has many of). Herald's own connections stay open.
func pgProcs(postmaster int, db string) map[int]time.Duration {
	pm, ok := readStat(postmaster)
	if !ok {
		return nil
	}
	procs := map[int]time.Duration{postmaster: pm.cpu}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := readStat(pid)
		if !ok || st.ppid != postmaster {
			continue
		}
		title, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if pgCounts(strings.TrimRight(string(title), "\x00"), db) {
			procs[pid] = st.cpu
		}
	}
	return procs
}

// pgCPU is the CPU time the processes of after spent since before: a
// process started in between counts whole.
func pgCPU(before, after map[int]time.Duration) time.Duration {
	var d time.Duration
	for pid, cpu := range after {
		d += cpu - before[pid]
	}
	return d
}

// pgCounts reports whether a PostgreSQL process with this title works for
// database db (or for every database).
func pgCounts(title, db string) bool {
	words := strings.Fields(title)
	mine := slices.Contains(words, db)
	switch {
	case strings.Contains(title, "autovacuum worker"), strings.Contains(title, "parallel worker"):
		return mine // working in one database, named if it is ours
	case strings.Contains(title, "(") || strings.Contains(title, "[local]"):
		return mine // a client backend
	default:
		return true // a background process
	}
}

// result is one measured run; exported fields are what -json writes.
type result struct {
	Target   string        `json:"target"`
	Conns    int           `json:"conns"`
	Procs    int           `json:"procs,omitempty"` // Herald processes the connections were spread over
	OK       int           `json:"ok"`
	Errs     int           `json:"errors"`
	FirstErr string        `json:"first_error,omitempty"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	P50      time.Duration `json:"p50_ns"`
	P99      time.Duration `json:"p99_ns"`
	RSSKB    int64         `json:"peak_rss_kb,omitempty"` // the largest of the Herald processes'
	CPU      time.Duration `json:"cpu_ns,omitempty"`      // CPU time of the Herald processes during the run
	PGCPU    time.Duration `json:"pg_cpu_ns,omitempty"`   // CPU time of PostgreSQL during the run (see pgProcs)
}

func (r result) rps() float64 { return float64(r.OK) / r.Elapsed.Seconds() }

// cpuPerReq is the Herald processes' CPU time per answered request, in µs: a
// figure that moves less than req/s when something else loads the machine.
func (r result) cpuPerReq() string { return r.perReq(r.CPU) }

// pgCPUPerReq is PostgreSQL's CPU time per answered request, in µs.
func (r result) pgCPUPerReq() string { return r.perReq(r.PGCPU) }

func (r result) perReq(cpu time.Duration) string {
	if cpu <= 0 || r.OK+r.Errs == 0 {
		return ""
	}
	return strconv.FormatFloat(float64(cpu.Microseconds())/float64(r.OK+r.Errs), 'f', 0, 64)
}

func (r result) summary() string {
	s := fmt.Sprintf("%-7s conns=%-4d ok=%-8d errors=%-6d %8.0f req/s  p50=%s p99=%s",
		r.Target, r.Conns, r.OK, r.Errs, r.rps(), ms(r.P50), ms(r.P99))
	if c := r.cpuPerReq(); c != "" {
		s += "  cpu=" + c + "µs/req"
	}
	if c := r.pgCPUPerReq(); c != "" {
		s += "  postgres cpu=" + c + "µs/req"
	}
	if r.FirstErr != "" {
		s += "  first error: " + r.FirstErr
	}
	return s
}

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) }

// measure runs a warm-up, then the measured closed loop. Connection i goes
// to urls[i % len(urls)], through a fresh client per URL whose pool holds
// exactly the connections that URL gets.
func measure(target string, urls []string, conns int, o options) result {
	var clients []*http.Client
	for i := range urls {
		share := conns / len(urls)
		if i < conns%len(urls) {
			share++
		}
		if share == 0 {
			break
		}
		tr := &http.Transport{
			Proxy:               nil,
			MaxIdleConns:        share,
			MaxIdleConnsPerHost: share,
			MaxConnsPerHost:     share,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
		}
		defer tr.CloseIdleConnections()
		clients = append(clients, &http.Client{Transport: tr, Timeout: 30 * time.Second})
	}
	if o.warmup > 0 {
		loop(clients, urls, conns, o.req, o.warmup, o.maxRequests)
	}
	herald := target != "ceiling"
	var pids []int
	if herald {
		pids = o.pids
	}
	cpu := func() (herald time.Duration, pg map[int]time.Duration) {
		for _, pid := range pids {
			herald += processCPU(pid)
		}
		if len(pids) > 0 && o.pgPID > 0 {
			pg = pgProcs(o.pgPID, o.pgDB)
		}
		return herald, pg
	}
	if herald {
		runHook(o.hook, "start", target, conns)
	}
	cpu0, pg0 := cpu()
	r := loop(clients, urls, conns, o.req, o.duration, o.maxRequests)
	cpu1, pg1 := cpu()
	if herald {
		runHook(o.hook, "end", target, conns)
	}
	if cpu0 > 0 {
		r.CPU = cpu1 - cpu0
	}
	if pg0 != nil {
		r.PGCPU = pgCPU(pg0, pg1)
	}
	r.Target, r.Conns = target, conns
	if herald {
		r.Procs = len(urls)
	}
	return r
}

// runHook runs the -hook command, if any; its failure is reported, not fatal.
func runHook(hook, phase, target string, conns int) {
	if hook == "" {
		return
	}
	cmd := exec.Command("sh", "-c", hook, "hook", phase, target, strconv.Itoa(conns))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen: -hook", phase+":", err)
	}
}

// worker is one closed-loop client's share of a run.
type worker struct {
	lat      []time.Duration
	ok, errs int
	firstErr string
}

// loop runs conns goroutines, each sending one request at a time, until d
// has passed or limit requests have started; goroutine i sends to urls[i %
// len(urls)] through clients[i % len(urls)].
func loop(clients []*http.Client, urls []string, conns int, req request, d time.Duration, limit int64) result {
	var started atomic.Int64
	workers := make([]worker, conns)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		client, u := clients[i%len(clients)], urls[i%len(clients)]
		go func(w *worker) {
			defer wg.Done()
			for time.Now().Before(deadline) && started.Add(1) <= limit {
				t0 := time.Now()
				err := send(client, u, req)
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
	r := result{Elapsed: elapsed}
	var lat []time.Duration
	for _, w := range workers {
		lat = append(lat, w.lat...)
		r.OK += w.ok
		r.Errs += w.errs
		if r.FirstErr == "" {
			r.FirstErr = w.firstErr
		}
	}
	slices.Sort(lat)
	r.P50, r.P99 = percentile(lat, 50), percentile(lat, 99)
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

// send sends rq once; anything but a 200 is an error.
func send(client *http.Client, u string, rq request) error {
	req, err := http.NewRequest(rq.method, u, bytes.NewReader(rq.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", rq.contentType)
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

// machine describes where the load ran.
func machine() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s, %d CPUs (shared by Herald, this load generator and its ceiling server), %s %s/%s, load average %s",
		host, runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, loadAvg())
}

// loadAvg is the first three fields of /proc/loadavg, or "?".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}

// header says what a single call measured and where.
func header(o options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Herald load test, %s\n\n", time.Now().Format(time.RFC3339))
	fmt.Fprintf(&b, "- machine: %s\n", machine())
	fmt.Fprintf(&b, "- %s measured per run after %s warm-up; closed loop, one request in flight per connection\n", o.duration, o.warmup)
	if o.upload != "" {
		fmt.Fprintf(&b, "- %s, multipart/form-data body (%d bytes): payload and the file %s\n", o.req.method, len(o.req.body), o.upload)
	} else {
		fmt.Fprintf(&b, "- %s, %s body (%d bytes): `%s`\n", o.req.method, o.req.contentType, len(o.req.body), o.req.body)
	}
	if o.note != "" {
		fmt.Fprintf(&b, "- %s\n", o.note)
	}
	return b.String()
}

// render writes the table under head, then the targets checked at the
// largest connection count. The first target other than the ceiling is the
// reference: with several targets, each row also shows its req/s as a share
// of the reference's at the same connection count.
func render(head string, rows []result) string {
	var b strings.Builder
	b.WriteString(head)
	ref := ""
	var targets []string
	pg := false
	for _, r := range rows {
		if r.Target != "ceiling" && !slices.Contains(targets, r.Target) {
			targets = append(targets, r.Target)
		}
		pg = pg || r.PGCPU > 0
	}
	if len(targets) > 0 {
		ref = targets[0]
	}
	b.WriteString("\n| target | conns | ok | errors | req/s | p50 ms | p99 ms | of ceiling |")
	sep := "|---|---:|---:|---:|---:|---:|---:|---:|"
	if len(targets) > 1 {
		fmt.Fprintf(&b, " of %s |", ref)
		sep += "---:|"
	}
	b.WriteString(" herald CPU µs/req |")
	sep += "---:|"
	if pg {
		b.WriteString(" postgres CPU µs/req | total CPU µs/req |")
		sep += "---:|---:|"
	}
	b.WriteString(" herald peak RSS MB |\n")
	b.WriteString(sep + "---:|\n")
	ceiling := map[int]float64{}
	reference := map[int]float64{}
	for _, r := range rows {
		switch r.Target {
		case "ceiling":
			ceiling[r.Conns] = r.rps()
		case ref:
			reference[r.Conns] = r.rps()
		}
	}
	share := func(v, of float64) string {
		if of <= 0 {
			return ""
		}
		return fmt.Sprintf("%.0f%%", 100*v/of)
	}
	for _, r := range rows {
		herald := r.Target != "ceiling"
		ofCeiling := ""
		if herald && !isUpload(r.Target) {
			ofCeiling = share(r.rps(), ceiling[r.Conns])
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.0f | %s | %s | %s |", r.Target, r.Conns, r.OK, r.Errs, r.rps(), ms(r.P50), ms(r.P99), ofCeiling)
		if len(targets) > 1 {
			of := ""
			if herald {
				of = share(r.rps(), reference[r.Conns])
			}
			fmt.Fprintf(&b, " %s |", of)
		}
		fmt.Fprintf(&b, " %s |", r.cpuPerReq())
		if pg {
			fmt.Fprintf(&b, " %s | %s |", r.pgCPUPerReq(), r.perReq(r.CPU+r.PGCPU))
		}
		rss := ""
		if herald && r.RSSKB > 0 {
			rss = fmt.Sprintf("%.1f", float64(r.RSSKB)/1024)
		}
		fmt.Fprintf(&b, " %s |\n", rss)
	}
	for _, t := range targets {
		b.WriteString(checkTargets(rows, t, ref, ceiling, reference))
	}
	return b.String()
}

// checkTargets checks the goals of target at the largest connection count
// it ran with: the reference at least 30% of the ceiling and peak RSS under
// 60 MB; any other target at least half the reference's req/s; every target
// p99 under 25 ms and no errors.
func checkTargets(rows []result, target, ref string, ceiling, reference map[int]float64) string {
	var h *result
	for i := range rows {
		if rows[i].Target == target && (h == nil || rows[i].Conns >= h.Conns) {
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
	fmt.Fprintf(&b, "\nTargets of %s at %d conns:\n", target, h.Conns)
	if target == ref {
		if c := ceiling[h.Conns]; c > 0 {
			fmt.Fprintf(&b, "- throughput >= 30%% of ceiling: %.0f%% (%s)\n", 100*h.rps()/c, verdict(h.rps() >= 0.3*c))
		}
	} else if isUpload(target) {
		// An upload is not held to a text send's rate: what it must keep
		// is memory bounded, however many pictures arrive at once.
		if h.RSSKB > 0 {
			fmt.Fprintf(&b, "- peak RSS < %d MB: %.1f MB (%s)\n", uploadRSSMB, float64(h.RSSKB)/1024, verdict(h.RSSKB < uploadRSSMB*1024))
		}
	} else if c := reference[h.Conns]; c > 0 {
		// A replica on PostgreSQL is held to half of SQLite; the ntfy
		// door, the same send through another parser, to nine tenths.
		share := 0.5
		if strings.HasPrefix(target, "ntfy") {
			share = 0.9
		}
		fmt.Fprintf(&b, "- throughput >= %.0f%% of %s: %.0f%% (%s)\n", 100*share, ref, 100*h.rps()/c, verdict(h.rps() >= share*c))
	}
	if !isUpload(target) {
		fmt.Fprintf(&b, "- p99 < 25 ms: %s ms (%s)\n", ms(h.P99), verdict(h.P99 < 25*time.Millisecond))
	}
	if target == ref && h.RSSKB > 0 {
		fmt.Fprintf(&b, "- peak RSS < 60 MB: %.1f MB (%s)\n", float64(h.RSSKB)/1024, verdict(h.RSSKB < 60*1024))
	}
	fmt.Fprintf(&b, "- no errors: %d (%s)\n", h.Errs, verdict(h.Errs == 0))
	return b.String()
}
