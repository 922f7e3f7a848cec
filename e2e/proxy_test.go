package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/internal/tlstest"
)

// from is an HTTP client whose connections come from the loopback address
// ip (127.0.0.2, ...; Linux routes all of 127.0.0.0/8 to loopback) and all
// go to addr, verified as proxyName against roots when roots is set. Each
// request has a connection of its own.
func from(ip, addr string, roots *x509.CertPool) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	return &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, addr)
			},
			TLSClientConfig:   &tls.Config{ServerName: proxyName, RootCAs: roots},
			ForceAttemptHTTP2: true,
			DisableKeepAlives: true,
		}}
}

// call sends a JSON body (a string as it is) with token and headers (name,
// value pairs) and returns the status and the decoded JSON answer.
func call(t *testing.T, c *http.Client, method, url string, body any, token string, headers ...string) (int, map[string]any) {
	t.Helper()
	r := testkit.Do(t, c, method, url, body, token, headers...)
	return r.Status, r.Body
}

// TestBehindNginx and TestBehindCaddy run Herald behind the proxy
// configured as docs/https.md says, with trusted_proxies = the proxy's
// address, and clients on different loopback addresses.
func TestBehindNginx(t *testing.T) {
	t.Parallel()
	testBehindProxy(t, startNginx)
}

func TestBehindCaddy(t *testing.T) {
	t.Parallel()
	testBehindProxy(t, startCaddy)
}

