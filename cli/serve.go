package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/delivery"
	"github.com/heraldhq/herald/forwarded"
	"github.com/heraldhq/herald/schedule"
	"github.com/heraldhq/herald/server"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/web"
)

func (a *app) serveCmd() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "serve [--listen ADDR]",
		Short: "Run the Herald server",
		Example: `  herald serve
  herald serve --listen 127.0.0.1:9000
  herald serve --config /etc/herald/herald.toml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if listen != "" {
				if _, _, err := net.SplitHostPort(listen); err != nil {
					return fmt.Errorf("--listen must be host:port (e.g. 127.0.0.1:8080 or :8080), got %q", listen)
				}
				a.getenv = withEnv(a.getenv, "HERALD_LISTEN", listen)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return a.serve(ctx)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address to listen on, host:port (overrides listen and HERALD_LISTEN; base_url follows it unless set)")
	return cmd
}

// withEnv returns getenv with one variable set to value, so that a flag
// goes through the same loading as the environment and base_url follows it.
func withEnv(getenv func(string) string, name, value string) func(string) string {
	return func(k string) string {
		if k == name {
			return value
		}
		return getenv(k)
	}
}

// serve runs until ctx ends, then shuts down in order: stop taking requests
// and drain the ones in flight, stop the workers and wait for them, and only
// then close the database.
func (a *app) serve(ctx context.Context) error {
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	if tuneGC(a.getenv) {
		go followHeap(ctx, time.Second)
	}
	tuneProcs(a.getenv)
	p, err := a.buildServe(ctx, cfg, newLogger(cfg, a.stderr))
	if err != nil {
		return err
	}
	defer p.close()
	a.logSetup(ctx, p.log, cfg, p.st)
	return p.run(ctx)
}

// serveParts is what serve builds from the configuration before it takes
// a request, and what it closes, in reverse order, once it has stopped.
type serveParts struct {
	log     *slog.Logger
	st      *store.Store
	jobs    *schedule.Scheduler
	queue   *delivery.Queue
	pusher  *delivery.Pusher
	httpSrv *http.Server
	ln      net.Listener
	front   *frontDoor
	closers []func()
}

func (p *serveParts) close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
	p.closers = nil
}

// buildServe opens the database and makes every part serve runs: the
// rules, the HTTP server and its listener, the scheduler and the delivery
// workers. What it opened is closed again when it fails.
func (a *app) buildServe(ctx context.Context, cfg config.Config, log *slog.Logger) (_ *serveParts, err error) {
	p := &serveParts{log: log}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	if cfg.Database.URL == "" {
		// Held while the server runs, so that herald vacuum can tell.
		release, err := lockDatabase(cfg.DBPath(), false)
		if errors.Is(err, errDatabaseHeld) {
			return nil, fmt.Errorf("%s is being rebuilt by herald vacuum; start the server when it is done: %w", cfg.DBPath(), err)
		} else if err != nil {
			return nil, err
		}
		p.closers = append(p.closers, release)
	}
	if p.st, err = openStore(ctx, cfg); err != nil {
		return nil, err
	}
	p.closers = append(p.closers, func() { p.st.Close() })

	// The rules refuse at send time what this policy refuses at dial time:
	// one policy, made from the configuration in one place.
	so := service.OptionsFrom(cfg)
	so.Log = log
	guard := *so.Callbacks
	if guard.AllowLoopback {
		log.Warn("delivery.allow_loopback is on: callbacks and Web Push endpoints may reach services on this host")
	}
	reg := prometheus.NewRegistry()
	subs, err := service.NewSubscriptions(cfg.Subscriptions, &http.Client{Timeout: 15 * time.Second}, nil)
	if err != nil {
		return nil, err
	}
	svc := service.New(p.st, so)
	var shared server.SharedLimits // SQLite: one process, its limits in memory
	if cfg.Database.URL != "" {
		shared = p.st // PostgreSQL: every replica spends the same tokens
	}
	srv := server.New(server.Options{Config: cfg, Store: p.st, Service: svc, Logger: log, Version: a.version(), UI: web.Handler(),
		Registry: reg, Subscriptions: subs, SharedLimits: shared})
	p.jobs = schedule.New(log)
	svc.Schedule(p.jobs)
	srv.Schedule(p.jobs)
	p.queue = delivery.New(p.st, delivery.Config{
		Workers: cfg.Delivery.Workers, Timeout: cfg.Delivery.Timeout.Duration, FirstByte: cfg.Delivery.FirstByte.Duration,
		BackoffBase: cfg.Delivery.BackoffBase.Duration, BackoffMax: cfg.Delivery.BackoffMax.Duration,
		MaxAttempts: cfg.Delivery.MaxAttempts, Guard: guard, UserAgent: "Herald-Webhooks/" + a.version(),
	}, delivery.Options{Logger: log, Registry: reg})
	if p.pusher, err = p.buildPusher(ctx, cfg, svc, guard, reg); err != nil {
		return nil, err
	}
	if err := p.listen(cfg, srv); err != nil {
		return nil, err
	}
	log.Info("herald listening", "addr", p.ln.Addr().String(), "https", cfg.TLS.Enabled(), "base_url", cfg.BaseURL,
		"db", cfg.DatabaseName(), "version", a.version())
	warnPlainHTTP(log, cfg, p.ln.Addr())
	return p, nil
}

// listen binds the configured address and sets up the HTTP server and
// its front door (plain HTTP, or Herald's own TLS).
func (p *serveParts) listen(cfg config.Config, srv *server.Server) error {
	proxies, err := forwarded.Parse(cfg.TrustedProxies)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	front, err := openFrontDoor(cfg, p.log)
	if err != nil {
		ln.Close()
		return err
	}
	p.ln, p.front = ln, front
	p.httpSrv = &http.Server{
		Handler:           proxies.Handler(srv.Handler()),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	p.httpSrv.RegisterOnShutdown(srv.CloseStreams)
	return nil
}

// run serves HTTP and runs the workers until ctx ends, the HTTP server
// fails or a worker stops, then shuts down in order: HTTP first (the
// requests in flight are finished), then the workers, waited for.
func (p *serveParts) run(ctx context.Context) error {
	log := p.log
	workers, stopWorkers := context.WithCancel(context.Background())
	defer stopWorkers()
	g, gctx := errgroup.WithContext(workers)
	g.Go(func() error { return p.jobs.Run(gctx) })
	g.Go(func() error { return p.queue.Run(gctx) })
	g.Go(func() error { return p.pusher.Run(gctx) })

	workerFailed := false
	serveErr := make(chan error, 1)
	go func() { serveErr <- p.front.serve(gctx, p.httpSrv, p.ln) }()

	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-serveErr:
		p.front.shutdown(context.Background())
		stopWorkers()
		_ = g.Wait()
		return fmt.Errorf("http server: %w", err)
	case <-gctx.Done():
		log.Error("a worker stopped; shutting down")
		workerFailed = true
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.httpSrv.Shutdown(shutdownCtx); err != nil {
		log.Error("http shutdown", "err", err)
	}
	p.front.shutdown(shutdownCtx)
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("http server", "err", err)
	}
	stopWorkers()
	werr := g.Wait()
	if werr != nil && !errors.Is(werr, context.Canceled) {
		log.Error("worker", "err", werr)
	}
	log.Info("stopped")
	if workerFailed {
		// Exit non-zero so a supervisor restarts the server.
		return fmt.Errorf("a background worker failed: %v", werr)
	}
	return nil
}
