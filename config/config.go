// Package config holds Herald's configuration: the TOML file, its defaults,
// HERALD_* environment overrides and validation. config.example.toml at the
// repository root documents every key and is parsed by a test, so the two
// cannot drift apart.
package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/BurntSushi/toml"
)

// Duration is a time.Duration that TOML reads from a Go duration string ("10m").
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string such as "90s" or "720h".
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := time.ParseDuration(string(text))
	if err != nil {
		return fmt.Errorf("invalid duration %q (use a Go duration such as \"10m\" or \"720h\")", text)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration in Go's duration syntax.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(d.Duration.String()), nil
}

// Config is the whole configuration of a Herald server.
type Config struct {
	Listen      string `toml:"listen"`       // address the HTTP server binds
	BaseURL     string `toml:"base_url"`     // public URL, used for webhook_url values and OIDC redirects; default from Listen
	DataDir     string `toml:"data_dir"`     // directory holding herald.db
	DefaultPlan string `toml:"default_plan"` // plan of new users: "free" or "pro"
	LogFormat   string `toml:"log_format"`   // "text" or "json"
	LogLevel    string `toml:"log_level"`    // "debug", "info", "warn" or "error"
	Metrics     bool   `toml:"metrics"`      // serve GET /metrics
	// MetricsToken, when set, must be sent as "Authorization: Bearer
	// <token>" to read /metrics.
	MetricsToken string `toml:"metrics_token"`
	// TrustedProxies are the networks (CIDRs or single addresses) of the
	// reverse proxies in front of Herald. Only a request whose TCP peer is
	// in one of them has its X-Forwarded-For, X-Forwarded-Proto or
	// Forwarded headers believed.
	TrustedProxies []string `toml:"trusted_proxies"`

	TLS           TLS           `toml:"tls"`
	Database      Database      `toml:"database"`
	Auth          Auth          `toml:"auth"`
	Plans         Plans         `toml:"plans"`
	Polling       Polling       `toml:"polling"`
	Delivery      Delivery      `toml:"delivery"`
	Push          Push          `toml:"push"`
	Subscriptions Subscriptions `toml:"subscriptions"`
	Retention     Retention     `toml:"retention"`
	Attachments   Attachments   `toml:"attachments"`
}

// Attachments configures the files and pictures a message may carry: sent
// with it (multipart, or ntfy's upload), or named by URL and fetched at
// send time. Each user's plan bounds the bytes kept (attachment_quota).
type Attachments struct {
	Enabled     bool `toml:"enabled"`       // false: sends that carry a file are refused
	MaxFileSize Size `toml:"max_file_size"` // the largest file
	// Fetch: an attachment named by URL is fetched at send time and kept
	// (through the callbacks' address policy). false keeps the URL as a
	// link, unfetched.
	Fetch        bool     `toml:"fetch"`
	FetchTimeout Duration `toml:"fetch_timeout"` // the whole fetch, the body included
	// MaxInMemory is how many uploads and fetches are held in memory at
	// once; more wait for a place, up to their request's end.
	MaxInMemory int `toml:"max_in_memory"`
}

// LetsEncrypt is the ACME directory used when tls.acme_directory is not set.
const LetsEncrypt = "https://acme-v02.api.letsencrypt.org/directory"

// TLS configures HTTPS served by Herald itself: from certificate files, or
// from an ACME certificate authority. Neither set: plain HTTP (the usual
// setup behind a reverse proxy that ends TLS).
type TLS struct {
	CertFile       string   `toml:"cert_file"`       // PEM chain, re-read when it changes
	KeyFile        string   `toml:"key_file"`        // PEM private key, re-read with CertFile
	ACMEDomains    []string `toml:"acme_domains"`    // names to get certificates for; turns ACME on
	ACMEEmail      string   `toml:"acme_email"`      // contact for expiry notices; optional
	ACMEDirectory  string   `toml:"acme_directory"`  // the CA's directory URL
	RedirectListen string   `toml:"redirect_listen"` // plain-HTTP address that redirects to HTTPS and answers HTTP-01
}

// Enabled reports whether Herald serves HTTPS itself.
func (t TLS) Enabled() bool { return t.CertFile != "" || len(t.ACMEDomains) > 0 }

// ACMECacheDir is where certificates and the ACME account key are kept.
func (c Config) ACMECacheDir() string { return filepath.Join(c.DataDir, "acme") }

// Database configures the database: SQLite in DataDir, or PostgreSQL at URL.
type Database struct {
	// URL, postgres://user:pass@host:5432/db?sslmode=..., puts everything
	// in that PostgreSQL database, which several Herald processes may
	// share. Empty: SQLite, in DataDir.
	URL string `toml:"url"`
	// Synchronous is "full" (an acknowledged write survives power loss) or
	// "normal" (it survives a process crash only; on PostgreSQL a commit
	// then does not wait for its WAL flush).
	Synchronous string `toml:"synchronous"`
}

