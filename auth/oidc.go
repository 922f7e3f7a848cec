package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Sign-in failures. ErrUnavailable means the provider could not be reached
// (its discovery document or token endpoint); the others are the client's
// fault and are reported as invalid_token with the wrapped detail.
var (
	ErrUnavailable = errors.New("identity provider unavailable")
	ErrInvalid     = errors.New("invalid ID token")
)

// Claims are what Herald uses from a verified ID token.
type Claims struct {
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
	Admin         bool // the provider's admin_claim holds one of admin_values
}

// ProviderConfig is what a Provider needs of an identity provider's
// configuration to verify its sign-ins.
type ProviderConfig struct {
	Name           string   // the {idp} path segment
	Issuer         string   // discovery: Issuer + /.well-known/openid-configuration
	ClientID       string   // the audience an ID token must have...
	ExtraAudiences []string // ...or one of these
	ClientSecret   string   // for the code exchange of the browser sign-in
	Scopes         []string // asked for in the browser sign-in
	AdminClaim     string   // a claim whose values can make a user admin ("" for none)
	AdminValues    []string // values of AdminClaim that make a user admin
}

// Provider is one configured OIDC provider, discovered lazily: a provider
// that is down at start only fails its own sign-ins, and is tried again on
// the next one.
type Provider struct {
	cfg    ProviderConfig
	client *http.Client
	now    func() time.Time
	// RetryAfter is how long a failed discovery is remembered before trying again.
	RetryAfter time.Duration

	mu       sync.Mutex
	op       *oidc.Provider
	verifier *oidc.IDTokenVerifier // one per provider, so its JWKS cache is shared
	failedAt time.Time
	lastErr  error
}

// NewProvider prepares a provider; nothing is fetched until first use.
// client is used for discovery, JWKS and code exchange; it must have a timeout.
func NewProvider(cfg ProviderConfig, client *http.Client, now func() time.Time) *Provider {
	if now == nil {
		now = time.Now
	}
	return &Provider{cfg: cfg, client: client, now: now, RetryAfter: 2 * time.Second}
}

// Name is the provider's {idp} path segment.
func (p *Provider) Name() string { return p.cfg.Name }

// Config is the provider's configuration.

// discover returns the provider's discovery, fetching it when needed. A
// failure is remembered for RetryAfter so a down provider is not hammered.
func (p *Provider) discover(ctx context.Context) (*oidc.Provider, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.op != nil {
		return p.op, nil
	}
	if p.lastErr != nil && p.now().Sub(p.failedAt) < p.RetryAfter {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnavailable, p.cfg.Name, p.lastErr)
	}
	dctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	op, err := oidc.NewProvider(oidc.ClientContext(dctx, p.client), p.cfg.Issuer)
	if err != nil {
		p.lastErr, p.failedAt = err, p.now()
		return nil, fmt.Errorf("%w: %s: %v", ErrUnavailable, p.cfg.Name, err)
	}
	// The key set keeps this context to fetch rotated keys later: give it one
	// that never ends but still carries our HTTP client (with its timeout).
	p.verifier = op.VerifierContext(oidc.ClientContext(context.Background(), p.client),
		&oidc.Config{SkipClientIDCheck: true, Now: p.now})
	p.op = op
	p.lastErr = nil
	return op, nil
}

// Warm tries discovery now, so that the log says at start whether a
// provider is reachable.
func (p *Provider) Warm(ctx context.Context) error {
	_, err := p.discover(ctx)
	return err
}

