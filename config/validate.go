package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// fieldError is one bad value, named by its dotted key so that Load can add
// the file line or environment variable it came from.
type fieldError struct {
	key  string   // as shown: "delivery.workers", "auth.providers[1].issuer"
	path []string // for a lookup in the file; nil inside arrays of tables
	msg  string
}

func (e *fieldError) Error() string { return "config: " + e.key + ": " + e.msg }

type problems []error

func (p *problems) add(key, format string, args ...any) {
	e := &fieldError{key: key, msg: fmt.Sprintf(format, args...)}
	if !strings.Contains(key, "[") {
		e.path = strings.Split(key, ".")
	}
	*p = append(*p, e)
}

func (p *problems) oneOf(key, got string, allowed ...string) {
	if !slices.Contains(allowed, got) {
		p.add(key, "must be one of %q, got %q", allowed, got)
	}
}

func (p *problems) positive(key string, d Duration) {
	if d.Duration <= 0 {
		p.add(key, "must be a positive duration, got %q", d.Duration.String())
	}
}

func (p *problems) atLeast(key string, n, least int) {
	if n < least {
		p.add(key, "must be at least %d, got %d", least, n)
	}
}

// httpURL checks an absolute http(s) URL; empty is allowed when optional.
func (p *problems) httpURL(key, s string, optional bool) {
	if s == "" && optional {
		return
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.add(key, "must be an absolute http(s) URL, got %q", s)
	}
}

// providerName is what may appear as the {idp} path segment.
var providerName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// reservedNames share the /v1/auth/:idp route with sign-in (httprouter cannot hold /v1/auth/refresh beside /v1/auth/:idp; see server/routes.go).
var reservedNames = []string{"local", "refresh", "logout", "logout-all"}

// defaultScopes are requested from a provider that sets none.
var defaultScopes = []string{"openid", "email", "profile"}

// Validate checks every value and reports all bad ones at once, each naming
// its key. It also normalizes: base_url loses its trailing slash and
// providers without scopes get the default scopes.
func (c *Config) Validate() error {
	var p problems
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		p.add("listen", "must be host:port (e.g. \"127.0.0.1:8080\" or \":8080\"), got %q", c.Listen)
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.add("base_url", "must be an absolute http(s) URL, got %q", c.BaseURL)
	} else if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		p.add("base_url", "must not carry a query, fragment or user info, got %q", c.BaseURL)
	}
	if c.DataDir == "" {
		p.add("data_dir", "must not be empty")
	}
	p.oneOf("default_plan", c.DefaultPlan, PlanFree, PlanPro)
	p.oneOf("log_format", c.LogFormat, "text", "json")
	p.oneOf("log_level", c.LogLevel, "debug", "info", "warn", "error")
	p.oneOf("database.synchronous", c.Database.Synchronous, "full", "normal")
	if d := c.Database.URL; d != "" {
		if u, err := url.Parse(d); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			p.add("database.url", "must be a PostgreSQL URL such as postgres://user:password@host:5432/herald")
		}
	}
	for _, n := range c.TrustedProxies {
		if !isNetwork(n) {
			p.add("trusted_proxies", "%q is not a CIDR or an IP address (e.g. \"10.0.0.0/8\" or \"127.0.0.1\")", n)
		}
	}
	c.validateTLS(&p)

	p.positive("auth.session_ttl", c.Auth.SessionTTL)
	p.positive("auth.refresh_ttl", c.Auth.RefreshTTL)
	c.validateProviders(&p)

	for _, plan := range []struct {
		name string
		p    Plan
	}{{PlanFree, c.Plans.Free}, {PlanPro, c.Plans.Pro}} {
		p.atLeast("plans."+plan.name+".send_per_minute", plan.p.SendPerMinute, 1)
		p.atLeast("plans."+plan.name+".api_per_minute", plan.p.APIPerMinute, 1)
		for _, c := range []struct {
			key string
			n   int
		}{{"max_channels", plan.p.MaxChannels}, {"max_devices", plan.p.MaxDevices}, {"max_folders", plan.p.MaxFolders},
			{"max_pins", plan.p.MaxPins}, {"max_streams", plan.p.MaxStreams}} {
			if c.n < 0 {
				p.add("plans."+plan.name+"."+c.key, "must be at least 1 (or 0 for the built-in default), got %d", c.n)
			}
		}
	}
	p.positive("polling.response_ttl", c.Polling.ResponseTTL)
	c.validateDelivery(&p)
	c.validatePushWorkers(&p)
	c.validatePush(&p)
	p.httpURL("subscriptions.google.endpoint", c.Subscriptions.Google.Endpoint, true)
	p.positive("retention.messages", c.Retention.Messages)
	c.validateAttachments(&p)
	return errors.Join(p...)
}

