package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/internal/tlstest"
)

// serveHerald runs herald serve in this process with env until the test
// ends, and waits up to a minute for ready to return nil. It returns the
// server's log.
func serveHerald(t *testing.T, env cliEnv, ready func() error) *testkit.SyncBuffer {
	t.Helper()
	logs := &testkit.SyncBuffer{}
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: logs, getenv: env.get}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- a.serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("serve still running 30s after its context ended")
		}
		if t.Failed() {
			t.Logf("herald serve logged:\n%s", logs)
		}
	})
	testkit.WaitReady(t, ready, served, logs)
	return logs
}

// TestServeHTTPSFromFiles: herald serve with [tls] cert_file and key_file
// answers over HTTPS (HTTP/2, HSTS), redirects plain HTTP from
// redirect_listen, and serves a replaced certificate without a restart.
func TestServeHTTPSFromFiles(t *testing.T) {
	t.Parallel()
	const name = "herald.test"
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "fullchain.pem"), filepath.Join(dir, "privkey.pem")
	c1, k1 := tlstest.SelfSigned(t, name, 1)
	c2, k2 := tlstest.SelfSigned(t, name, 2)
	tlstest.ReplaceFile(t, certFile, c1)
	tlstest.ReplaceFile(t, keyFile, k1)

	addr, redirectAddr := testkit.FreeAddr(t), testkit.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	base := "https://" + name + ":" + port
	env := newCLIEnv(t)
	env["HERALD_LISTEN"], env["HERALD_BASE_URL"] = addr, base
	env["HERALD_TLS_CERT_FILE"], env["HERALD_TLS_KEY_FILE"] = certFile, keyFile
	env["HERALD_TLS_REDIRECT_LISTEN"] = redirectAddr
	client := testkit.HTTPSClient(addr, name, tlstest.Pool(t, c1, c2))
	logs := serveHerald(t, env, func() error { _, err := testkit.GetOK(client, base+"/healthz"); return err })

	res, err := testkit.GetOK(client, base+"/healthz")
	if err != nil {
		t.Fatal(err)
	}
	if res.Proto != "HTTP/2.0" {
		t.Errorf("protocol %s, want HTTP/2.0", res.Proto)
	}
	if got := res.Header.Get("Strict-Transport-Security"); got != "max-age=63072000" {
		t.Errorf("HSTS %q, want max-age=63072000", got)
	}
	if got := res.TLS.PeerCertificates[0].SerialNumber.Int64(); got != 1 {
		t.Errorf("serial %d served, want 1", got)
	}

	noFollow := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err = noFollow.Get("http://" + redirectAddr + "/v1/stream?x=1")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != base+"/v1/stream?x=1" {
		t.Errorf("redirect listener: %d to %q, want 301 to %s/v1/stream?x=1", res.StatusCode, res.Header.Get("Location"), base)
	}

	// A renewal: new files; new connections get them within seconds.
	tlstest.ReplaceFile(t, certFile, c2)
	tlstest.ReplaceFile(t, keyFile, k2)
	deadline := time.Now().Add(15 * time.Second)
	for {
		res, err := testkit.GetOK(client, base+"/healthz")
		if err == nil && res.TLS.PeerCertificates[0].SerialNumber.Int64() == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replaced certificate is not served after 15 s (%v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if strings.Contains(logs.String(), "plain HTTP") {
		t.Errorf("a plain-HTTP warning while serving HTTPS:\n%s", logs)
	}
}

// TestPlainHTTPWarning: serve warns when it serves plain HTTP where other
// hosts can reach it, and when an https base_url (a proxy in front) comes
// without trusted_proxies.
func TestPlainHTTPWarning(t *testing.T) {
	t.Parallel()
	tcp := func(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 8080} }
	tests := []struct {
		name    string
		cfg     func(*config.Config)
		addr    net.Addr
		warning string // "" = none
	}{
		{"loopback", nil, tcp("127.0.0.1"), ""},
		{"IPv6 loopback", nil, tcp("::1"), ""},
		{"all IPv4 addresses", nil, tcp("0.0.0.0"), "serving plain HTTP on a non-loopback address"},
		{"all IPv6 addresses", nil, tcp("::"), "serving plain HTTP on a non-loopback address"},
		{"a LAN address", nil, tcp("192.168.1.5"), "serving plain HTTP on a non-loopback address"},
		{"https base_url, no trusted_proxies", func(c *config.Config) { c.BaseURL = "https://h.example.com" }, tcp("127.0.0.1"),
			"trusted_proxies is empty"},
		{"https base_url behind a trusted proxy", func(c *config.Config) {
			c.BaseURL, c.TrustedProxies = "https://h.example.com", []string{"10.0.0.0/8"}
		}, tcp("0.0.0.0"), ""},
		{"own TLS", func(c *config.Config) {
			c.BaseURL, c.TLS.CertFile, c.TLS.KeyFile = "https://h.example.com", "/c.pem", "/k.pem"
		}, tcp("0.0.0.0"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			var buf bytes.Buffer
			warnPlainHTTP(slog.New(slog.NewTextHandler(&buf, nil)), cfg, tt.addr)
			switch got := buf.String(); {
			case tt.warning == "" && got != "":
				t.Errorf("logged %q, want nothing", got)
			case tt.warning != "" && (!strings.Contains(got, tt.warning) || !strings.Contains(got, "level=WARN")):
				t.Errorf("logged %q, want a warning with %q", got, tt.warning)
			}
		})
	}

	// And serve logs it at start.
	_, port, _ := net.SplitHostPort(testkit.FreeAddr(t))
	env := newCLIEnv(t)
	env["HERALD_LISTEN"], env["HERALD_BASE_URL"] = "0.0.0.0:"+port, "http://127.0.0.1:"+port
	logs := serveHerald(t, env, func() error {
		_, err := testkit.GetOK(http.DefaultClient, "http://127.0.0.1:"+port+"/healthz")
		return err
	})
	if !strings.Contains(logs.String(), "serving plain HTTP on a non-loopback address") {
		t.Errorf("no warning at start on 0.0.0.0:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "docs/https.md") {
		t.Errorf("the warning does not point at docs/https.md:\n%s", logs)
	}
}