// Verify checks a raw ID token: signature against the provider's JWKS,
// issuer, expiry, audience (client_id or one of extra_audiences) and, when
// nonce is not empty, the nonce.
func (p *Provider) Verify(ctx context.Context, raw, nonce string) (*Claims, error) {
	if _, err := p.discover(ctx); err != nil {
		return nil, err
	}
	// The audience is checked below against client_id and extra_audiences,
	// which go-oidc's single ClientID cannot express.
	tok, err := p.verifier.Verify(ctx, raw)
	if err != nil {
		// go-oidc flattens a failed JWKS fetch into its signature error
		// (with %v): the provider is down, the token is not to blame.
		if strings.Contains(err.Error(), "fetching keys") {
			return nil, fmt.Errorf("%w: %s: signing keys: %v", ErrUnavailable, p.cfg.Name, err)
		}
		return nil, fmt.Errorf("%w: %s", ErrInvalid, describe(err))
	}
	audiences := append([]string{p.cfg.ClientID}, p.cfg.ExtraAudiences...)
	if !slices.ContainsFunc(tok.Audience, func(a string) bool { return slices.Contains(audiences, a) }) {
		return nil, fmt.Errorf("%w: wrong audience %q: not this server's client_id or an extra audience", ErrInvalid, tok.Audience)
	}
	if nonce != "" && tok.Nonce != nonce {
		return nil, fmt.Errorf("%w: nonce does not match", ErrInvalid)
	}
	var c struct {
		Email         string `json:"email"`
		EmailVerified any    `json:"email_verified"` // Apple sends "true" as a string
		Name          string `json:"name"`
		PreferredName string `json:"preferred_username"`
	}
	if err := tok.Claims(&c); err != nil {
		return nil, fmt.Errorf("%w: claims: %v", ErrInvalid, err)
	}
	claims := &Claims{Subject: tok.Subject, Email: strings.TrimSpace(c.Email), Name: c.Name,
		EmailVerified: c.EmailVerified == true || c.EmailVerified == "true"}
	if claims.Name == "" {
		claims.Name = c.PreferredName
	}
	if p.cfg.AdminClaim != "" {
		var all map[string]any
		if err := tok.Claims(&all); err == nil {
			claims.Admin = claimMatches(all[p.cfg.AdminClaim], p.cfg.AdminValues)
		}
	}
	return claims, nil
}

// claimMatches reports whether a claim (a string or a list) holds one of values.
func claimMatches(claim any, values []string) bool {
	switch c := claim.(type) {
	case string:
		return slices.Contains(values, c)
	case []any:
		for _, v := range c {
			if s, ok := v.(string); ok && slices.Contains(values, s) {
				return true
			}
		}
	}
	return false
}

// describe turns a go-oidc error into a message that says what was wrong
// without echoing the token.
func describe(err error) string {
	var exp *oidc.TokenExpiredError
	msg := err.Error()
	switch {
	case errors.As(err, &exp):
		return "token expired at " + exp.Expiry.UTC().Format(time.RFC3339)
	case strings.Contains(msg, "issued by a different provider"):
		return "wrong issuer"
	case strings.Contains(msg, "failed to verify signature"), strings.Contains(msg, "failed to verify id token signature"):
		return "bad signature or unknown signing key"
	case strings.Contains(msg, "malformed jwt"), strings.Contains(msg, "failed to parse"):
		return "malformed token"
	default:
		return strings.TrimPrefix(msg, "oidc: ")
	}
}

// OAuth2 returns the authorization-code configuration for redirectURL.
func (p *Provider) OAuth2(ctx context.Context, redirectURL string) (*oauth2.Config, error) {
	op, err := p.discover(ctx)
	if err != nil {
		return nil, err
	}
	return &oauth2.Config{ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, Endpoint: op.Endpoint(),
		RedirectURL: redirectURL, Scopes: p.cfg.Scopes}, nil
}

// Exchange trades an authorization code (with its PKCE verifier) for tokens
// at the provider and verifies the ID token it returns.
func (p *Provider) Exchange(ctx context.Context, code, verifier, redirectURL, nonce string) (*Claims, error) {
	oc, err := p.OAuth2(ctx, redirectURL)
	if err != nil {
		return nil, err
	}
	opts := []oauth2.AuthCodeOption{}
	if verifier != "" {
		opts = append(opts, oauth2.VerifierOption(verifier))
	}
	tok, err := oc.Exchange(context.WithValue(ctx, oauth2.HTTPClient, p.client), code, opts...)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode < 500 {
			return nil, fmt.Errorf("%w: the provider refused the code: %s", ErrInvalid, re.ErrorCode)
		}
		return nil, fmt.Errorf("%w: %s: token endpoint: %v", ErrUnavailable, p.cfg.Name, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, fmt.Errorf("%w: the provider returned no id_token (is the openid scope requested?)", ErrInvalid)
	}
	return p.Verify(ctx, raw, nonce)
}