func (c *Config) validateProviders(p *problems) {
	seen := map[string]bool{}
	for i := range c.Auth.Providers {
		pr := &c.Auth.Providers[i]
		key := fmt.Sprintf("auth.providers[%d]", i)
		if pr.Name != "" {
			key = fmt.Sprintf("auth.providers[%d] (%q)", i, pr.Name)
		}
		switch {
		case pr.Name == "":
			p.add(key+".name", "must not be empty")
		case !providerName.MatchString(pr.Name):
			p.add(key+".name", "must match %s (it is a URL path segment)", providerName)
		case slices.Contains(reservedNames, pr.Name):
			p.add(key+".name", "%q is reserved (reserved: %q)", pr.Name, reservedNames)
		case seen[pr.Name]:
			p.add(key+".name", "duplicate provider name %q", pr.Name)
		}
		seen[pr.Name] = true
		// The issuer is kept exactly as written: go-oidc compares it byte for
		// byte with the provider's discovery document, trailing slash included.
		if pr.Issuer == "" {
			p.add(key+".issuer", "is required")
		} else {
			p.httpURL(key+".issuer", pr.Issuer, false)
		}
		if pr.ClientID == "" {
			p.add(key+".client_id", "is required")
		}
		if len(pr.Scopes) == 0 {
			pr.Scopes = slices.Clone(defaultScopes)
		} else if !slices.Contains(pr.Scopes, "openid") {
			p.add(key+".scopes", "must include \"openid\", got %q", pr.Scopes)
		}
		if (pr.AdminClaim == "") != (len(pr.AdminValues) == 0) {
			p.add(key+".admin_claim", "admin_claim and admin_values must be set together")
		}
	}
}

func (c *Config) validateDelivery(p *problems) {
	d := c.Delivery
	p.atLeast("delivery.workers", d.Workers, 1)
	p.positive("delivery.timeout", d.Timeout)
	p.positive("delivery.first_byte_timeout", d.FirstByte)
	p.positive("delivery.backoff_base", d.BackoffBase)
	p.positive("delivery.backoff_max", d.BackoffMax)
	if d.BackoffBase.Duration > 0 && d.BackoffMax.Duration < d.BackoffBase.Duration {
		p.add("delivery.backoff_max", "must not be shorter than backoff_base (%s), got %s", d.BackoffBase.Duration, d.BackoffMax.Duration)
	}
	p.atLeast("delivery.max_attempts", d.MaxAttempts, 1)
	for _, cidr := range d.BlockedNetworks {
		if _, err := netip.ParsePrefix(cidr); err != nil {
			p.add("delivery.blocked_networks", "%q is not a CIDR (e.g. \"10.0.0.0/8\")", cidr)
		}
	}
}

func (c *Config) validatePushWorkers(p *problems) {
	w := c.Push
	p.atLeast("push.workers", w.Workers, 1)
	p.atLeast("push.max_attempts", w.MaxAttempts, 1)
	p.positive("push.backoff_base", w.BackoffBase)
	p.positive("push.backoff_max", w.BackoffMax)
	if w.BackoffBase.Duration > 0 && w.BackoffMax.Duration < w.BackoffBase.Duration {
		p.add("push.backoff_max", "must not be shorter than backoff_base (%s), got %s", w.BackoffBase.Duration, w.BackoffMax.Duration)
	}
}

