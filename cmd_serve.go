package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/delivery"
	"github.com/heraldhq/herald/forwarded"
	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/push"
	"github.com/heraldhq/herald/schedule"
	"github.com/heraldhq/herald/server"
	"github.com/heraldhq/herald/service"
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
	log := newLogger(cfg, a.stderr)
	if cfg.Database.URL == "" {
		// Held while the server runs, so that herald vacuum can tell.
		release, err := lockDatabase(cfg.DBPath(), false)
		if errors.Is(err, errDatabaseHeld) {
			return fmt.Errorf("%s is being rebuilt by herald vacuum; start the server when it is done: %w", cfg.DBPath(), err)
		} else if err != nil {
			return err
		}
		defer release()
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()

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
		return err
	}
	svc := service.New(st, so)
	var shared server.SharedLimits // SQLite: one process, its limits in memory
	if cfg.Database.URL != "" {
		shared = st // PostgreSQL: every replica spends the same tokens
	}
	srv := server.New(server.Options{Config: cfg, Store: st, Service: svc, Logger: log, Version: version, UI: web.Handler(),
		Registry: reg, Subscriptions: subs, SharedLimits: shared})
	jobs := schedule.New(log)
	svc.Schedule(jobs)
	srv.Schedule(jobs)
	queue := delivery.New(st, delivery.Config{
		Workers: cfg.Delivery.Workers, Timeout: cfg.Delivery.Timeout.Duration, FirstByte: cfg.Delivery.FirstByte.Duration,
		BackoffBase: cfg.Delivery.BackoffBase.Duration, BackoffMax: cfg.Delivery.BackoffMax.Duration,
		MaxAttempts: cfg.Delivery.MaxAttempts, Guard: guard, UserAgent: "Herald-Webhooks/" + version,
	}, delivery.Options{Logger: log, Registry: reg})
	dispatcher, err := a.pushDispatcher(ctx, cfg, svc, guard, log)
	if err != nil {
		return err
	}
	answerKey, err := svc.NotificationKey(ctx)
	if err != nil {
		return err
	}
	pusher := delivery.NewPusher(st, dispatcher, delivery.PushConfig{Workers: cfg.Push.Workers,
		MaxAttempts: cfg.Push.MaxAttempts, BackoffBase: cfg.Push.BackoffBase.Duration, BackoffMax: cfg.Push.BackoffMax.Duration,
		AnswerKey: answerKey},
		delivery.Options{Logger: log, Registry: reg})
	proxies, err := forwarded.Parse(cfg.TrustedProxies)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	front, err := openFrontDoor(cfg, log)
	if err != nil {
		ln.Close()
		return err
	}
	httpSrv := &http.Server{
		Handler:           proxies.Handler(srv.Handler()),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	httpSrv.RegisterOnShutdown(srv.CloseStreams)
	log.Info("herald listening", "addr", ln.Addr().String(), "https", cfg.TLS.Enabled(), "base_url", cfg.BaseURL,
		"db", cfg.DatabaseName(), "version", version)
	warnPlainHTTP(log, cfg, ln.Addr())
	a.logSetup(ctx, log, cfg, st)

	workers, stopWorkers := context.WithCancel(context.Background())
	defer stopWorkers()
	g, gctx := errgroup.WithContext(workers)
	g.Go(func() error { return jobs.Run(gctx) })
	g.Go(func() error { return queue.Run(gctx) })
	g.Go(func() error { return pusher.Run(gctx) })

	workerFailed := false
	serveErr := make(chan error, 1)
	go func() { serveErr <- front.serve(gctx, httpSrv, ln) }()

	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-serveErr:
		front.shutdown(context.Background())
		stopWorkers()
		_ = g.Wait()
		return fmt.Errorf("http server: %w", err)
	case <-gctx.Done():
		log.Error("a worker stopped; shutting down")
		workerFailed = true
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := httpSrv.Shutdown(shutdownCtx); err != nil {
		log.Error("http shutdown", "err", err)
	}
	front.shutdown(shutdownCtx)
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

// pushDispatcher sets up each configured push provider. One that is not
// configured is skipped with one log line: its devices get no pushes. APNs
// and FCM go to hosts the operator configured; a Web Push endpoint is any
// URL a user registered, so it goes through guard like a callback.
func (a *app) pushDispatcher(ctx context.Context, cfg config.Config, svc *service.Service, guard netguard.Policy, log *slog.Logger) (*push.Dispatcher, error) {
	client := &http.Client{Timeout: 30 * time.Second}
	var apns *push.APNs
	if c := cfg.Push.APNs; c.KeyFile != "" {
		var err error
		if apns, err = push.NewAPNs(push.APNsConfig{KeyFile: c.KeyFile, KeyID: c.KeyID, TeamID: c.TeamID, Topic: c.Topic,
			Production: c.Production, Host: c.Host}, nil); err != nil {
			return nil, err
		}
	} else {
		log.Info("push: APNs not configured ([push.apns] key_file); iOS devices get no pushes")
	}
	var fcm *push.FCM
	if c := cfg.Push.FCM; c.CredentialsFile != "" {
		var err error
		if fcm, err = push.NewFCM(push.FCMConfig{CredentialsFile: c.CredentialsFile, ProjectID: c.ProjectID, Endpoint: c.Endpoint}, client); err != nil {
			return nil, err
		}
	} else {
		log.Info("push: FCM not configured ([push.fcm] credentials_file); Android devices get no pushes")
	}
	pub, priv, err := svc.VAPIDKeys(ctx)
	if err != nil {
		return nil, err
	}
	subject := cfg.Push.WebPush.Subject
	if subject == "" {
		// VAPID wants a mailto: or https: contact; an https base_url will do.
		subject = "mailto:herald@localhost"
		if strings.HasPrefix(cfg.BaseURL, "https://") {
			subject = cfg.BaseURL
		}
		log.Info("push: [push.webpush] subject not set; set it to a mailto: address push services can reach", "using", subject)
	}
	return push.NewDispatcher(apns, fcm, push.NewWebPush(subject, pub, priv, guard.Client(30*time.Second))), nil
}