func testBehindProxy(t *testing.T, start startProxy) {
	certPEM, keyPEM := tlstest.SelfSigned(t, proxyName, 1)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "fullchain.pem"), filepath.Join(dir, "privkey.pem")
	tlstest.ReplaceFile(t, certFile, certPEM)
	tlstest.ReplaceFile(t, keyFile, keyPEM)
	roots := tlstest.Pool(t, certPEM)

	heraldAddr := testkit.FreeAddr(t)
	httpsAddr, httpAddr := start(t, certFile, keyFile, heraldAddr)
	base := "https://" + proxyName + ":" + fmt.Sprint(tlstest.Port(t, httpsAddr))
	p := startHeraldAt(t, time.Minute, heraldAddr, t.TempDir(), "HERALD_TRUSTED_PROXIES=127.0.0.1", "HERALD_BASE_URL="+base)
	logs := p.log
	const email, password = "proxied@example.com", "the-right-password"
	runHerald(t, p.env, password+"\n", "user", "add", email, "--name", "Proxied", "--password-stdin")
	// A 503 (every password check slot busy, as under the race detector
	// with other tests running) costs no budget: try again.
	signIn := func(c *http.Client, url, pw string, headers ...string) (int, map[string]any) {
		for try := 1; ; try++ {
			status, body := call(t, c, "POST", url+"/v1/auth/local", map[string]string{"email": email, "password": pw}, "", headers...)
			if status != http.StatusServiceUnavailable || try == 10 {
				return status, body
			}
			time.Sleep(time.Second)
		}
	}
	alice, bob := from("127.0.0.2", httpsAddr, roots), from("127.0.0.3", httpsAddr, roots)

	t.Run("sign-in throttles count each client apart", func(t *testing.T) {
		for i := 1; i <= 10; i++ {
			if status, body := signIn(alice, base, "wrong"); status != 401 {
				t.Fatalf("wrong password %d from 127.0.0.2: %d %v, want 401", i, status, body)
			}
		}
		if status, body := signIn(alice, base, password); status != 429 {
			t.Fatalf("11th try from 127.0.0.2: %d %v, want 429", status, body)
		}
		// Without trusted_proxies both would be the proxy, 127.0.0.1, and
		// share 127.0.0.2's exhausted budget.
		if status, body := signIn(bob, base, "wrong"); status != 401 {
			t.Errorf("wrong password from 127.0.0.3: %d %v, want 401 (not throttled)", status, body)
		}
		if status, body := signIn(bob, base, password); status != 200 {
			t.Errorf("right password from 127.0.0.3: %d %v, want 200", status, body)
		}
		for _, ip := range []string{"127.0.0.2", "127.0.0.3"} {
			if !strings.Contains(logs.String(), "remote="+ip) {
				t.Errorf("the access log never names the client %s:\n%s", ip, logs)
			}
		}
	})

	t.Run("forged X-Forwarded-For changes nothing", func(t *testing.T) {
		// Through the proxy: it appends the real client (nginx) or puts
		// it in place of the header (Caddy); either way the right-most
		// untrusted hop is the real client.
		if status, body := signIn(alice, base, password, "X-Forwarded-For", "127.0.0.9"); status != 429 {
			t.Errorf("127.0.0.2 through the proxy claiming 127.0.0.9: %d %v, want 429 (still 127.0.0.2)", status, body)
		}
		// Straight to Herald from an address that is not a trusted proxy:
		// the header is not read at all.
		direct := "http://" + heraldAddr
		if status, body := signIn(from("127.0.0.2", heraldAddr, nil), direct, password, "X-Forwarded-For", "127.0.0.9"); status != 429 {
			t.Errorf("127.0.0.2 straight to Herald claiming 127.0.0.9: %d %v, want 429", status, body)
		}
		if status, body := signIn(from("127.0.0.4", heraldAddr, nil), direct, "wrong", "X-Forwarded-For", "127.0.0.2"); status != 401 {
			t.Errorf("127.0.0.4 straight to Herald claiming 127.0.0.2: %d %v, want 401 (127.0.0.4's own budget)", status, body)
		}
	})

	_, sess := signIn(bob, base, password)
	token, _ := sess["access_token"].(string)
	if token == "" {
		t.Fatalf("no session from 127.0.0.3: %v", sess)
	}

	t.Run("a stream event arrives through the proxy within a second", func(t *testing.T) {
		status, ch := call(t, bob, "POST", base+"/v1/channels", map[string]string{"name": "through the proxy"}, token)
		if status != 201 {
			t.Fatalf("create channel: %d %v", status, ch)
		}
		hook, _ := ch["webhook_url"].(string)
		if !strings.HasPrefix(hook, base+"/v1/send/") {
			t.Fatalf("webhook_url %q is not under base_url %s", hook, base)
		}
		req, _ := http.NewRequest("GET", base+"/v1/stream", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		stream := from("127.0.0.3", httpsAddr, roots)
		stream.Timeout = 0 // the stream stays open
		res, err := stream.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		lines := make(chan string, 100)
		go func() {
			sc := bufio.NewScanner(res.Body)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		waitLine(t, lines, func(l string) bool { return l == ": connected" }, 5*time.Second)

		sent := time.Now()
		status, msg := call(t, bob, "POST", hook, map[string]string{"title": "through the proxy"}, "")
		id, _ := msg["id"].(string)
		if status != 200 || id == "" {
			t.Fatalf("send: %d %v", status, msg)
		}
		waitLine(t, lines, func(l string) bool { return strings.HasPrefix(l, "data:") && strings.Contains(l, id) }, time.Second)
		t.Logf("event for %s arrived %s after the send began", id, time.Since(sent).Round(time.Millisecond))
	})

	t.Run("the 1 MiB body limit holds through the proxy", func(t *testing.T) {
		big := `{"name":"big","icon":"` + strings.Repeat("a", 1<<20) + `"}`
		status, body := call(t, bob, "POST", base+"/v1/channels", big, token)
		if msg, _ := body["message"].(string); status != 413 || body["error"] != "payload_too_large" || !strings.Contains(msg, "larger than") {
			t.Errorf("a body over 1 MiB through the proxy: %d %v, want Herald's 413 payload_too_large", status, body)
		}
	})

	t.Run("plain HTTP is redirected", func(t *testing.T) {
		res, err := from("127.0.0.3", httpAddr, nil).Get("http://" + proxyName + "/v1/channels?x=1")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		// nginx sends to the default port, as in the docs; Caddy to the
		// port it serves HTTPS on.
		loc := res.Header.Get("Location")
		if res.StatusCode != 301 && res.StatusCode != 308 || !strings.HasPrefix(loc, "https://"+proxyName) || !strings.HasSuffix(loc, "/v1/channels?x=1") {
			t.Errorf("plain HTTP: %d to %q, want a permanent redirect to https://%s.../v1/channels?x=1", res.StatusCode, loc, proxyName)
		}
	})
}

// waitLine reads lines until match accepts one, failing the test after
// within.
func waitLine(t *testing.T, lines <-chan string, match func(string) bool, within time.Duration) {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the stream ended")
			}
			if match(l) {
				return
			}
		case <-timeout:
			t.Fatalf("no matching line within %s", within)
		}
	}
}
