// Package service holds Herald's rules: what a send must be, who may see,
// answer, list, delete and redeliver a message and how, the poll, how an
// approval resolves, what is stored as an answer and what goes out as a
// callback, what a channel, device, folder and pin may be, API keys, the
// caps of each plan on what a user may create, the server's Web Push keys,
// the plan an in-app purchase pays for, and sign-in: password checks,
// sessions (their lifetimes, refresh-token rotation, sign-out) and who a
// credential signs in. Every write goes through it. The HTTP handlers
// (server) and the command line call it; it calls the store. It knows nothing of HTTP: a refusal is an
// *Error of a Kind, which the caller turns into its own terms.
package service

import (
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/store"
)

// Options are the settings of the rules.
type Options struct {
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Log receives what background jobs have to say; default slog.Default.
	Log *slog.Logger
	// ResponseTTL is how long an answer waits to be polled before it
	// expires; Retention, how long messages are kept.
	ResponseTTL, Retention time.Duration
	// DefaultPlan is the plan of a user without a running subscription.
	DefaultPlan string
	// Plans are the plans' limits and caps; a cap left at 0 is the
	// plan's built-in one.
	Plans config.Plans
	// Callbacks is the policy callbacks are dialled under: a send whose
	// callback_url names a host it is sure to refuse (a literal address,
	// localhost) is refused at once. Nil checks nothing at send time.
	Callbacks *netguard.Policy
	// SessionTTL is how long a session's access token lives; RefreshTTL,
	// its refresh token (and a browser session). Zero is the configuration's
	// default.
	SessionTTL, RefreshTTL time.Duration
	// Attachments are the limits of files sent with messages; a zero
	// limit is the configuration's default. Enabled false refuses them.
	Attachments config.Attachments
	// BaseURL is the server's public URL, which signed attachment links
	// are built on.
	BaseURL string
	// Fetcher fetches the files sends name by URL; nil is a client under
	// Callbacks' policy (what a send is refused for and what is dialled
	// are the same policy).
	Fetcher *http.Client
}

// OptionsFrom takes the rules' settings from the configuration.
func OptionsFrom(cfg config.Config) Options {
	// config has checked the networks: none can fail to parse here.
	blocked, _ := netguard.ParsePrefixes(cfg.Delivery.BlockedNetworks)
	return Options{ResponseTTL: cfg.Polling.ResponseTTL.Duration, Retention: cfg.Retention.Messages.Duration,
		DefaultPlan: cfg.DefaultPlan, Plans: cfg.Plans, Callbacks: &netguard.Policy{Blocked: blocked,
			AllowLoopback: cfg.Delivery.AllowLoopback, BlockPrivate: cfg.Delivery.BlockPrivate},
		SessionTTL: cfg.Auth.SessionTTL.Duration, RefreshTTL: cfg.Auth.RefreshTTL.Duration,
		Attachments: cfg.Attachments, BaseURL: cfg.BaseURL}
}

// Service is Herald's rules over one store.
type Service struct {
	st     *store.Store
	now    func() time.Time
	log    *slog.Logger
	opts   Options
	keyUse *keyUse // API key use times not yet written (FlushKeyUse)

	slots        chan struct{} // files in memory (HoldUpload)
	decodes      chan struct{} // pictures being decoded for a thumbnail: one at a time
	fetcher      *http.Client
	linkKeyCache atomic.Pointer[[]byte]
}

// New returns the rules over st.
func New(st *store.Store, opts Options) *Service {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = config.Default().Auth.SessionTTL.Duration
	}
	if opts.RefreshTTL <= 0 {
		opts.RefreshTTL = config.Default().Auth.RefreshTTL.Duration
	}
	def := config.Default().Attachments
	a := &opts.Attachments
	if a.MaxFileSize <= 0 {
		a.MaxFileSize = def.MaxFileSize
	}
	if a.FetchTimeout.Duration <= 0 {
		a.FetchTimeout = def.FetchTimeout
	}
	if a.MaxInMemory <= 0 {
		a.MaxInMemory = def.MaxInMemory
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	if opts.Fetcher == nil {
		var guard netguard.Policy
		if opts.Callbacks != nil {
			guard = *opts.Callbacks
		}
		opts.Fetcher = guard.ClientWith(netguard.Limits{Total: a.FetchTimeout.Duration})
	}
	return &Service{st: st, now: opts.Now, log: opts.Log, opts: opts, keyUse: newKeyUse(),
		slots: make(chan struct{}, a.MaxInMemory), decodes: make(chan struct{}, 1), fetcher: opts.Fetcher}
}
