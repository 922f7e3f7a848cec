// Command fanout measures the live stream's fan-out: it opens N Server-Sent
// Event streams (GET /v1/stream; with -ntfy, ntfy JSON subscriptions to
// the users' channels) spread over some users, sends messages at a
// fixed rate through the users' channels (with -ntfy, as ntfy publishes:
// POST /<token> with a Title header, so that the same run can target an
// ntfy server, whose topics are the tokens), and reports how many events
// arrived of how many expected, the latency from each send to each receipt
// (p50/p99), the server's CPU per delivered event (from /proc/PID/stat) and
// its memory per idle stream (RSS with the streams open minus before, from
// /proc/PID/status). See bench/README.md; bench/fanout.sh runs it.
//
// Only 127.0.0.1 is ever targeted.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// user is one user's API key and a webhook token of one of their channels.
type user struct{ key, token string }

// result is one run, printed as a JSON line.
type result struct {
	Label       string  `json:"label"`
	Streams     int     `json:"streams"`
	Users       int     `json:"users"`
	Rate        int     `json:"rate"`
	Seconds     float64 `json:"seconds"`
	Sent        int     `json:"sent"`
	SendErrors  int     `json:"send_errors"`
	Expected    int64   `json:"expected"`
	Delivered   int64   `json:"delivered"`
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
	CPUSeconds  float64 `json:"cpu_s"`
	CPUPerEvent float64 `json:"cpu_us_per_event"`
	IdleKBPer   float64 `json:"idle_kb_per_stream"`
	ClosedEarly int64   `json:"streams_closed_early"`
	// ClientCPUPerEvent is this generator's own CPU per delivered event
	// over the same span: it shares the cores with Herald, so it says
	// how much of the latency may be the measurement's.
	ClientCPUPerEvent float64 `json:"client_cpu_us_per_event"`
}

func main() {
	base := flag.String("url", "", "Herald's base URL (http://127.0.0.1:PORT)")
	pid := flag.Int("pid", 0, "Herald's process id, for CPU and memory")
	usersFile := flag.String("users", "", `file of "API_KEY WEBHOOK_TOKEN" lines, one a user`)
	streams := flag.Int("streams", 10, "streams to open")
	nUsers := flag.Int("n-users", 1, "users the streams and messages are spread over (the file's first N)")
	rate := flag.Int("rate", 50, "messages a second")
	duration := flag.Duration("duration", 8*time.Second, "how long to send")
	drain := flag.Duration("drain", 10*time.Second, "how long to wait for the last events after sending")
	label := flag.String("label", "herald", "name of this run in the output")
	ntfy := flag.Bool("ntfy", false, "open ntfy JSON subscriptions (GET /<token>/json) instead of GET /v1/stream, and publish as ntfy does (POST /<token>)")
	cpuProfile := flag.String("cpuprofile", "", "write the generator's own CPU profile of the sending span to this file")
	flag.Parse()
	if err := run(*base, *pid, *usersFile, *streams, *nUsers, *rate, *duration, *drain, *label, *cpuProfile, *ntfy); err != nil {
		fmt.Fprintln(os.Stderr, "fanout:", err)
		os.Exit(1)
	}
}