// validatePush refuses half-configured providers, which would otherwise fail
// only at the first push.
func (c *Config) validatePush(p *problems) {
	a := c.Push.APNs
	if a.KeyFile != "" || a.KeyID != "" || a.TeamID != "" || a.Topic != "" || a.Host != "" {
		for _, f := range []struct{ key, val string }{
			{"key_file", a.KeyFile}, {"key_id", a.KeyID}, {"team_id", a.TeamID}, {"topic", a.Topic},
		} {
			if f.val == "" {
				p.add("push.apns."+f.key, "is required once APNs is configured")
			}
		}
	}
	p.httpURL("push.apns.host", a.Host, true)
	f := c.Push.FCM
	if f.CredentialsFile == "" && (f.ProjectID != "" || f.Endpoint != "") {
		p.add("push.fcm.credentials_file", "is required once FCM is configured")
	}
	p.httpURL("push.fcm.endpoint", f.Endpoint, true)
	if s := c.Push.WebPush.Subject; s != "" && !strings.HasPrefix(s, "mailto:") && !strings.HasPrefix(s, "https://") {
		p.add("push.webpush.subject", "must start with \"mailto:\" or \"https://\", got %q", s)
	}
}

// isNetwork reports whether s is a CIDR or a single IP address.
func isNetwork(s string) bool {
	if _, err := netip.ParsePrefix(s); err == nil {
		return true
	}
	_, err := netip.ParseAddr(s)
	return err == nil
}

// acmeName is a host name a public CA can issue for: letters, digits and
// hyphens in two or more labels, no wildcard (ACME's TLS-ALPN-01 and
// HTTP-01 challenges cannot prove one).
var acmeName = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

func (c *Config) validateTLS(p *problems) {
	t := &c.TLS
	if (t.CertFile == "") != (t.KeyFile == "") {
		p.add("tls.cert_file", "cert_file and key_file must be set together")
	}
	if t.CertFile != "" && len(t.ACMEDomains) > 0 {
		p.add("tls.acme_domains", "set either cert_file and key_file or acme_domains, not both")
	}
	for i, d := range t.ACMEDomains {
		t.ACMEDomains[i] = strings.ToLower(strings.TrimSuffix(d, "."))
		if _, err := netip.ParseAddr(d); err == nil || !acmeName.MatchString(t.ACMEDomains[i]) {
			p.add("tls.acme_domains", "%q is not a host name an ACME CA can issue for (e.g. \"herald.example.com\"; no wildcards or IP addresses)", d)
		}
	}
	p.httpURL("tls.acme_directory", t.ACMEDirectory, false)
	if t.RedirectListen != "" {
		if _, _, err := net.SplitHostPort(t.RedirectListen); err != nil {
			p.add("tls.redirect_listen", "must be host:port (e.g. \":80\"), got %q", t.RedirectListen)
		}
	}
	if !t.Enabled() {
		if t.RedirectListen != "" {
			p.add("tls.redirect_listen", "redirects to HTTPS, so it needs cert_file and key_file or acme_domains")
		}
		return
	}
	if !strings.HasPrefix(strings.ToLower(c.BaseURL), "https://") {
		p.add("base_url", "must be an https:// URL when Herald serves HTTPS itself ([tls]), got %q", c.BaseURL)
	}
}

// maxFileSize bounds attachments.max_file_size: every upload and fetch is
// held in memory whole (max_in_memory of them at once).
const maxFileSize = 1 << 30

func (c *Config) validateAttachments(p *problems) {
	a := c.Attachments
	if a.MaxFileSize < 1 || a.MaxFileSize > maxFileSize {
		p.add("attachments.max_file_size", "must be from 1 byte to 1GB, got %d bytes", a.MaxFileSize)
	}
	p.positive("attachments.fetch_timeout", a.FetchTimeout)
	p.atLeast("attachments.max_in_memory", a.MaxInMemory, 1)
	for _, plan := range []struct {
		name string
		q    Size
	}{{"free", c.Plans.Free.AttachmentQuota}, {"pro", c.Plans.Pro.AttachmentQuota}} {
		if plan.q < 0 {
			p.add("plans."+plan.name+".attachment_quota", "must be a size (or 0 for the built-in default), got %d", plan.q)
		}
	}
}
