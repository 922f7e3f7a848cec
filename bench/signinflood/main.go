// Command signinflood fires a burst of concurrent wrong-password sign-ins
// (POST /v1/auth/local) at a Herald on 127.0.0.1, spread over several
// loopback source addresses (127.0.0.1, 127.0.0.2, ...), and reports the
// answers by status, the slowest answer, and Herald's peak RSS (VmHWM) before
// and after. bench/signin.sh sets Herald up and calls it; see bench/README.md.
//
// Each request uses its own connection and an email no account has, so every
// one that passes the throttles costs the server a full password check (the
// dummy check that hides whether an email exists).
//
// It only targets 127.0.0.1 and sends exactly -n requests.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	base := flag.String("url", "", "Herald base URL, http://127.0.0.1:PORT")
	n := flag.Int("n", 80, "concurrent sign-ins")
	addrs := flag.Int("addrs", 4, "loopback source addresses, 127.0.0.1 up to 127.0.0.N")
	pid := flag.Int("pid", 0, "pid of the Herald process, for its peak RSS (VmHWM)")
	flag.Parse()
	u, err := url.Parse(*base)
	if err != nil || u.Scheme != "http" || u.Hostname() != "127.0.0.1" {
		fatal(fmt.Errorf("-url must be http://127.0.0.1:PORT, got %q", *base))
	}
	if *n < 1 || *n > 10000 || *addrs < 1 || *addrs > 254 {
		fatal(fmt.Errorf("-n must be 1..10000 and -addrs 1..254"))
	}

	before := peakRSS(*pid)
	statuses := map[string]int{}
	var slowest time.Duration
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range *n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			from := net.IPv4(127, 0, 0, byte(1+i%*addrs))
			<-start
			t := time.Now()
			status := signIn(*base, from, fmt.Sprintf("flood-%d@example.com", i))
			d := time.Since(t)
			mu.Lock()
			statuses[status]++
			slowest = max(slowest, d)
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()

	keys := make([]string, 0, len(statuses))
	for k := range statuses {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s×%d", k, statuses[k]))
	}
	fmt.Printf("%d sign-ins from %d addresses: %s; slowest answer %s\n", *n, *addrs, strings.Join(parts, ", "),
		slowest.Round(time.Millisecond))
	if *pid > 0 {
		fmt.Printf("herald peak RSS (VmHWM): %.1f MiB before, %.1f MiB after\n", float64(before)/1024, float64(peakRSS(*pid))/1024)
	}
}

// signIn sends one wrong-password sign-in from the source address from, on a
// connection of its own, and returns the status (or the transport error).
func signIn(base string, from net.IP, email string) string {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: from}, Timeout: 10 * time.Second}
	c := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		DialContext:       func(ctx context.Context, nw, addr string) (net.Conn, error) { return d.DialContext(ctx, nw, addr) },
		DisableKeepAlives: true,
	}}
	body := fmt.Sprintf(`{"email":%q,"password":"wrong password"}`, email)
	res, err := c.Post(base+"/v1/auth/local", "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		return "error"
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return strconv.Itoa(res.StatusCode)
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

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "signinflood:", err)
	os.Exit(2)
}
