// Package tlstest is what tests of HTTPS need: self-signed certificates,
// and Pebble, Let's Encrypt's test ACME server, run on loopback with a DNS
// server of its own that resolves every name to 127.0.0.1, so that Pebble
// really validates challenges against the server under test.
//
// Pebble is built from its module at PebbleVersion (go install through the
// module proxy; CI installs it the same way first). A test that cannot
// have it is skipped with a line saying why, except under CI=true, where
// it fails.
package tlstest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

const (
	// PebbleModule is Pebble's Go module.
	PebbleModule = "github.com/letsencrypt/pebble/v2"
	// PebbleVersion is the Pebble release the tests run (.ci/run reads it).
	PebbleVersion = "v2.10.1"
)

// Options say where Pebble validates and what it issues.
type Options struct {
	HTTPPort int // port Pebble fetches HTTP-01 challenges from
	TLSPort  int // port Pebble dials for TLS-ALPN-01 challenges
	// Validity of the certificates issued; 0: Pebble's default (90 days).
	Validity time.Duration
}

// Pebble is a running Pebble.
type Pebble struct {
	Directory string       // the ACME directory URL
	CAFile    string       // PEM of the CA that signed Pebble's own HTTPS certificate (for SSL_CERT_FILE)
	Client    *http.Client // an HTTP client that trusts CAFile
	mgmt      string       // management interface, https://host:port
}

var (
	buildOnce sync.Once
	pebbleBin string
	moduleDir string
	buildErr  error
)

// build installs Pebble into a cache directory of the user's (go install
// reuses its build cache, so only the first run compiles) and finds its
// module source, which holds the test certificates it serves with.
func build() {
	gobin, err := exec.LookPath("go")
	if err != nil {
		buildErr = err
		return
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "herald-test", "pebble-"+PebbleVersion)
	scratch, err := os.MkdirTemp("", "pebble-build-") // outside any module
	if err != nil {
		buildErr = err
		return
	}
	defer os.RemoveAll(scratch)
	install := exec.Command(gobin, "install", PebbleModule+"/cmd/pebble@"+PebbleVersion)
	install.Dir = scratch
	install.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-mod=mod")
	if out, err := install.CombinedOutput(); err != nil {
		buildErr = fmt.Errorf("go install pebble@%s: %v\n%s", PebbleVersion, err, out)
		return
	}
	download := exec.Command(gobin, "mod", "download", "-json", PebbleModule+"@"+PebbleVersion)
	download.Dir = scratch
	out, err := download.Output()
	if err != nil {
		buildErr = fmt.Errorf("go mod download pebble@%s: %v", PebbleVersion, err)
		return
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		buildErr = fmt.Errorf("go mod download pebble@%s: no module directory in %q", PebbleVersion, out)
		return
	}
	pebbleBin, moduleDir = filepath.Join(dir, "pebble"), mod.Dir
}

// Start runs Pebble until the test ends.
func Start(t testing.TB, o Options) *Pebble {
	t.Helper()
	buildOnce.Do(build)
	if buildErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pebble is needed under CI=true: %v", buildErr)
		}
		testkit.Skip(t, fmt.Sprintf("pebble (Let's Encrypt's test ACME server) cannot be built, so ACME is not tested: %v", buildErr))
	}
	dns := startDNS(t)
	listen, mgmt := testkit.FreeAddr(t), testkit.FreeAddr(t)
	certs := filepath.Join(moduleDir, "test", "certs")
	profile := map[string]any{"description": "test"}
	if o.Validity > 0 {
		profile["validityPeriod"] = int64(o.Validity / time.Second)
	}
	cfg := map[string]any{"pebble": map[string]any{
		"listenAddress":           listen,
		"managementListenAddress": mgmt,
		"certificate":             filepath.Join(certs, "localhost", "cert.pem"),
		"privateKey":              filepath.Join(certs, "localhost", "key.pem"),
		"httpPort":                o.HTTPPort,
		"tlsPort":                 o.TLSPort,
		"ocspResponderURL":        "",
		"retryAfter":              map[string]int{"authz": 1, "order": 1},
		"keyAlgorithm":            "ecdsa",
		"profiles":                map[string]any{"default": profile},
	}}
	b, _ := json.Marshal(cfg)
	cfgFile := filepath.Join(t.TempDir(), "pebble.json")
	if err := os.WriteFile(cfgFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(pebbleBin, "-config", cfgFile, "-dnsserver", dns)
	cmd.Env = append(os.Environ(),
		"PEBBLE_VA_NOSLEEP=1",      // validate at once
		"PEBBLE_WFE_NONCEREJECT=0", // no made-up bad nonces: each run the same
		"PEBBLE_AUTHZREUSE=0",      // every order validated again, renewals too
	)
	logs := &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start pebble: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("pebble logged:\n%s", logs)
		}
	})

	caFile := filepath.Join(certs, "pebble.minica.pem")
	pemCA, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pemCA)
	p := &Pebble{Directory: "https://" + listen + "/dir", CAFile: caFile, mgmt: "https://" + mgmt,
		Client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
	deadline := time.Now().Add(15 * time.Second)
	for {
		res, err := p.Client.Get(p.Directory)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-exited:
			t.Fatalf("pebble exited:\n%s", logs)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("pebble's directory did not answer within 15s (%v):\n%s", err, logs)
		}
	}
}

// Roots returns the roots Pebble issues under (they are new on every run).
func (p *Pebble) Roots(t testing.TB) *x509.CertPool {
	t.Helper()
	res, err := p.Client.Get(p.mgmt + "/roots/0")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("pebble /roots/0: %d %v", res.StatusCode, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatalf("pebble /roots/0 is not PEM: %q", b)
	}
	return pool
}

// Port is the port of a host:port address.
func Port(t testing.TB, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
