// Command growth measures how Herald holds up as its data grows. For each
// size it fills one channel with that many expired messages (straight into
// the database, while the server is stopped: filling through the API would
// take an hour), then, against a real `herald serve` on 127.0.0.1:
//
//   - sends to another channel in a closed loop, before the sweep;
//   - lists the big channel: the first page, a deep page by cursor, a deep
//     page by offset (for contrast), every channel at once, and searches;
//   - restarts the server with a retention the backlog is past, so that its
//     first sweep deletes all of it, and sends throughout that sweep;
//   - sends again after it, and reports the database, WAL and search index
//     sizes.
//
// bench/growth.sh builds Herald and runs it; see bench/README.md. It only
// targets 127.0.0.1, and every phase is bounded in time.
package main

import (
	"bytes"
	"context"
	"database/sql"
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
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/store"
	_ "modernc.org/sqlite"
)

func main() {
	bin := flag.String("herald", "", "the herald binary")
	sizes := flag.String("sizes", "1000000,5000000", "backlog sizes, comma-separated")
	conns := flag.Int("conns", 8, "concurrent senders")
	phase := flag.Duration("phase", 10*time.Second, "length of the before and after send phases")
	maxSweep := flag.Duration("max-sweep", 40*time.Minute, "longest the sweep phase may run")
	flag.Parse()
	if *bin == "" {
		fatal(errors.New("-herald is required"))
	}
	fmt.Printf("| backlog | phase | sends/s | p50 ms | p99 ms | max ms | errors |\n|---:|---|---:|---:|---:|---:|---:|\n")
	var reads, sizesOut []string
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fatal(fmt.Errorf("size %q: %w", f, err))
		}
		r, err := runSize(*bin, n, *conns, *phase, *maxSweep)
		if err != nil {
			fatal(err)
		}
		reads = append(reads, r.reads...)
		sizesOut = append(sizesOut, r.sizes)
	}
	fmt.Printf("\n| backlog | read | median ms | p99 ms | results |\n|---:|---|---:|---:|---:|\n%s", strings.Join(reads, ""))
	fmt.Printf("\n| backlog | fill s | sweep s | db before MB | db after MB | WAL after MB | search index before MB | after MB |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n%s", strings.Join(sizesOut, ""))
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "growth:", err)
	os.Exit(1)
}

type result struct {
	reads []string
	sizes string
}

// env is one Herald installation in a temporary directory.
type env struct {
	bin, dir, base, cfg string
	proc                *exec.Cmd
	log                 *bytes.Buffer
	logMu               sync.Mutex
	// swept is set when the server logs that its sweep finished: the
	// senders check it before every request, so it must cost nothing (a
	// search of the whole log, under the log's lock, made the senders
	// wait on each other and measured the benchmark instead of Herald).
	swept        atomic.Bool
	token        string // session
	small, bigID string // the small channel's webhook token; the big channel's id
}

func runSize(bin string, n, conns int, phase, maxSweep time.Duration) (*result, error) {
	dir, err := os.MkdirTemp("", "herald-growth")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	e := &env{bin: bin, dir: dir, base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	if err := e.configure(port, "720h"); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--config", e.cfg, "user", "add", "ops@example.com", "--plan", "free") // the plan [plans.free] opens up
	cmd.Stdin = strings.NewReader("growth-password\n")
	cmd.Args = append(cmd.Args, "--password-stdin")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("user add: %v: %s", err, out)
	}
	if err := e.start(); err != nil {
		return nil, err
	}
	if err := e.setUp(); err != nil {
		e.stop()
		return nil, err
	}
	e.stop()

	fillStart := time.Now()
	if err := fill(filepath.Join(dir, "data", "herald.db"), e.bigID, n); err != nil {
		return nil, err
	}
	fillTook := time.Since(fillStart)
	db := filepath.Join(dir, "data", "herald.db")
	dbBefore, indexBefore := size(db), size(store.SearchFile(db))
	fmt.Fprintf(os.Stderr, "filled %d messages in %v\n", n, fillTook.Round(time.Second))

	if err := e.start(); err != nil {
		return nil, err
	}
	label := fmt.Sprintf("%.0fM", float64(n)/1e6)
	res := &result{}
	fmt.Print(e.sendRow(label, "before the sweep", conns, phase, nil))
	res.reads = e.readRows(label, n)
	e.stop()

	// Retention now ends before the backlog: the first sweep takes all of it.
	if err := e.configure(port, "24h"); err != nil {
		return nil, err
	}
	sweepStart := time.Now()
	if err := e.start(); err != nil {
		return nil, err
	}
	swept := e.swept.Load
	fmt.Print(e.sendRow(label, "during the sweep", conns, maxSweep, swept))
	sweepTook := time.Since(sweepStart)
	sweepNote := fmt.Sprintf("%.1f", sweepTook.Seconds())
	if !swept() {
		// Reported, not fatal: the reads and sizes are worth having.
		sweepNote = fmt.Sprintf("> %.0f (unfinished)", sweepTook.Seconds())
	}
	fmt.Print(e.sendRow(label, "after the sweep", conns, phase, nil))
	e.stop()
	res.sizes = fmt.Sprintf("| %s | %.0f | %s | %.0f | %.1f | %.1f | %.0f | %.1f |\n", label, fillTook.Seconds(), sweepNote,
		mb(dbBefore), mb(size(db)), mb(size(db+"-wal")), mb(indexBefore), mb(size(store.SearchFile(db))))
	return res, nil
}

