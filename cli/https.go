package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/tlsserve"
)

// frontDoor is how serve meets the network: plain HTTP, or HTTPS from
// [tls] with an optional plain-HTTP listener that redirects to it (and
// answers ACME HTTP-01 challenges).
type frontDoor struct {
	tls        *tlsserve.TLS // nil: plain HTTP
	redirect   *http.Server  // nil: no redirect listener
	redirectLn net.Listener
	log        *slog.Logger
}

// openFrontDoor loads the certificates or sets up ACME, and opens the
// redirect listener.
func openFrontDoor(cfg config.Config, log *slog.Logger) (*frontDoor, error) {
	f := &frontDoor{log: log}
	if !cfg.TLS.Enabled() {
		return f, nil
	}
	t := cfg.TLS
	var err error
	f.tls, err = tlsserve.New(tlsserve.Options{CertFile: t.CertFile, KeyFile: t.KeyFile,
		Domains: t.ACMEDomains, Email: t.ACMEEmail, Directory: t.ACMEDirectory, CacheDir: cfg.ACMECacheDir(), Logger: log})
	if err != nil {
		return nil, err
	}
	if t.RedirectListen == "" {
		return f, nil
	}
	h, err := f.tls.Redirect(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if f.redirectLn, err = net.Listen("tcp", t.RedirectListen); err != nil {
		return nil, fmt.Errorf("listen on %s (tls.redirect_listen): %w", t.RedirectListen, err)
	}
	f.redirect = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 10 * time.Second, IdleTimeout: 60 * time.Second}
	return f, nil
}

// serve serves srv on ln, over HTTPS when [tls] is set, with the redirect
// listener beside it, until srv is shut down; it returns what srv's Serve
// returns. ACME certificates are fetched once both are serving.
func (f *frontDoor) serve(ctx context.Context, srv *http.Server, ln net.Listener) error {
	if f.redirect != nil {
		f.log.Info("redirecting to HTTPS", "addr", f.redirectLn.Addr().String())
		go func() {
			if err := f.redirect.Serve(f.redirectLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				f.log.Error("redirect listener", "err", err)
			}
		}()
	}
	if f.tls == nil {
		return srv.Serve(ln)
	}
	srv.TLSConfig = f.tls.Config()
	// The listeners are open, so the CA's check reaches them; it waits in
	// their backlog until Serve accepts.
	go f.tls.Prefetch(ctx)
	return srv.ServeTLS(ln, "", "")
}

// shutdown stops the redirect listener.
func (f *frontDoor) shutdown(ctx context.Context) {
	if f.redirect != nil {
		if err := f.redirect.Shutdown(ctx); err != nil {
			f.log.Error("redirect listener shutdown", "err", err)
		}
	}
}

// warnPlainHTTP says at start what a plain-HTTP setup costs. Over plain
// HTTP on an address other hosts can reach, browsers refuse service
// workers, Web Push, installing the app and Secure cookies. With an https
// base_url, a reverse proxy ends TLS in front of Herald; without
// trusted_proxies every client then seems to come from the proxy.
func warnPlainHTTP(log *slog.Logger, cfg config.Config, addr net.Addr) {
	if cfg.TLS.Enabled() {
		return
	}
	https := strings.HasPrefix(strings.ToLower(cfg.BaseURL), "https://")
	tcp, ok := addr.(*net.TCPAddr)
	loopback := ok && tcp.IP.IsLoopback()
	switch {
	case !https && !loopback:
		log.Warn("serving plain HTTP on a non-loopback address: browsers allow push notifications, installing the app "+
			"and Secure cookies only over HTTPS. Set [tls] or put Herald behind an HTTPS reverse proxy (see docs/https.md)",
			"addr", addr.String(), "base_url", cfg.BaseURL)
	case https && len(cfg.TrustedProxies) == 0:
		log.Warn("base_url is https but trusted_proxies is empty: behind a reverse proxy every client seems to come "+
			"from the proxy's address, so the sign-in throttles count everyone together; set trusted_proxies (see docs/https.md)",
			"addr", addr.String())
	}
}