// Auth configures sign-in and sessions.
type Auth struct {
	SessionTTL     Duration   `toml:"session_ttl"`     // access-token lifetime
	RefreshTTL     Duration   `toml:"refresh_ttl"`     // refresh-token lifetime
	LocalPasswords bool       `toml:"local_passwords"` // allow POST /v1/auth/local
	Providers      []Provider `toml:"providers"`       // OIDC providers; not overridable from the environment
}

// Provider is one OIDC identity provider. Its Name is the {idp} path segment.
type Provider struct {
	Name           string   `toml:"name"`
	Issuer         string   `toml:"issuer"`
	ClientID       string   `toml:"client_id"`
	ClientSecret   string   `toml:"client_secret"`   // needed only for the admin UI's browser sign-in
	Scopes         []string `toml:"scopes"`          // default ["openid", "email", "profile"]
	ExtraAudiences []string `toml:"extra_audiences"` // other client IDs whose ID tokens are accepted
	AllowSignup    *bool    `toml:"allow_signup"`    // nil means true; read it through SignupAllowed
	LinkByEmail    bool     `toml:"link_by_email"`   // link to an existing user with the same verified email
	AdminClaim     string   `toml:"admin_claim"`     // claim whose values can make a user admin
	AdminValues    []string `toml:"admin_values"`    // values of AdminClaim that make a user admin
}

// SignupAllowed reports whether a first sign-in through p creates a user
// (allow_signup, true when not set).
func (p Provider) SignupAllowed() bool {
	return p.AllowSignup == nil || *p.AllowSignup
}

// Plan holds the rate limits of one plan and how much of each thing a user
// on it may have. A cap of 0 means the plan's built-in default (Limits
// fills it in), so a configuration written before a cap existed keeps a
// sensible one.
type Plan struct {
	SendPerMinute int `toml:"send_per_minute"` // per channel
	APIPerMinute  int `toml:"api_per_minute"`  // per user, per endpoint
	MaxChannels   int `toml:"max_channels"`    // channels a user owns
	MaxDevices    int `toml:"max_devices"`     // devices registered for push
	MaxFolders    int `toml:"max_folders"`     // folders
	MaxPins       int `toml:"max_pins"`        // pinned channels
	MaxStreams    int `toml:"max_streams"`     // live streams open at once, counted by each server process
	// AttachmentQuota bounds the bytes of files and pictures a user's
	// messages keep at once (thumbnails not counted).
	AttachmentQuota Size `toml:"attachment_quota"`
}

// The built-in caps of each plan, which a cap of 0 stands for.
var (
	freeCaps = Plan{MaxChannels: 50, MaxDevices: 20, MaxFolders: 50, MaxPins: 50, MaxStreams: 10, AttachmentQuota: 100 << 20}
	proCaps  = Plan{MaxChannels: 500, MaxDevices: 100, MaxFolders: 500, MaxPins: 500, MaxStreams: 50, AttachmentQuota: 1 << 30}
)

// withCaps returns p with each cap that is 0 taken from def.
func (p Plan) withCaps(def Plan) Plan {
	p.MaxChannels = orDefault(p.MaxChannels, def.MaxChannels)
	p.MaxDevices = orDefault(p.MaxDevices, def.MaxDevices)
	p.MaxFolders = orDefault(p.MaxFolders, def.MaxFolders)
	p.MaxPins = orDefault(p.MaxPins, def.MaxPins)
	p.MaxStreams = orDefault(p.MaxStreams, def.MaxStreams)
	if p.AttachmentQuota == 0 {
		p.AttachmentQuota = def.AttachmentQuota
	}
	return p
}

func orDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// The plans a user can be on. A running app-store subscription pays for
// PlanPro.
const (
	PlanFree = "free"
	PlanPro  = "pro"
)

// Plans holds the limits of the free and pro plans.
type Plans struct {
	Free Plan `toml:"free"`
	Pro  Plan `toml:"pro"`
}

// EffectivePlan names the plan whose limits apply to a user on plan: pro,
// or free for anything else (as Limits decides).
func EffectivePlan(plan string) string {
	if plan == PlanPro {
		return PlanPro
	}
	return PlanFree
}

// Limits returns the limits of the named plan: "pro" gives Pro, anything
// else Free. Caps left at 0 are the plan's built-in ones.
func (p Plans) Limits(plan string) Plan {
	if plan == PlanPro {
		return p.Pro.withCaps(proCaps)
	}
	return p.Free.withCaps(freeCaps)
}