func (e *env) configure(port int, retention string) error {
	e.cfg = filepath.Join(e.dir, "herald.toml")
	return os.WriteFile(e.cfg, []byte(fmt.Sprintf(`listen    = "127.0.0.1:%d"
base_url  = "%s"
data_dir  = "%s"
log_level = "info"
metrics   = false

[retention]
messages = "%s"

[plans.free]
send_per_minute = 100000000
api_per_minute  = 100000000
`, port, e.base, filepath.Join(e.dir, "data"), retention)), 0o600)
}

// logTail is how much of the server's log the benchmark keeps: enough to
// show why a start failed. Keeping all of it (a line per request, about 90
// MB a run) made the benchmark's own memory grow, and its collector and
// the buffer's copies stalled every sender at once for 50-450 ms: those
// were the slowest "sends" measured until then.
const logTail = 64 << 10

// lockedBuffer is the tail of the server's log, read while the server
// writes it.
type lockedBuffer struct{ e *env }

func (b lockedBuffer) Write(p []byte) (int, error) {
	b.e.logMu.Lock()
	defer b.e.logMu.Unlock()
	// slog writes each record, one line, with one Write.
	if bytes.Contains(p, []byte("sweep finished")) {
		b.e.swept.Store(true)
	}
	b.e.log.Write(p)
	if b.e.log.Len() > 2*logTail {
		tail := b.e.log.Bytes()[b.e.log.Len()-logTail:]
		b.e.log = bytes.NewBuffer(append(make([]byte, 0, 2*logTail+len(p)), tail...))
	}
	return len(p), nil
}

