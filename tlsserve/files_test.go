package tlsserve

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/tlstest"
)

// serveTLS serves a trivial handler over HTTPS with tc on a loopback port
// and returns its address.
func serveTLS(t *testing.T, tc *tls.Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serve(t, ln, tc, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	return ln.Addr().String()
}

// serve serves h on ln until the test ends, over HTTPS when tc is set.
func serve(t *testing.T, ln net.Listener, tc *tls.Config, h http.Handler) {
	t.Helper()
	srv := &http.Server{TLSConfig: tc, ReadHeaderTimeout: 5 * time.Second, Handler: h}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if tc != nil {
			srv.ServeTLS(ln, "", "")
		} else {
			srv.Serve(ln)
		}
	}()
	t.Cleanup(func() { srv.Close(); <-done })
}

// servedLeaf opens a new TLS connection to addr for name and returns the
// certificate the server presented. roots nil: no verification.
func servedLeaf(t *testing.T, addr, name string, roots *x509.CertPool) (*x509.Certificate, error) {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr,
		&tls.Config{ServerName: name, RootCAs: roots, InsecureSkipVerify: roots == nil})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// waitServed waits up to within for a new connection to be served a
// certificate with the wanted serial number.
func waitServed(t *testing.T, addr, name string, serial int64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		leaf, err := servedLeaf(t, addr, name, nil)
		if err == nil && leaf.SerialNumber.Int64() == serial {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("serial %d not served within %s (last: %v, %v)", serial, within, leaf.SerialNumber, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logBuffer is a log destination the server's goroutines and the test share.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestCertificateFilesReload: replacing the files while the server runs
// puts the new certificate on the next connections, without a restart; a
// pair that does not load keeps the old one in service.
func TestCertificateFilesReload(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "fullchain.pem"), filepath.Join(dir, "privkey.pem")
	c1, k1 := tlstest.SelfSigned(t, "herald.test", 1)
	tlstest.ReplaceFile(t, certFile, c1)
	tlstest.ReplaceFile(t, keyFile, k1)
	logs := &logBuffer{}
	tl, err := New(Options{CertFile: certFile, KeyFile: keyFile, CheckEvery: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	addr := serveTLS(t, tl.Config())
	waitServed(t, addr, "herald.test", 1, time.Second)

	// A renewal: both files replaced.
	c2, k2 := tlstest.SelfSigned(t, "herald.test", 2)
	tlstest.ReplaceFile(t, certFile, c2)
	tlstest.ReplaceFile(t, keyFile, k2)
	waitServed(t, addr, "herald.test", 2, 5*time.Second)
	if !strings.Contains(logs.String(), "certificate reloaded") {
		t.Errorf("no reload in the log:\n%s", logs)
	}

	// Caught halfway: a new certificate with the old key does not load.
	c3, k3 := tlstest.SelfSigned(t, "herald.test", 3)
	tlstest.ReplaceFile(t, certFile, c3)
	time.Sleep(200 * time.Millisecond) // several checks
	waitServed(t, addr, "herald.test", 2, time.Second)
	if !strings.Contains(logs.String(), "do not load") {
		t.Errorf("the bad pair is not in the log:\n%s", logs)
	}
	// The key arrives, edited in place this time.
	if err := os.WriteFile(keyFile, k3, 0o600); err != nil {
		t.Fatal(err)
	}
	waitServed(t, addr, "herald.test", 3, 5*time.Second)
}

func TestCertificateFilesMissing(t *testing.T) {
	dir := t.TempDir()
	_, err := New(Options{CertFile: filepath.Join(dir, "none.pem"), KeyFile: filepath.Join(dir, "none.key")})
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("New with missing files: %v, want a not-exist error", err)
	}
}

// TestRedirect: the plain-HTTP listener sends GET and HEAD to the same path
// over HTTPS, and refuses the rest.
func TestRedirect(t *testing.T) {
	dir := t.TempDir()
	c, k := tlstest.SelfSigned(t, "herald.test", 1)
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	tlstest.ReplaceFile(t, certFile, c)
	tlstest.ReplaceFile(t, keyFile, k)
	tl, err := New(Options{CertFile: certFile, KeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tl.Redirect("http://herald.test"); err == nil {
		t.Error("Redirect to an http URL: no error")
	}
	h, err := tl.Redirect("https://herald.test:8443")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	base := "http://" + ln.Addr().String()
	for _, tt := range []struct {
		method, path string
		status       int
		location     string
	}{
		{"GET", "/v1/stream?x=1", 301, "https://herald.test:8443/v1/stream?x=1"},
		{"HEAD", "/", 301, "https://herald.test:8443/"},
		{"POST", "/v1/send/abc", 400, ""},
	} {
		req, _ := http.NewRequest(tt.method, base+tt.path, nil)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tt.status || res.Header.Get("Location") != tt.location {
			t.Errorf("%s %s: %d %q, want %d %q", tt.method, tt.path, res.StatusCode, res.Header.Get("Location"), tt.status, tt.location)
		}
	}
}
