package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/internal/tlstest"
)

// This file starts the reverse proxies of docs/https.md for proxy_test.go:
// Debian's nginx and Caddy, on loopback, with the documented configuration.

// The name the proxy serves; the tests dial its address, whatever the name.
const proxyName = "herald.example.com"

// proxyBin returns the Debian package's program (name, or the first of
// paths that exists), or skips the test when there is none (fails under
// CI=true, which installs it).
func proxyBin(t *testing.T, pkg string, paths ...string) string {
	t.Helper()
	for _, p := range paths {
		if bin, err := exec.LookPath(p); err == nil {
			return bin
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is needed under CI=true (apt-get install %s)", pkg, pkg)
	}
	testkit.Skip(t, fmt.Sprintf("no %s (apt-get install %s), so Herald behind it is not tested", pkg, pkg))
	return ""
}

// docsConfig is the lang block of docs/https.md with each replacement
// made. Each replaced text must be there exactly once, so the docs cannot
// drift from what the tests run.
func docsConfig(t *testing.T, lang string, replace ...[2]string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs/https.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/https.md has no ```%s block", lang)
	}
	conf := string(m[1])
	for _, r := range replace {
		if strings.Count(conf, r[0]) != 1 {
			t.Fatalf("docs/https.md's %s block should hold %q once:\n%s", lang, r[0], conf)
		}
		conf = strings.Replace(conf, r[0], r[1], 1)
	}
	return conf
}

// startProxy runs a reverse proxy in front of upstream on loopback, serving
// HTTPS for proxyName with the certificate in certFile and keyFile, and
// returns its HTTPS address and that of its plain-HTTP redirect.
type startProxy func(t *testing.T, certFile, keyFile, upstream string) (httpsAddr, httpAddr string)

// runProxy starts cmd and waits until it listens on addr. At cleanup it
// kills it and, if the test failed, logs what it printed and logFile.
func runProxy(t *testing.T, cmd *exec.Cmd, addr, logFile string) {
	t.Helper()
	out := &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	printed := func() string {
		errLog, _ := os.ReadFile(logFile)
		return fmt.Sprintf("%s printed:\n%s\n%s:\n%s", cmd.Path, out, logFile, errLog)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Log(printed())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		select {
		case err := <-exited:
			t.Fatalf("%s exited: %v\n%s", cmd.Path, err, printed())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not listen on %s after 10 s\n%s", cmd.Path, addr, printed())
		}
	}
}

// startNginx runs nginx in the foreground as one process, with the site
// of docs/https.md and everything it writes under a temporary directory.
func startNginx(t *testing.T, certFile, keyFile, upstream string) (httpsAddr, httpAddr string) {
	t.Helper()
	bin := proxyBin(t, "nginx", "nginx", "/usr/sbin/nginx")
	dir := t.TempDir()
	httpsAddr, httpAddr = testkit.FreeAddr(t), testkit.FreeAddr(t)
	site := docsConfig(t, "nginx",
		[2]string{"listen 80;", "listen " + httpAddr + ";"},
		[2]string{"listen 443 ssl http2;", "listen " + httpsAddr + " ssl http2;"},
		[2]string{"/etc/letsencrypt/live/herald.example.com/fullchain.pem", certFile},
		[2]string{"/etc/letsencrypt/live/herald.example.com/privkey.pem", keyFile},
		[2]string{"http://127.0.0.1:8080", "http://" + upstream})
	if err := os.WriteFile(filepath.Join(dir, "herald.conf"), []byte(site), 0o600); err != nil {
		t.Fatal(err)
	}
	// master_process off: one process as this user, so that it can write
	// its temporary files here even when the test runs as root.
	main := fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log info;
events { worker_connections 256; }
http {
    access_log %[1]s/access.log;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include %[1]s/herald.conf;
}
`, dir)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o600); err != nil {
		t.Fatal(err)
	}
	errLog := filepath.Join(dir, "error.log")
	runProxy(t, exec.Command(bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", errLog), httpsAddr, errLog)
	return httpsAddr, httpAddr
}

// startCaddy runs caddy with the Caddyfile of docs/https.md, given the
// test's certificate instead of getting one, bound to loopback, with its
// admin endpoint off and its state under a temporary directory.
func startCaddy(t *testing.T, certFile, keyFile, upstream string) (httpsAddr, httpAddr string) {
	t.Helper()
	bin := proxyBin(t, "caddy", "caddy")
	dir := t.TempDir()
	httpsAddr, httpAddr = testkit.FreeAddr(t), testkit.FreeAddr(t)
	site := docsConfig(t, "caddyfile",
		[2]string{"herald.example.com {", "herald.example.com {\n\tbind 127.0.0.1\n\ttls " + certFile + " " + keyFile},
		[2]string{"127.0.0.1:8080", upstream})
	global := fmt.Sprintf("{\n\tadmin off\n\thttp_port %d\n\thttps_port %d\n\tstorage file_system %s\n}\n\n",
		tlstest.Port(t, httpAddr), tlstest.Port(t, httpsAddr), filepath.Join(dir, "storage"))
	caddyfile := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(caddyfile, []byte(global+site), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", caddyfile, "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	runProxy(t, cmd, httpsAddr, filepath.Join(dir, "none"))
	return httpsAddr, httpAddr
}