// Polling configures stored responses that scripts poll for.
type Polling struct {
	ResponseTTL Duration `toml:"response_ttl"` // lifetime of a stored response that nobody reads
}

// Delivery configures the durable callback queue, and where callbacks and
// Web Push may connect. Loopback, unspecified, link-local and cloud metadata
// addresses are refused whatever BlockedNetworks says (netguard.Policy has
// the whole rule); AllowLoopback and BlockPrivate are the two switches.
type Delivery struct {
	Workers         int      `toml:"workers"`
	Timeout         Duration `toml:"timeout"`            // per attempt
	FirstByte       Duration `toml:"first_byte_timeout"` // wait for the answer to begin, within timeout
	BackoffBase     Duration `toml:"backoff_base"`       // wait before the second attempt; doubles each time
	BackoffMax      Duration `toml:"backoff_max"`        // cap of the wait
	MaxAttempts     int      `toml:"max_attempts"`
	BlockedNetworks []string `toml:"blocked_networks"` // more CIDRs to refuse, on top of the built-in ones
	AllowLoopback   bool     `toml:"allow_loopback"`   // let callbacks reach 127.0.0.0/8 and ::1 (receivers on this host)
	BlockPrivate    bool     `toml:"block_private"`    // refuse private ranges too (instances shared with strangers)
}

// Push configures the push workers and providers; an empty provider is not
// configured.
type Push struct {
	Workers     int      `toml:"workers"`      // concurrent push jobs
	MaxAttempts int      `toml:"max_attempts"` // tries of a transient failure to one device
	BackoffBase Duration `toml:"backoff_base"` // wait before the second try; doubles each time
	BackoffMax  Duration `toml:"backoff_max"`  // cap of the wait

	APNs    APNs    `toml:"apns"`
	FCM     FCM     `toml:"fcm"`
	WebPush WebPush `toml:"webpush"`
}

// APNs configures Apple Push Notifications with a token (.p8) key.
type APNs struct {
	KeyFile    string `toml:"key_file"`
	KeyID      string `toml:"key_id"`
	TeamID     string `toml:"team_id"`
	Topic      string `toml:"topic"`
	Production bool   `toml:"production"`
	Host       string `toml:"host"` // overrides the APNs host, for tests
	// CriticalAlerts sends urgent messages as critical alerts, which
	// sound through silent mode and Focus: only for an app that has
	// Apple's critical-alerts entitlement. Off: time-sensitive.
	CriticalAlerts bool `toml:"critical_alerts"`
}

// FCM configures Firebase Cloud Messaging (HTTP v1) with a service account.
type FCM struct {
	CredentialsFile string `toml:"credentials_file"` // service-account JSON
	ProjectID       string `toml:"project_id"`
	Endpoint        string `toml:"endpoint"` // overrides the FCM base URL, for tests
}

// WebPush configures browser push; the VAPID keys live in the database.
type WebPush struct {
	Subject string `toml:"subject"` // "mailto:..." or "https://..." contact for push services
}

// Subscriptions configures in-app purchase verification.
type Subscriptions struct {
	Apple  Apple  `toml:"apple"`
	Google Google `toml:"google"`
}

// Apple configures App Store subscription verification.
type Apple struct {
	BundleID      string   `toml:"bundle_id"`
	ProProductIDs []string `toml:"pro_product_ids"`
	RootCAFile    string   `toml:"root_ca_file"` // empty: the bundled Apple Root CA G3
}

// Google configures Google Play subscription verification.
type Google struct {
	PackageName     string   `toml:"package_name"`
	ProProductIDs   []string `toml:"pro_product_ids"`
	CredentialsFile string   `toml:"credentials_file"` // service-account JSON
	Endpoint        string   `toml:"endpoint"`         // overrides the Play Developer API base URL, for tests
	PubsubAudience  string   `toml:"pubsub_audience"`  // audience of the Pub/Sub push OIDC token
	PubsubEmail     string   `toml:"pubsub_email"`     // service account the push token must name; "" = any
}

// Retention configures the background sweep of old data.
type Retention struct {
	Messages Duration `toml:"messages"` // messages older than this are deleted
}

// Default returns the built-in configuration, used when no file is given.
// Its BaseURL is the one that follows from its Listen.
func Default() Config {
	c := defaults()
	c.BaseURL = BaseURLFor(c.Listen, c.TLS)
	return c
}

