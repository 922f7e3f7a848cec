// Package googletest is a Google service account for tests of code that
// calls Google APIs with one (FCM, the Play Developer API): a credentials
// file, and the OAuth2 token endpoint it names as token_uri, which checks
// each JWT-bearer assertion as Google does before it hands out an access
// token. Only tests import it.
package googletest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// key is the service accounts' RSA key: one per test binary, as RSA key
// generation is slow under -race.
var key = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

// ServiceAccount is one service account and its token endpoint.
type ServiceAccount struct {
	Email           string
	ProjectID       string
	CredentialsFile string // the service-account JSON

	t        testing.TB
	scope    string
	tokenURL string

	mu     sync.Mutex
	issued []string
}

// New registers the token endpoint as POST /token on mux, which a test
// server serves at baseURL, for assertions asking for scope, and writes the
// credentials file.
func New(t testing.TB, mux *http.ServeMux, baseURL, scope, projectID, email string) *ServiceAccount {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key())
	if err != nil {
		t.Fatal(err)
	}
	sa := &ServiceAccount{Email: email, ProjectID: projectID, t: t, scope: scope, tokenURL: baseURL + "/token"}
	mux.HandleFunc("POST /token", sa.serveToken)
	creds, err := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     projectID,
		"private_key_id": "key-1",
		"private_key":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":   email,
		"client_id":      "109876543210987654321",
		"token_uri":      sa.tokenURL,
	})
	if err != nil {
		t.Fatal(err)
	}
	sa.CredentialsFile = filepath.Join(t.TempDir(), "service-account.json")
	if err := os.WriteFile(sa.CredentialsFile, creds, 0o600); err != nil {
		t.Fatal(err)
	}
	return sa
}

// Issued is every access token the endpoint has handed out, in order.
func (sa *ServiceAccount) Issued() []string {
	sa.mu.Lock()
	defer sa.mu.Unlock()
	return slices.Clone(sa.issued)
}

// Authorized says whether an Authorization header carries a token this
// endpoint issued.
func (sa *ServiceAccount) Authorized(header string) bool {
	tok, ok := strings.CutPrefix(header, "Bearer ")
	return ok && slices.Contains(sa.Issued(), tok)
}

// serveToken answers the JWT-bearer grant: an RS256 assertion by the
// service account, for the scope, addressed to this endpoint, not expired.
func (sa *ServiceAccount) serveToken(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if err := r.ParseForm(); err != nil {
		sa.t.Errorf("token request: %v", err)
	}
	if got, want := r.PostForm.Get("grant_type"), "urn:ietf:params:oauth:grant-type:jwt-bearer"; got != want {
		sa.t.Errorf("grant_type = %q, want %q", got, want)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"unsupported_grant_type"}`))
		return
	}
	if err := sa.checkAssertion(r.PostForm.Get("assertion")); err != nil {
		sa.t.Errorf("token assertion: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, `{"error":"invalid_grant","error_description":%q}`, err.Error())
		return
	}
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	sa.mu.Lock()
	tok := fmt.Sprintf("ya29.test-%d-%s", len(sa.issued)+1, base64.RawURLEncoding.EncodeToString(b))
	sa.issued = append(sa.issued, tok)
	sa.mu.Unlock()
	_, _ = fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":3599}`, tok)
}

func (sa *ServiceAccount) checkAssertion(tok string) error {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return fmt.Errorf("%q is not a compact JWS", tok)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return err
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&key().PublicKey, crypto.SHA256, digest[:], sig); err != nil {
		return fmt.Errorf("RS256 signature: %w", err)
	}
	var header, claims map[string]any
	for i, dst := range []*map[string]any{&header, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return err
		}
	}
	if header["alg"] != "RS256" {
		return fmt.Errorf("alg = %v, want RS256", header["alg"])
	}
	for k, want := range map[string]string{"iss": sa.Email, "scope": sa.scope, "aud": sa.tokenURL} {
		if claims[k] != want {
			return fmt.Errorf("claim %s = %v, want %q", k, claims[k], want)
		}
	}
	exp, _ := claims["exp"].(float64)
	iat, _ := claims["iat"].(float64)
	if !time.Unix(int64(exp), 0).After(time.Now()) || iat == 0 || exp-iat > 3600 {
		return fmt.Errorf("iat %v / exp %v: not a live assertion of at most an hour", claims["iat"], claims["exp"])
	}
	return nil
}
