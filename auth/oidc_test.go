package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// testIdP is a minimal OIDC provider: discovery and a JWKS. (server has a
// fuller one with the code flow; test files cannot be shared across packages.)
type testIdP struct {
	t    *testing.T
	url  string
	key  *rsa.PrivateKey
	down atomic.Bool // answer 503 to everything
	hits atomic.Int32
}

func newTestIdP(t *testing.T) *testIdP {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &testIdP{t: t, key: key}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.hits.Add(1)
		if p.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": p.url, "authorization_endpoint": p.url + "/authorize",
				"token_endpoint": p.url + "/token", "jwks_uri": p.url + "/jwks",
				"id_token_signing_alg_values_supported": []string{"RS256"}})
		case "/jwks":
			_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
				{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// token signs the default claims (valid for an hour from now) with extra
// merged over them.
func (p *testIdP) token(now time.Time, extra map[string]any) string {
	p.t.Helper()
	c := map[string]any{"iss": p.url, "aud": "herald", "sub": "s1", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"email": "a@example.com"}
	for k, v := range extra {
		c[k] = v
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: p.key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		p.t.Fatal(err)
	}
	raw, err := jwt.Signed(signer).Claims(c).Serialize()
	if err != nil {
		p.t.Fatal(err)
	}
	return raw
}

func (p *testIdP) provider(now func() time.Time, edit func(*ProviderConfig)) *Provider {
	cfg := ProviderConfig{Name: "test", Issuer: p.url, ClientID: "herald", ExtraAudiences: []string{"ios-app", "android-app"},
		AdminClaim: "groups", AdminValues: []string{"herald-admins", "root"}}
	if edit != nil {
		edit(&cfg)
	}
	return NewProvider(cfg, &http.Client{Timeout: 5 * time.Second}, now)
}

func TestOIDCVerifyAudience(t *testing.T) {
	t.Parallel()
	idp := newTestIdP(t)
	now := time.Now()
	p := idp.provider(func() time.Time { return now }, nil)
	tests := []struct {
		aud any
		ok  bool
	}{
		{"herald", true},
		{"ios-app", true},
		{"android-app", true},
		{[]string{"something-else", "ios-app"}, true},
		{[]string{"herald"}, true},
		{"someone-else", false},
		{[]string{"a", "b"}, false},
		{"HERALD", false}, // audiences are compared exactly
	}
	for _, tc := range tests {
		c, err := p.Verify(context.Background(), idp.token(now, map[string]any{"aud": tc.aud}), "")
		if tc.ok {
			if err != nil || c.Subject != "s1" {
				t.Errorf("aud %v: %v, %+v", tc.aud, err, c)
			}
			continue
		}
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "audience") {
			t.Errorf("aud %v: err %v, want ErrInvalid about the audience", tc.aud, err)
		}
	}
}

func TestOIDCVerifyClaims(t *testing.T) {
	t.Parallel()
	idp := newTestIdP(t)
	now := time.Now()
	p := idp.provider(func() time.Time { return now }, nil)
	tests := []struct {
		name  string
		extra map[string]any
		want  Claims
	}{
		{"verified bool", map[string]any{"email_verified": true, "name": "Ann"},
			Claims{Subject: "s1", Email: "a@example.com", EmailVerified: true, Name: "Ann"}},
		{"Apple verified string", map[string]any{"email_verified": "true"},
			Claims{Subject: "s1", Email: "a@example.com", EmailVerified: true}},
		{"Apple unverified string", map[string]any{"email_verified": "false"},
			Claims{Subject: "s1", Email: "a@example.com"}},
		{"unverified bool", map[string]any{"email_verified": false}, Claims{Subject: "s1", Email: "a@example.com"}},
		{"verified missing", nil, Claims{Subject: "s1", Email: "a@example.com"}},
		{"preferred_username stands in for name", map[string]any{"preferred_username": "ann"},
			Claims{Subject: "s1", Email: "a@example.com", Name: "ann"}},
		{"email trimmed", map[string]any{"email": " a@example.com "}, Claims{Subject: "s1", Email: "a@example.com"}},
		{"admin by list", map[string]any{"groups": []string{"users", "root"}},
			Claims{Subject: "s1", Email: "a@example.com", Admin: true}},
		{"admin by string", map[string]any{"groups": "herald-admins"},
			Claims{Subject: "s1", Email: "a@example.com", Admin: true}},
		{"not admin", map[string]any{"groups": []string{"users"}}, Claims{Subject: "s1", Email: "a@example.com"}},
		{"admin claim of another type", map[string]any{"groups": map[string]any{"herald-admins": true}},
			Claims{Subject: "s1", Email: "a@example.com"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := p.Verify(context.Background(), idp.token(now, tc.extra), "")
			if err != nil {
				t.Fatal(err)
			}
			if *c != tc.want {
				t.Fatalf("claims %+v, want %+v", *c, tc.want)
			}
		})
	}

	// Without an admin_claim nobody is made admin by a token.
	plain := idp.provider(func() time.Time { return now }, func(c *ProviderConfig) { c.AdminClaim = "" })
	c, err := plain.Verify(context.Background(), idp.token(now, map[string]any{"groups": "herald-admins"}), "")
	if err != nil || c.Admin {
		t.Fatalf("no admin_claim: %+v, %v", c, err)
	}
}

