package server

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// The fake identity provider speaks enough OpenID Connect for go-oidc and
// x/oauth2: discovery, a JWKS, an authorization endpoint that issues one-time
// codes bound to a PKCE challenge, and a token endpoint that checks them.

const (
	idpKID    = "test-key-1"
	idpClient = "herald"
	idpSecret = "s3cret"
)

// RSA keys are slow to make under the race detector: one pair per test binary.
var idpKeys = sync.OnceValue(func() [2]*rsa.PrivateKey {
	var ks [2]*rsa.PrivateKey
	for i := range ks {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		ks[i] = k
	}
	return ks
})

// idpMode says how the fake answers: normally, with 503, or by dropping the connection.
type idpMode int

const (
	idpUp idpMode = iota
	idpDown503
	idpDownClosed
)

// idpGrant is what /authorize bound a code to.
type idpGrant struct {
	clientID, redirectURI, nonce, challenge, method string
	claims                                          map[string]any
}

// idpTokenRequest is what /token was called with.
type idpTokenRequest struct {
	Code, Verifier, RedirectURI, ClientID, AuthStyle string
	Status                                           int // what the fake answered
	Nonce                                            string
}

// fakeIdP is an OIDC provider on 127.0.0.1.
type fakeIdP struct {
	t   *testing.T
	srv *httptest.Server
	URL string // the issuer

	key   *rsa.PrivateKey // published in the JWKS as idpKID
	other *rsa.PrivateKey // never published

	mu        sync.Mutex
	now       func() time.Time
	mode      idpMode
	user      map[string]any // claims of the user who "signs in" at /authorize
	badNonce  bool           // /token returns an ID token with a wrong nonce
	codes     map[string]*idpGrant
	tokens    []idpTokenRequest
	discovery int // how many times discovery was fetched
}

func newFakeIdP(t *testing.T) *fakeIdP {
	t.Helper()
	ks := idpKeys()
	f := &fakeIdP{t: t, key: ks[0], other: ks[1], now: time.Now, codes: map[string]*idpGrant{},
		user: map[string]any{"sub": "user-1", "email": "alice@example.com", "email_verified": true, "name": "Alice"}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", f.handleDiscovery)
	mux.HandleFunc("GET /jwks", f.handleJWKS)
	mux.HandleFunc("GET /authorize", f.handleAuthorize)
	mux.HandleFunc("POST /token", f.handleToken)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		mode := f.mode
		f.mu.Unlock()
		switch mode {
		case idpDown503:
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		case idpDownClosed:
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
					return
				}
			}
			panic(http.ErrAbortHandler)
		}
		mux.ServeHTTP(w, r)
	}))
	f.URL = f.srv.URL
	t.Cleanup(f.srv.Close)
	return f
}

// setClock makes the fake mint tokens on the server's clock.
func (f *fakeIdP) setClock(now func() time.Time) {
	f.mu.Lock()
	f.now = now
	f.mu.Unlock()
}

func (f *fakeIdP) setMode(m idpMode) {
	f.mu.Lock()
	f.mode = m
	f.mu.Unlock()
}

func (f *fakeIdP) setBadNonce(b bool) {
	f.mu.Lock()
	f.badNonce = b
	f.mu.Unlock()
}

func (f *fakeIdP) tokenRequests() []idpTokenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]idpTokenRequest(nil), f.tokens...)
}

func (f *fakeIdP) handleDiscovery(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	f.discovery++
	f.mu.Unlock()
	writeJSONForTest(w, http.StatusOK, map[string]any{
		"issuer":                                f.URL,
		"authorization_endpoint":                f.URL + "/authorize",
		"token_endpoint":                        f.URL + "/token",
		"jwks_uri":                              f.URL + "/jwks",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"code_challenge_methods_supported":      []string{"S256"},
	})
}

func (f *fakeIdP) handleJWKS(w http.ResponseWriter, _ *http.Request) {
	writeJSONForTest(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &f.key.PublicKey, KeyID: idpKID, Algorithm: string(jose.RS256), Use: "sig"},
	}})
}