// defaults is Default without a BaseURL: Load fills it from the final
// Listen when neither the file nor the environment set it.
func defaults() Config {
	return Config{
		Listen:      "127.0.0.1:8080",
		DataDir:     "./data",
		DefaultPlan: PlanFree,
		LogFormat:   "text",
		LogLevel:    "info",
		Metrics:     true,
		// Empty, not nil, as the example file's "= []" decodes.
		TrustedProxies: []string{},
		TLS:            TLS{ACMEDomains: []string{}, ACMEDirectory: LetsEncrypt},
		Database:       Database{Synchronous: "full"},
		Auth: Auth{
			SessionTTL:     Duration{time.Hour},
			RefreshTTL:     Duration{720 * time.Hour},
			LocalPasswords: true,
		},
		Plans: Plans{
			Free: Plan{SendPerMinute: 5, APIPerMinute: 60}.withCaps(freeCaps),
			Pro:  Plan{SendPerMinute: 200, APIPerMinute: 200}.withCaps(proCaps),
		},
		Polling: Polling{ResponseTTL: Duration{10 * time.Minute}},
		Delivery: Delivery{
			Workers:         8,
			Timeout:         Duration{10 * time.Second},
			FirstByte:       Duration{5 * time.Second},
			BackoffBase:     Duration{time.Minute},
			BackoffMax:      Duration{time.Hour},
			MaxAttempts:     8,
			BlockedNetworks: []string{}, // empty, not nil, as the example file's "= []" decodes
		},
		Push: Push{Workers: 4, MaxAttempts: 5, BackoffBase: Duration{10 * time.Second}, BackoffMax: Duration{5 * time.Minute}},
		Subscriptions: Subscriptions{
			// Empty rather than nil, so an example file that writes "= []" equals the default.
			Apple:  Apple{ProProductIDs: []string{}},
			Google: Google{ProProductIDs: []string{}},
		},
		Retention: Retention{Messages: Duration{720 * time.Hour}},
		Attachments: Attachments{Enabled: true, MaxFileSize: 15 << 20, Fetch: true,
			FetchTimeout: Duration{10 * time.Second}, MaxInMemory: 4},
	}
}

// DBPath is the path of the SQLite database inside DataDir.
func (c Config) DBPath() string {
	return filepath.Join(c.DataDir, "herald.db")
}

// DatabaseDSN is what the store opens: the PostgreSQL URL if one is set,
// else the SQLite file.
func (c Config) DatabaseDSN() string {
	if c.Database.URL != "" {
		return c.Database.URL
	}
	return c.DBPath()
}

// DatabaseName names the database for logs and messages, without the
// password a PostgreSQL URL may hold.
func (c Config) DatabaseName() string {
	if c.Database.URL == "" {
		return c.DBPath()
	}
	u, err := url.Parse(c.Database.URL)
	if err != nil {
		return "postgres (unparsable url)"
	}
	return u.Redacted()
}

// Load reads the TOML file at path (path "" means: no file, defaults only),
// then applies HERALD_* environment overrides read through getenv, then
// validates. A nil getenv reads no environment.
func Load(path string, getenv func(string) string) (Config, error) {
	cfg := defaults()
	var data string
	var md toml.MetaData
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return Config{}, fmt.Errorf("config: %w", err)
		}
		data = string(b)
		md, err = toml.Decode(data, &cfg)
		if err != nil {
			// toml's errors already carry the line and the last key.
			return Config{}, fmt.Errorf("config: %s: %w", path, fixLine(err, data))
		}
		if err := checkKeys(path, data, md); err != nil {
			return Config{}, err
		}
	}
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	fromEnv, err := applyEnv(&cfg, getenv)
	if err != nil {
		return Config{}, err
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = BaseURLFor(cfg.Listen, cfg.TLS)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, locate(err, path, data, md, fromEnv)
	}
	return cfg, nil
}

// locate adds where a bad value came from (environment variable or file line)
// to each field error of a validation failure.
func locate(err error, path, data string, md toml.MetaData, fromEnv map[string]string) error {
	var errs []error
	for _, e := range unjoin(err) {
		var fe *fieldError
		if !errors.As(e, &fe) {
			errs = append(errs, e)
			continue
		}
		switch name, ok := fromEnv[fe.key]; {
		case ok:
			errs = append(errs, fmt.Errorf("config: %s (from %s): %s", fe.key, name, fe.msg))
		case path != "" && md.IsDefined(fe.path...):
			if line := lineOf(data, md, fe.path); line > 0 {
				errs = append(errs, fmt.Errorf("config: %s: line %d: %s: %s", path, line, fe.key, fe.msg))
			} else {
				errs = append(errs, fmt.Errorf("config: %s: %s: %s", path, fe.key, fe.msg))
			}
		default:
			errs = append(errs, e)
		}
	}
	return errors.Join(errs...)
}

// unjoin splits an errors.Join error into its parts.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
