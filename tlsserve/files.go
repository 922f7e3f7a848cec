package tlsserve

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// fileCert serves the certificate in a pair of PEM files and picks up a
// renewal without a restart: on a handshake, at most once per every, it
// compares the files' modification times and sizes with those it loaded,
// and re-reads them when either changed. A pair that does not load (a
// renewal caught halfway, the key not yet written) keeps the old
// certificate in service and is tried again at the next check.
type fileCert struct {
	certFile, keyFile string
	every             time.Duration
	now               func() time.Time
	log               *slog.Logger

	mu      sync.Mutex
	cert    *tls.Certificate
	loaded  [2]fileStamp // of certFile and keyFile, as loaded
	failed  [2]fileStamp // of the last pair that did not load, logged once
	checked time.Time
}

// fileStamp is what tells that a file changed.
type fileStamp struct {
	mod  time.Time
	size int64
}

func stampOf(path string) (fileStamp, error) {
	fi, err := os.Stat(path) // follows symbolic links, as certbot's live/ files are
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{fi.ModTime(), fi.Size()}, nil
}

// newFileCert loads the pair once; Herald does not start without it.
func newFileCert(certFile, keyFile string, every time.Duration, now func() time.Time, log *slog.Logger) (*fileCert, error) {
	f := &fileCert{certFile: certFile, keyFile: keyFile, every: every, now: now, log: log}
	stamps, cert, err := f.load()
	if err != nil {
		return nil, err
	}
	f.cert, f.loaded, f.checked = cert, stamps, now()
	return f, nil
}

// load reads both files, with their stamps taken before reading, so that a
// change during the read is seen at the next check.
func (f *fileCert) load() ([2]fileStamp, *tls.Certificate, error) {
	var stamps [2]fileStamp
	for i, path := range []string{f.certFile, f.keyFile} {
		s, err := stampOf(path)
		if err != nil {
			return stamps, nil, fmt.Errorf("tls: %w", err)
		}
		stamps[i] = s
	}
	cert, err := tls.LoadX509KeyPair(f.certFile, f.keyFile)
	if err != nil {
		return stamps, nil, fmt.Errorf("tls: load %s and %s: %w", f.certFile, f.keyFile, err)
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return stamps, nil, fmt.Errorf("tls: parse %s: %w", f.certFile, err)
		}
	}
	return stamps, &cert, nil
}

// GetCertificate is the tls.Config hook.
func (f *fileCert) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now := f.now(); now.Sub(f.checked) >= f.every {
		f.checked = now
		f.reloadIfChanged()
	}
	return f.cert, nil
}

func (f *fileCert) reloadIfChanged() {
	var stamps [2]fileStamp
	for i, path := range []string{f.certFile, f.keyFile} {
		s, err := stampOf(path)
		if err != nil {
			return // moved away for a moment, or gone: keep serving what we have
		}
		stamps[i] = s
	}
	if stamps == f.loaded || stamps == f.failed {
		return
	}
	stamps, cert, err := f.load()
	if err != nil {
		f.failed = stamps
		f.log.Warn("tls: the certificate files changed but do not load; still serving the previous certificate", "err", err)
		return
	}
	f.cert, f.loaded, f.failed = cert, stamps, [2]fileStamp{}
	f.log.Info("tls: certificate reloaded", "file", f.certFile, "subject", cert.Leaf.Subject.String(),
		"not_after", cert.Leaf.NotAfter.UTC().Format(time.RFC3339))
}