func run(base string, pid int, usersFile string, nStreams, nUsers, rate int, duration, drain time.Duration, label, profile string, ntfy bool) error {
	u, err := url.Parse(base)
	if err != nil || u.Hostname() != "127.0.0.1" {
		return fmt.Errorf("-url must be http://127.0.0.1:PORT, not %q", base)
	}
	users, err := readUsers(usersFile, nUsers)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}

	rss0, err := rssKB(pid)
	if err != nil {
		return err
	}
	rec, err := newRecorder(ntfy)
	if err != nil {
		return err
	}
	defer rec.close()
	perUser := make([]int, len(users)) // streams of each user
	connected := make(chan error, nStreams)
	gate := make(chan struct{}, 32) // connections being opened at once
	for i := range nStreams {
		who := i % len(users)
		perUser[who]++
		gate <- struct{}{}
		go func() {
			defer func() { <-gate }()
			connected <- rec.open(u.Host, users[who], i)
		}()
	}
	for range nStreams {
		if err := <-connected; err != nil {
			return err
		}
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() { defer close(stopped); rec.read(stop) }()
	// Idle streams: let the server settle, then weigh them.
	time.Sleep(2 * time.Second)
	rss1, err := rssKB(pid)
	if err != nil {
		return err
	}

	cpu0, err := cpuSeconds(pid)
	if err != nil {
		return err
	}
	self0, err := cpuSeconds(os.Getpid())
	if err != nil {
		return err
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	var expected int64
	var sendErrors atomic.Int64
	total := int(duration.Seconds() * float64(rate))
	tick := time.NewTicker(time.Second / time.Duration(rate))
	var sends sync.WaitGroup
	for k := range total {
		<-tick.C
		who := k % len(users)
		expected += int64(perUser[who])
		sends.Add(1)
		go func() {
			defer sends.Done()
			if err := send(client, base, users[who].token, k, ntfy); err != nil {
				sendErrors.Add(1)
			}
		}()
	}
	tick.Stop()
	sends.Wait()
	deadline := time.Now().Add(drain)
	for rec.delivered.Load() < expected && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	elapsed := time.Since(start)
	cpu1, err := cpuSeconds(pid)
	if err != nil {
		return err
	}
	self1, err := cpuSeconds(os.Getpid())
	if err != nil {
		return err
	}
	close(stop)
	<-stopped

	lat := rec.latencies()
	res := result{Label: label, Streams: nStreams, Users: len(users), Rate: rate, Seconds: elapsed.Seconds(),
		Sent: total, SendErrors: int(sendErrors.Load()), Expected: expected, Delivered: rec.delivered.Load(),
		P50ms: pct(lat, 0.50), P99ms: pct(lat, 0.99), CPUSeconds: cpu1 - cpu0,
		IdleKBPer: float64(rss1-rss0) / float64(nStreams), ClosedEarly: rec.closedEarly.Load()}
	if res.Delivered > 0 {
		res.CPUPerEvent = res.CPUSeconds / float64(res.Delivered) * 1e6
		res.ClientCPUPerEvent = (self1 - self0) / float64(res.Delivered) * 1e6
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

func readUsers(path string, n int) ([]user, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []user
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("%s: bad line %q", path, line)
		}
		out = append(out, user{key: f[0], token: f[1]})
	}
	if len(out) < n || n < 1 {
		return nil, fmt.Errorf("%s has %d users, want %d", path, len(out), n)
	}
	return out[:n], nil
}

// send posts message k, whose title carries the time it was sent: to
// POST /v1/send/{token}, or with ntfy to POST /<token> as ntfy's clients
// publish, the title in a header and the body as it is.
func send(c *http.Client, base, token string, k int, ntfy bool) error {
	title := fmt.Sprintf("fanout %d %d", k, time.Now().UnixNano())
	req, err := http.NewRequest(http.MethodPost, base+"/v1/send/"+token, strings.NewReader(`{"title":"`+title+`","body":"x"}`))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if ntfy {
		req, err = http.NewRequest(http.MethodPost, base+"/"+token, strings.NewReader("x"))
		if err != nil {
			return err
		}
		req.Header.Set("Title", title)
	}
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("send: status %d", res.StatusCode)
	}
	return nil
}

func pct(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := min(int(float64(len(sorted))*p), len(sorted)-1)
	return float64(sorted[i]) / float64(time.Millisecond)
}

// cpuSeconds is the process's user+system CPU time.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("parse /proc/%d/stat: %w", pid, err)
	}
	return (ut + st) / 100, nil // USER_HZ is 100 on Linux
}

// rssKB is the process's resident set size in KB.
func rssKB(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