// handleAuthorize "signs the user in" at once: it records the request,
// binds a one-time code to it and sends the browser back.
func (f *fakeIdP) handleAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if q.Get("response_type") != "code" || q.Get("client_id") == "" || err != nil || !redirect.IsAbs() {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	code := base64.RawURLEncoding.EncodeToString(randomBytes(16))
	f.mu.Lock()
	claims := map[string]any{}
	for k, v := range f.user {
		claims[k] = v
	}
	f.codes[code] = &idpGrant{clientID: q.Get("client_id"), redirectURI: q.Get("redirect_uri"), nonce: q.Get("nonce"),
		challenge: q.Get("code_challenge"), method: q.Get("code_challenge_method"), claims: claims}
	f.mu.Unlock()
	back := redirect.Query()
	back.Set("code", code)
	back.Set("state", q.Get("state"))
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

// handleToken checks the code exchange as a strict provider would: grant
// type, one-time code, client credentials (basic or post), redirect_uri and
// the PKCE verifier against the S256 challenge.
func (f *fakeIdP) handleToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	req := idpTokenRequest{Code: r.PostForm.Get("code"), Verifier: r.PostForm.Get("code_verifier"),
		RedirectURI: r.PostForm.Get("redirect_uri")}
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
		req.AuthStyle = "basic"
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		req.AuthStyle = "post"
	}
	req.ClientID = id
	answer := func(status int, body map[string]any) {
		req.Status = status
		f.mu.Lock()
		f.tokens = append(f.tokens, req)
		f.mu.Unlock()
		writeJSONForTest(w, status, body)
	}
	if id != idpClient || subtle.ConstantTimeCompare([]byte(secret), []byte(idpSecret)) != 1 {
		answer(http.StatusUnauthorized, map[string]any{"error": "invalid_client"})
		return
	}
	if r.PostForm.Get("grant_type") != "authorization_code" {
		answer(http.StatusBadRequest, map[string]any{"error": "unsupported_grant_type"})
		return
	}
	f.mu.Lock()
	g := f.codes[req.Code]
	delete(f.codes, req.Code) // one use only, even when the exchange fails
	badNonce := f.badNonce
	f.mu.Unlock()
	if g == nil || g.clientID != id || g.redirectURI != req.RedirectURI {
		answer(http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": "unknown code or redirect_uri"})
		return
	}
	if g.challenge != "" {
		sum := sha256.Sum256([]byte(req.Verifier))
		if g.method != "S256" || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			answer(http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": "PKCE verification failed"})
			return
		}
	}
	claims := f.claims(g.claims)
	if g.nonce != "" {
		claims["nonce"] = g.nonce
	}
	if badNonce {
		claims["nonce"] = "not-the-nonce"
	}
	req.Nonce, _ = claims["nonce"].(string)
	answer(http.StatusOK, map[string]any{"access_token": "at-" + req.Code, "token_type": "Bearer", "expires_in": 3600,
		"id_token": f.sign(f.key, idpKID, claims)})
}

// claims returns a valid claim set for this provider (iss, aud, iat, exp on
// the fake's clock) with extra merged over it.
func (f *fakeIdP) claims(extra map[string]any) map[string]any {
	f.mu.Lock()
	now := f.now()
	f.mu.Unlock()
	c := map[string]any{"iss": f.URL, "aud": idpClient, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

// token mints a valid ID token for the default user, with extra claims
// merged over the defaults; a nil value deletes a claim.
func (f *fakeIdP) token(extra map[string]any) string {
	c := f.claims(map[string]any{"sub": "user-1", "email": "alice@example.com", "email_verified": true, "name": "Alice"})
	for k, v := range extra {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return f.sign(f.key, idpKID, c)
}

// sign makes a compact RS256 JWT with key, naming kid in the header.
func (f *fakeIdP) sign(key *rsa.PrivateKey, kid string, claims map[string]any) string {
	f.t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		f.t.Fatal(err)
	}
	raw, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		f.t.Fatal(err)
	}
	return raw
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return b
}

func writeJSONForTest(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
