package tlsserve

import (
	"context"
	"crypto/x509"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/internal/tlstest"
)

// The name the tests get certificates for; acmetest's DNS server resolves
// it to 127.0.0.1 for Pebble.
const acmeName = "herald.test"

// acmeSetup is one ACME-served HTTPS listener and its CA.
type acmeSetup struct {
	tls    *TLS
	addr   string // the HTTPS listener
	pebble *tlstest.Pebble
	roots  *x509.CertPool
	logs   *logBuffer
}

// prefetch gets the certificate as serve does at start, and fails the
// test unless it was logged as ready.
func (a *acmeSetup) prefetch(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a.tls.Prefetch(ctx)
	if !strings.Contains(a.logs.String(), "certificate ready") {
		t.Fatalf("no certificate:\n%s", a.logs)
	}
}

// served dials the HTTPS listener trusting only Pebble's roots: the
// handshake verifies the chain and the name.
func (a *acmeSetup) served(t *testing.T) *x509.Certificate {
	t.Helper()
	leaf, err := servedLeaf(t, a.addr, acmeName, a.roots)
	if err != nil {
		t.Fatalf("TLS to %s as %s, trusting Pebble's root: %v\n%s", a.addr, acmeName, err, a.logs)
	}
	if len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != acmeName {
		t.Fatalf("served certificate names %q, want [%s]", leaf.DNSNames, acmeName)
	}
	return leaf
}

// TestACMETLSALPN01: Pebble validates on the HTTPS port only. A
// certificate is issued, served to clients trusting Pebble's root, and
// renewed before it expires: a later connection gets another one.
func TestACMETLSALPN01(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := tlstest.Port(t, testkit.FreeAddr(t)) // HTTP-01 cannot succeed
	// 30 s certificates: autocert renews a third of the lifetime before expiry.
	p := tlstest.Start(t, tlstest.Options{TLSPort: tlstest.Port(t, ln.Addr().String()), HTTPPort: closedPort, Validity: 30 * time.Second})
	a := &acmeSetup{pebble: p, addr: ln.Addr().String(), logs: &logBuffer{}}
	a.tls, err = New(Options{Domains: []string{acmeName}, Directory: p.Directory, CacheDir: t.TempDir(),
		HTTPClient: p.Client, Logger: slog.New(slog.NewTextHandler(a.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	serve(t, ln, a.tls.Config(), http.NotFoundHandler())
	a.prefetch(t)
	a.roots = p.Roots(t)
	first := a.served(t)
	if life := first.NotAfter.Sub(first.NotBefore); life > time.Minute {
		t.Fatalf("certificate lives %s; Pebble was asked for 30 s", life)
	}

	deadline := time.Now().Add(45 * time.Second)
	for {
		if leaf := a.served(t); leaf.SerialNumber.Cmp(first.SerialNumber) != 0 {
			if !leaf.NotAfter.After(first.NotAfter) {
				t.Fatalf("renewed certificate expires %s, not after the first's %s", leaf.NotAfter, first.NotAfter)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("certificate %s (expiring %s) not renewed by %s", first.SerialNumber, first.NotAfter, time.Now())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestACMEHTTP01: Pebble cannot reach the HTTPS port, only the redirect
// listener (the port-80 setup). The certificate comes through HTTP-01, is
// served, and is kept in the cache directory: a restart serves it again
// without asking the CA.
func TestACMEHTTP01(t *testing.T) {
	httpsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	redirectLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := tlstest.Port(t, testkit.FreeAddr(t)) // TLS-ALPN-01 cannot succeed
	p := tlstest.Start(t, tlstest.Options{TLSPort: closedPort, HTTPPort: tlstest.Port(t, redirectLn.Addr().String())})
	cache := t.TempDir()
	a := &acmeSetup{pebble: p, addr: httpsLn.Addr().String(), logs: &logBuffer{}}
	a.tls, err = New(Options{Domains: []string{acmeName}, Directory: p.Directory, CacheDir: cache,
		HTTPClient: p.Client, Logger: slog.New(slog.NewTextHandler(a.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	redirect, err := a.tls.Redirect("https://" + acmeName)
	if err != nil {
		t.Fatal(err)
	}
	var challenges atomic.Int32
	serve(t, redirectLn, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/acme-challenge/") {
			challenges.Add(1)
		}
		redirect.ServeHTTP(w, r)
	}))
	serve(t, httpsLn, a.tls.Config(), http.NotFoundHandler())
	a.prefetch(t)
	if challenges.Load() == 0 {
		t.Fatal("the certificate came without an HTTP-01 challenge on the redirect listener")
	}
	a.roots = p.Roots(t)
	first := a.served(t)

	// A restart over the same cache: the same certificate, no new order.
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	again := &acmeSetup{pebble: p, addr: ln2.Addr().String(), roots: a.roots, logs: &logBuffer{}}
	again.tls, err = New(Options{Domains: []string{acmeName}, Directory: "https://127.0.0.1:1/unreachable", CacheDir: cache,
		Logger: slog.New(slog.NewTextHandler(again.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	serve(t, ln2, again.tls.Config(), http.NotFoundHandler())
	again.prefetch(t)
	if leaf := again.served(t); leaf.SerialNumber.Cmp(first.SerialNumber) != 0 {
		t.Errorf("after a restart: serial %s, want the cached %s", leaf.SerialNumber, first.SerialNumber)
	}
}
