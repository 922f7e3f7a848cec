// Package server is Herald's HTTP API: routing, authentication, rate limits
// and one handler file per resource. Handlers parse, call one service
// method, and answer; plain listings and lookups read the store directly,
// and every write goes through service, where the rules are.
package server

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/ratelimit"
	"github.com/heraldhq/herald/schedule"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// Options are what New needs.
type Options struct {
	Config  config.Config
	Store   *store.Store
	Logger  *slog.Logger
	Version string
	// Now is the clock for rate limits and token lifetimes; default time.Now.
	Now func() time.Time
	// Registry receives the metrics; default a fresh registry.
	Registry *prometheus.Registry
	// UI, when set, is served for paths outside /v1 (the admin web UI).
	UI http.Handler
	// HTTPClient makes the outbound calls to identity providers; default
	// one with a 15-second timeout.
	HTTPClient *http.Client
	// Service is Herald's rules over Store; default one made here.
	Service *service.Service
	// Subscriptions are the configured app stores (NewSubscriptions); nil:
	// none, and their endpoints answer 404.
	Subscriptions *service.Subscriptions
	// SharedLimits, when set, keep the rate limits' buckets for every
	// replica on the database (PostgreSQL: the Store); nil: each bucket is
	// in this process's memory (SQLite, one process).
	SharedLimits SharedLimits
	// StreamBuffer is how many events each live stream may have waiting
	// before it falls behind and catches up from the database; default
	// hub.DefaultBuffer.
	StreamBuffer int
}

// Server is the HTTP API.
type Server struct {
	cfg     config.Config
	st      *store.Store
	svc     *service.Service
	log     *slog.Logger
	version string
	now     func() time.Time
	baseURL string
	// uploadLimit is the body limit of a send that carries a file; 0 while
	// attachments are off (every request then keeps maxBody).
	uploadLimit int64
	hsts        bool // base_url is https: answers carry Strict-Transport-Security

	router    *httprouter.Router
	handler   http.Handler
	metrics   *metrics
	registry  *prometheus.Registry
	limits    *ratelimit.Limiter // this process's buckets, also when shared ones fail
	shared    SharedLimits
	signins   *signinThrottle
	providers map[string]*auth.Provider
	subs      *service.Subscriptions // the app stores, for their webhooks' credentials
	purchases *service.Purchases     // the rules of purchases over subs

	started      time.Time       // for the uptime the admin pages show
	streams      context.Context // ends when CloseStreams is called
	closeStreams context.CancelFunc
	hub          *hub.Hub
	streamsOpen  *streamSlots               // each user's live streams open here, for the plan's max_streams
	credChanges  atomic.Int64               // credential changes as of the hub's last read
	heartbeat    atomic.Int64               // a stream's heartbeat interval (a time.Duration); tests shorten it
	beatOffset   atomic.Pointer[offsetFunc] // picks each stream's first heartbeat (firstBeat); tests fix it
}

// New builds the server and its routes.
func New(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	if opts.Service == nil {
		so := service.OptionsFrom(opts.Config)
		so.Now, so.Log = opts.Now, opts.Logger
		opts.Service = service.New(opts.Store, so)
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 15 * time.Second}
	}
	s := &Server{
		cfg: opts.Config, st: opts.Store, svc: opts.Service, log: opts.Logger, version: opts.Version, now: opts.Now,
		baseURL:     strings.TrimRight(opts.Config.BaseURL, "/"),
		hsts:        strings.HasPrefix(strings.ToLower(opts.Config.BaseURL), "https://"),
		registry:    opts.Registry,
		metrics:     newMetrics(opts.Registry),
		limits:      ratelimit.New(opts.Now),
		shared:      opts.SharedLimits,
		signins:     newSigninThrottle(opts.Now),
		streamsOpen: newStreamSlots(),
		subs:        opts.Subscriptions,
		purchases:   opts.Service.Purchases(opts.Subscriptions),
		started:     opts.Now(),
	}
	if a := opts.Config.Attachments; a.Enabled {
		s.uploadLimit = max(a.MaxFileSize.Bytes()+uploadOverhead, maxBody)
	}
	s.streams, s.closeStreams = context.WithCancel(context.Background())
	s.heartbeat.Store(int64(heartbeat))
	offset := offsetFunc(rand.Int64N)
	s.beatOffset.Store(&offset)
	s.hub = s.newHub(opts.StreamBuffer)
	s.streamMetrics(opts.Registry)
	s.providers = map[string]*auth.Provider{}
	for _, pc := range opts.Config.Auth.Providers {
		s.providers[pc.Name] = auth.NewProvider(auth.ProviderConfig{Name: pc.Name, Issuer: pc.Issuer,
			ClientID: pc.ClientID, ExtraAudiences: pc.ExtraAudiences, ClientSecret: pc.ClientSecret, Scopes: pc.Scopes,
			AdminClaim: pc.AdminClaim, AdminValues: pc.AdminValues}, opts.HTTPClient, opts.Now)
	}
	s.router = httprouter.New()
	s.router.HandleMethodNotAllowed = true
	s.router.RedirectTrailingSlash = false
	s.router.RedirectFixedPath = false
	s.router.NotFound = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.serveCompat(w, r) {
			return
		}
		if opts.UI != nil && !strings.HasPrefix(r.URL.Path, "/v1/") {
			opts.UI.ServeHTTP(w, r)
			return
		}
		s.writeError(w, r, errNotFound("no route for %s %s", r.Method, redactPath(r.URL.Path)))
	})
	s.router.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, newError(http.StatusMethodNotAllowed, "method_not_allowed",
			"%s is not allowed on %s; allowed: %s", r.Method, redactPath(r.URL.Path), w.Header().Get("Allow")))
	})
	s.routes()
	s.handler = s.outer(s.router)
	return s
}