func TestOIDCClaimMatches(t *testing.T) {
	t.Parallel()
	values := []string{"herald-admins", "root"}
	tests := []struct {
		claim any
		want  bool
	}{
		{"herald-admins", true},
		{"root", true},
		{"herald", false},
		{"", false},
		{[]any{"a", "root"}, true},
		{[]any{"a", "b"}, false},
		{[]any{1.0, true, "herald-admins"}, true},
		{[]any{}, false},
		{nil, false},
		{true, false},
		{[]string{"root"}, false}, // JSON never decodes to []string
	}
	for _, tc := range tests {
		if got := claimMatches(tc.claim, values); got != tc.want {
			t.Errorf("claimMatches(%#v) = %v, want %v", tc.claim, got, tc.want)
		}
	}
	if claimMatches("root", nil) {
		t.Error("no admin_values must match nothing")
	}
}

func TestOIDCVerifyExpiryUsesClock(t *testing.T) {
	t.Parallel()
	idp := newTestIdP(t)
	issued := time.Now()
	var now atomic.Int64
	now.Store(issued.UnixNano())
	p := idp.provider(func() time.Time { return time.Unix(0, now.Load()) }, nil)
	tok := idp.token(issued, nil)
	if _, err := p.Verify(context.Background(), tok, ""); err != nil {
		t.Fatal(err)
	}
	now.Store(issued.Add(2 * time.Hour).UnixNano())
	_, err := p.Verify(context.Background(), tok, "")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("after expiry: %v", err)
	}
	if strings.Contains(err.Error(), tok) {
		t.Fatal("the error echoes the token")
	}
}

func TestOIDCProviderUnavailable(t *testing.T) {
	t.Parallel()
	idp := newTestIdP(t)
	idp.down.Store(true)
	now := time.Now()
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	p := idp.provider(func() time.Time { return time.Unix(0, clock.Load()) }, nil)
	tok := idp.token(now, nil)

	if _, err := p.Verify(context.Background(), tok, ""); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("discovery down: %v, want ErrUnavailable", err)
	}
	idp.down.Store(false)
	hits := idp.hits.Load()
	if _, err := p.Verify(context.Background(), tok, ""); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("within RetryAfter: %v, want the remembered ErrUnavailable", err)
	}
	if idp.hits.Load() != hits {
		t.Fatal("a remembered failure still called the provider")
	}
	clock.Add(int64(p.RetryAfter - time.Nanosecond))
	if _, err := p.Verify(context.Background(), tok, ""); !errors.Is(err, ErrUnavailable) || idp.hits.Load() != hits {
		t.Fatalf("just before RetryAfter: %v, want the remembered ErrUnavailable without a call", err)
	}
	clock.Add(int64(time.Nanosecond))
	if _, err := p.Verify(context.Background(), tok, ""); err != nil {
		t.Fatalf("once RetryAfter has passed: %v", err)
	}
}

// TestOIDCVerifyNonce: when the sign-in started with a nonce, the ID token
// must carry that nonce; a token without one, or with another, is refused.
func TestOIDCVerifyNonce(t *testing.T) {
	t.Parallel()
	idp := newTestIdP(t)
	now := time.Now()
	p := idp.provider(func() time.Time { return now }, nil)
	withNonce, without := idp.token(now, map[string]any{"nonce": "n-1"}), idp.token(now, nil)
	cases := []struct {
		name, token, nonce string
		ok                 bool
	}{
		{"same nonce", withNonce, "n-1", true},
		{"other nonce", withNonce, "n-2", false},
		{"token without the nonce", without, "n-1", false},
		{"no nonce asked for", without, "", true},
	}
	for _, tc := range cases {
		_, err := p.Verify(context.Background(), tc.token, tc.nonce)
		if tc.ok && err != nil {
			t.Errorf("%s: %v, want accepted", tc.name, err)
		}
		if !tc.ok && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", tc.name, err)
		}
	}
}

func TestOIDCKeysUnavailable(t *testing.T) {
	t.Parallel()
	idp := newTestIdP(t)
	now := time.Now()
	p := idp.provider(func() time.Time { return now }, nil)
	if err := p.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	idp.down.Store(true) // discovered, but the keys were never fetched
	if _, err := p.Verify(context.Background(), idp.token(now, nil), ""); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("JWKS down: %v, want ErrUnavailable", err)
	}
	idp.down.Store(false)
	// go-oidc hands the failed fetch to callers that arrive before its
	// fetching goroutine has cleared it, so the recovery can lag a moment.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := p.Verify(context.Background(), idp.token(now, nil), "")
		if err == nil {
			break
		}
		if !errors.Is(err, ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("JWKS back up: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
