// Package tlsserve is HTTPS served by Herald itself: a certificate from
// files, re-read when they change, or certificates from an ACME CA such
// as Let's Encrypt (TLS-ALPN-01 on the HTTPS port, HTTP-01 on the
// redirect listener), and the plain-HTTP handler that redirects to HTTPS.
package tlsserve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"
)

// Options configure New. Either CertFile and KeyFile, or Domains.
type Options struct {
	CertFile, KeyFile string
	// CheckEvery is how often, at most, the files are checked for a
	// change; default 5 s.
	CheckEvery time.Duration

	Domains   []string // host names to get certificates for from the ACME CA
	Email     string   // contact for the CA's notices; optional
	Directory string   // the CA's ACME directory URL
	CacheDir  string   // keeps the account key and the certificates
	// RenewBefore is how long before expiry a certificate is renewed;
	// 0: autocert's choice (a third of its lifetime, at most 30 days).
	RenewBefore time.Duration
	// HTTPClient talks to the CA; default one with a 30-second timeout.
	HTTPClient *http.Client

	Logger *slog.Logger
	Now    func() time.Time // default time.Now
}

// TLS is a ready tls.Config and what goes with it.
type TLS struct {
	config  *tls.Config
	manager *autocert.Manager // nil with certificate files
	domains []string
	log     *slog.Logger
}

// New loads the certificate files, or sets up ACME.
func New(o Options) (*TLS, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.CheckEvery <= 0 {
		o.CheckEvery = 5 * time.Second
	}
	t := &TLS{domains: o.Domains, log: o.Logger}
	switch {
	case o.CertFile != "" && len(o.Domains) > 0:
		return nil, errors.New("tls: certificate files and ACME domains are exclusive")
	case o.CertFile != "":
		f, err := newFileCert(o.CertFile, o.KeyFile, o.CheckEvery, o.Now, o.Logger)
		if err != nil {
			return nil, err
		}
		t.config = &tls.Config{GetCertificate: f.GetCertificate}
	case len(o.Domains) > 0:
		if o.HTTPClient == nil {
			o.HTTPClient = &http.Client{Timeout: 30 * time.Second}
		}
		t.manager = &autocert.Manager{
			// Configuring acme_domains is the operator's consent to the CA's terms.
			Prompt:      autocert.AcceptTOS,
			Cache:       autocert.DirCache(o.CacheDir),
			HostPolicy:  autocert.HostWhitelist(o.Domains...),
			Email:       o.Email,
			RenewBefore: o.RenewBefore,
			Client:      &acme.Client{DirectoryURL: o.Directory, HTTPClient: o.HTTPClient, UserAgent: "herald"},
		}
		t.config = t.manager.TLSConfig()
		t.config.GetCertificate = t.getACMECertificate
	default:
		return nil, errors.New("tls: neither certificate files nor ACME domains")
	}
	t.config.MinVersion = tls.VersionTLS12
	return t, nil
}

// Config is the tls.Config to serve with (http.Server.TLSConfig; ServeTLS
// adds HTTP/2).
func (t *TLS) Config() *tls.Config { return t.config }

// getACMECertificate is autocert's hook, with the failures to get a
// certificate for one of our names in the log: autocert itself logs nothing.
func (t *TLS) getACMECertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	cert, err := t.manager.GetCertificate(hello)
	if err != nil && t.ours(hello.ServerName) {
		t.log.Warn("tls: no certificate", "name", hello.ServerName, "err", err)
	}
	return cert, err
}

func (t *TLS) ours(name string) bool {
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	for _, d := range t.domains {
		if d == name {
			return true
		}
	}
	return false
}

// Prefetch gets the ACME certificate of every domain now, rather than at
// the first visitor's handshake, and logs how it went. It needs the HTTPS
// listener (TLS-ALPN-01) or the redirect listener (HTTP-01) to be serving
// already. With certificate files it does nothing.
func (t *TLS) Prefetch(ctx context.Context) {
	if t.manager == nil {
		return
	}
	for _, d := range t.domains {
		// A hello an ECDSA-capable client sends, as browsers do: that is the
		// certificate (and key type) most visitors will be served.
		hello := &tls.ClientHelloInfo{ServerName: d,
			CipherSuites:     []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
			SignatureSchemes: []tls.SignatureScheme{tls.ECDSAWithP256AndSHA256},
			SupportedCurves:  []tls.CurveID{tls.CurveP256},
		}
		if ctx.Err() != nil {
			return
		}
		cert, err := t.manager.GetCertificate(hello)
		if err != nil {
			t.log.Error("tls: could not get a certificate from the ACME CA", "name", d, "err", err)
			continue
		}
		t.log.Info("tls: certificate ready", "name", d, "not_after", cert.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
}

// Redirect is the handler of the plain-HTTP listener: it answers ACME
// HTTP-01 challenges when ACME is on, and sends GET and HEAD to the same
// path on base (the https base_url). Anything else gets 400: a request
// with a body or a credential has already crossed the network in the
// clear, and a redirect would hide that from whoever sent it.
func (t *TLS) Redirect(base string) (http.Handler, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("tls: redirect target %q is not an https URL", base)
	}
	origin := "https://" + u.Host
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "use HTTPS: "+origin, http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, origin+r.URL.RequestURI(), http.StatusMovedPermanently)
	})
	if t.manager == nil {
		return h, nil
	}
	acmeH := t.manager.HTTPHandler(h) // also lets autocert try HTTP-01
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// autocert checks Host against the domains as it is, port and all.
		// A CA asks on port 80, which Host leaves out, but a CA that
		// validates on another port (Pebble in the tests) names it.
		if host, _, err := net.SplitHostPort(r.Host); err == nil {
			r2 := *r
			r2.Host = host
			r = &r2
		}
		acmeH.ServeHTTP(w, r)
	}), nil
}