// Handler returns the root HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Schedule adds the HTTP layer's background jobs to sch: writing API key
// use times in batches (and what is still buffered at shutdown), evicting
// idle rate-limit buckets, and looking up the identity providers early.
func (s *Server) Schedule(sch *schedule.Scheduler) {
	flush := func(ctx context.Context) {
		if err := s.svc.FlushKeyUse(ctx); err != nil {
			s.log.Warn("flush api key use", "err", err)
		}
	}
	sch.Every("api key use", 5*time.Second, flush)
	sch.AtExit("api key use", 5*time.Second, flush)
	sch.Every("rate limit buckets", 5*time.Second, func(ctx context.Context) {
		s.limits.Sweep()
		if s.shared == nil {
			return
		}
		if _, err := s.shared.SweepRateBuckets(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("sweep shared rate limits", "err", err)
		}
	})
	sch.Loop("identity providers", s.warmProviders)
	// Live streams wait for the hub: without it they get no events.
	sch.Loop("stream hub", func(ctx context.Context) {
		if err := s.hub.Run(ctx); err != nil {
			s.log.Error("stream hub", "err", err)
		}
	})
}

// handlerFunc is a handler that returns its error instead of writing it, so
// that no handler can forget to stop after an error.
type handlerFunc func(w http.ResponseWriter, r *http.Request, p httprouter.Params) error

// authedFunc is a handler for an authenticated caller.
type authedFunc func(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error

// handle registers h for method and path, with metrics labelled by the route
// pattern (never the raw path, which would leak tokens into labels).
func (s *Server) handle(method, path string, h handlerFunc) {
	rm := s.metrics.forRoute(method, path)
	s.router.Handle(method, path, func(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
		start := time.Now()
		sw, _ := w.(*statusWriter)
		defer func() {
			code := http.StatusOK
			if sw != nil && sw.status != 0 {
				code = sw.status
			}
			if v := recover(); v != nil {
				// outer recovers it and answers 500; count it as such.
				rm.observe(http.StatusInternalServerError, time.Since(start))
				panic(v)
			}
			rm.observe(code, time.Since(start))
		}()
		err := checkParams(r, p)
		if err == nil {
			err = h(w, r, p)
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	})
}

// public registers an endpoint that needs no credential.
func (s *Server) public(method, path string, h handlerFunc) { s.handle(method, path, h) }

// authed registers an endpoint for a session token or an API key, rate
// limited per user and per endpoint by the user's plan.
func (s *Server) authed(method, path string, h authedFunc) {
	s.handle(method, path, s.withAuth(method+" "+path, false, h))
}

// sessionOnly registers an endpoint that an API key may not call (403):
// managing keys, ending every session and deleting the account. A key is a
// script's credential; it must not be able to mint keys, lock its owner out
// or destroy the account.
func (s *Server) sessionOnly(method, path string, h authedFunc) {
	s.handle(method, path, s.withAuth(method+" "+path, true, h))
}

func (s *Server) withAuth(route string, needSession bool, h authedFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
		who, err := s.authenticate(r)
		if err != nil {
			return err
		}
		if needSession && who.sessionID == "" {
			return errForbidden("%s needs a session token (sign in); an API key cannot call it", route)
		}
		limit := s.cfg.Plans.Limits(who.user.Plan).APIPerMinute
		if err := s.rateLimit(w, r, "api|"+who.user.ID+"|"+route, limit); err != nil {
			return err
		}
		return h(w, r, p, who)
	}
}