func (e *env) start() error {
	e.log = &bytes.Buffer{}
	e.swept.Store(false)
	e.proc = exec.Command(e.bin, "--config", e.cfg, "serve")
	e.proc.Stdout, e.proc.Stderr = lockedBuffer{e}, lockedBuffer{e}
	if err := e.proc.Start(); err != nil {
		return err
	}
	for range 300 {
		if res, err := http.Get(e.base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.stop()
	return fmt.Errorf("herald did not start: %s", e.log.String())
}

func (e *env) stop() {
	if e.proc == nil || e.proc.Process == nil {
		return
	}
	e.proc.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { e.proc.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		e.proc.Process.Kill()
		<-done
	}
	e.proc = nil
}

// call makes one API request and decodes its JSON answer into out.
func (e *env) call(method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 && res.StatusCode != 201 {
		return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

func (e *env) setUp() error {
	var sess struct {
		AccessToken string `json:"access_token"`
	}
	if err := e.call("POST", "/v1/auth/local", map[string]string{"email": "ops@example.com", "password": "growth-password"}, &sess); err != nil {
		return err
	}
	e.token = sess.AccessToken
	var big, small struct {
		ID           string `json:"id"`
		WebhookToken string `json:"webhook_token"`
	}
	if err := e.call("POST", "/v1/channels", map[string]string{"name": "backups"}, &big); err != nil {
		return err
	}
	if err := e.call("POST", "/v1/channels", map[string]string{"name": "alerts"}, &small); err != nil {
		return err
	}
	e.bigID, e.small = big.ID, small.WebhookToken
	return nil
}

// fill writes n messages, ten days old, into the channel, as sends would
// (the send trigger records their stream events), and their search entries.
func fill(path, channelID string, n int) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(normal)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	start := time.Now().Add(-10 * 24 * time.Hour).UnixMilli()
	const step = 250000
	for from := 0; from < n; from += step {
		to := min(from+step, n)
		_, err := db.Exec(`WITH RECURSIVE seq(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?2)
			INSERT INTO messages (id, channel_id, title, body, priority, actions, muted, state, created_at)
			SELECT printf('msg_fill%010d', i), ?3, 'Backup job ' || i || ' finished',
				CASE WHEN i % 7 = 0 THEN 'pods restarted on kubernetes node ' || (i % 97) ELSE '**42 GB** in 3 minutes, run ' || i END,
				'normal', '[]', 1, 'pending', ?4 + i / 100
			FROM seq`, from+1, to, channelID, start)
		if err != nil {
			return fmt.Errorf("fill: %w", err)
		}
		fmt.Fprintf(os.Stderr, "\rfilled %d of %d", to, n)
	}
	fmt.Fprintln(os.Stderr)
	// The stream's events of the backlog are recent: the events sweep (24
	// hours of history) stays out of the before and after phases, so that
	// the sweep measured is retention's. (The store's tests sweep events.)
	if _, err := db.Exec(`UPDATE events SET created_at = ?`, time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	// The search index's own file, which the server created.
	if _, err := db.Exec(`ATTACH DATABASE ? AS search`, store.SearchFile(path)); err != nil {
		return fmt.Errorf("fill the search index: %w", err)
	}
	if _, err := db.Exec(`INSERT INTO search.messages_fts (rowid, title, body, readers, channel)
		SELECT m.rowid, m.title, m.body, c.user_id, m.channel_id FROM messages m JOIN channels c ON c.id = m.channel_id
		WHERE m.rowid > (SELECT position FROM search.search_state)`); err != nil {
		return fmt.Errorf("fill the search index: %w", err)
	}
	if _, err := db.Exec(`UPDATE search.search_state SET position = (SELECT MAX(rowid) FROM messages)`); err != nil {
		return err
	}
	if _, err := db.Exec("PRAGMA search.wal_checkpoint(TRUNCATE)"); err != nil {
		return err
	}
	_, err = db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	return err
}

// sendRow sends in a closed loop for at most d, or until stop says so, and
// returns a table row.
func (e *env) sendRow(label, name string, conns int, d time.Duration, stop func() bool) string {
	body := []byte(`{"title":"Backup finished","body":"**42 GB** in 3 minutes","priority":"high"}`)
	url := e.base + "/v1/send/" + e.small
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns}, Timeout: 30 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var mu sync.Mutex
	var lat []time.Duration
	var errs atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && (stop == nil || !stop()) {
				t := time.Now()
				res, err := client.Post(url, "application/json", bytes.NewReader(body))
				if err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != 200 {
						err = fmt.Errorf("status %d", res.StatusCode)
					}
				}
				took := time.Since(t)
				if err != nil {
					errs.Add(1)
					continue
				}
				mu.Lock()
				lat = append(lat, took)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	return fmt.Sprintf("| %s | %s | %.0f | %.2f | %.2f | %.1f | %d |\n", label, name, float64(len(lat))/elapsed.Seconds(),
		ms(pct(lat, 50)), ms(pct(lat, 99)), ms(pct(lat, 100)), errs.Load())
}

// readRows times the lists and searches, each repeated.
func (e *env) readRows(label string, n int) []string {
	var rows []string
	timeIt := func(name, path string, times int) {
		var lat []time.Duration
		count := 0
		for range times {
			var page struct {
				Messages []json.RawMessage `json:"messages"`
			}
			t := time.Now()
			if err := e.call("GET", path, nil, &page); err != nil {
				rows = append(rows, fmt.Sprintf("| %s | %s | error: %v | | |\n", label, name, err))
				return
			}
			lat = append(lat, time.Since(t))
			count = len(page.Messages)
		}
		slices.Sort(lat)
		rows = append(rows, fmt.Sprintf("| %s | %s | %.2f | %.2f | %d |\n", label, name, ms(pct(lat, 50)), ms(pct(lat, 99)), count))
	}
	big := url.QueryEscape(e.bigID)
	timeIt("first page of the channel", "/v1/messages?limit=50&channel_id="+big, 50)
	timeIt("first page of all channels", "/v1/messages?limit=50", 50)
	timeIt("deep page by cursor (before=1000)", "/v1/messages?limit=50&before=1000&channel_id="+big, 50)
	timeIt(fmt.Sprintf("deep page by offset (%d)", n/2), fmt.Sprintf("/v1/messages?limit=50&offset=%d&channel_id=%s", n/2, big), 3)
	timeIt("search, 1 in 7 match (kubernetes)", "/v1/messages?limit=50&q=kubernetes", 50)
	timeIt("search, 1 match", "/v1/messages?limit=50&q="+url.QueryEscape(fmt.Sprintf("run %d", n-3)), 50)
	timeIt("search, no match", "/v1/messages?limit=50&q=zebra", 50)
	return rows
}

func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted) - 1) * p / 100
	return sorted[i]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func mb(b int64) float64 { return float64(b) / (1 << 20) }

func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
