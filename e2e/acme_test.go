package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/internal/tlstest"
)

// TestServeACME runs the herald binary with [tls] acme_domains against
// Pebble, which validates by TLS-ALPN-01 on Herald's port: Herald gets a
// certificate at start, keeps it in data_dir/acme and serves it to clients
// that trust Pebble's root. The binary trusts Pebble's directory through
// SSL_CERT_FILE, as an operator with a private CA would.
func TestServeACME(t *testing.T) {
	t.Parallel()
	const name = "herald.test"
	bin := heraldBin(t)
	addr := testkit.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	p := tlstest.Start(t, tlstest.Options{TLSPort: tlstest.Port(t, addr), HTTPPort: tlstest.Port(t, testkit.FreeAddr(t))})
	dataDir := t.TempDir()
	base := "https://" + name + ":" + port

	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HERALD_") && !strings.HasPrefix(kv, "SSL_CERT_") {
			env = append(env, kv)
		}
	}
	env = append(env, "HERALD_DATA_DIR="+dataDir, "HERALD_LISTEN="+addr, "HERALD_BASE_URL="+base,
		"HERALD_TLS_ACME_DOMAINS="+name, "HERALD_TLS_ACME_DIRECTORY="+p.Directory,
		"HERALD_TLS_ACME_EMAIL=ops@herald.test", "SSL_CERT_FILE="+p.CAFile)
	cmd := exec.Command(bin, "serve")
	cmd.Dir, cmd.Env = t.TempDir(), env
	logs := &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("herald serve logged:\n%s", logs)
		}
	})

	client := testkit.HTTPSClient(addr, name, p.Roots(t))
	testkit.WaitReady(t, func() error { _, err := testkit.GetOK(client, base+"/healthz"); return err }, exited, logs)
	res, err := testkit.GetOK(client, base+"/healthz")
	if err != nil {
		t.Fatal(err)
	}
	if leaf := res.TLS.PeerCertificates[0]; len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != name {
		t.Errorf("served certificate for %q, want [%s]", leaf.DNSNames, name)
	}
	// The start's own fetch logs once it returns, which can be a moment
	// after a client's handshake got the same certificate.
	testkit.WaitFor(t, `"certificate ready" in the log`, 15*time.Second, func() bool {
		return strings.Contains(logs.String(), "certificate ready")
	})
	if _, err := os.Stat(filepath.Join(dataDir, "acme", name)); err != nil {
		t.Errorf("certificate not cached in data_dir/acme: %v", err)
	}
}
