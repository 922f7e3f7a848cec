package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/forwarded"
)

// getVia sends GET path through client to base and returns the answer.
func getVia(t *testing.T, c *http.Client, base, path string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

// TestHSTSWhenServedOverHTTPS: with a plain-http base_url, an answer still
// carries HSTS when the request came over HTTPS, be it Herald's own TLS or
// a trusted proxy's, and not when an untrusted peer only claims it did.
func TestHSTSWhenServedOverHTTPS(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	const want = "max-age=63072000"

	tlsSrv := httptest.NewTLSServer(env.s.Handler())
	defer tlsSrv.Close()
	if got := getVia(t, tlsSrv.Client(), tlsSrv.URL, "/healthz").Header.Get("Strict-Transport-Security"); got != want {
		t.Errorf("over Herald's own TLS: HSTS %q, want %q", got, want)
	}

	trusting, err := forwarded.Parse([]string{"127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	behind := httptest.NewServer(trusting.Handler(env.s.Handler()))
	defer behind.Close()
	if got := getVia(t, behind.Client(), behind.URL, "/healthz", "X-Forwarded-Proto", "https").Header.Get("Strict-Transport-Security"); got != want {
		t.Errorf("behind a trusted proxy that ended TLS: HSTS %q, want %q", got, want)
	}
	if got := getVia(t, behind.Client(), behind.URL, "/healthz", "X-Forwarded-Proto", "http").Header.Get("Strict-Transport-Security"); got != "" {
		t.Errorf("behind a trusted proxy over plain HTTP: HSTS %q, want none", got)
	}

	distrusting, err := forwarded.Parse([]string{"10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	direct := httptest.NewServer(distrusting.Handler(env.s.Handler()))
	defer direct.Close()
	if got := getVia(t, direct.Client(), direct.URL, "/healthz", "X-Forwarded-Proto", "https").Header.Get("Strict-Transport-Security"); got != "" {
		t.Errorf("an untrusted peer's X-Forwarded-Proto was believed: HSTS %q", got)
	}
}

// TestBaseURLDecidesSecureCookiesAndURLs: cookies are Secure and generated
// URLs are https exactly when base_url is, whatever the connection was.
func TestBaseURLDecidesSecureCookiesAndURLs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		base   string
		secure bool
	}{
		{"https://herald.example.com", true},
		{"http://herald.example.com", false},
	} {
		t.Run(tt.base, func(t *testing.T) {
			env := newTestEnv(t, func(c *config.Config) { c.BaseURL = tt.base })
			env.s.baseURL = tt.base // the harness points it at the test server
			u := env.newUser("cookie@example.com")
			if got := env.newChannel(u, "c")["webhook_url"]; !strings.HasPrefix(got.(string), tt.base+"/v1/") {
				t.Errorf("webhook_url = %v, want it under %s", got, tt.base)
			}

			// Over Herald's own TLS either way: the connection does not decide.
			tlsSrv := httptest.NewTLSServer(env.s.Handler())
			defer tlsSrv.Close()
			req, _ := http.NewRequest("POST", tlsSrv.URL+"/auth/local",
				strings.NewReader(`{"email":"cookie@example.com","password":"`+u.Password+`"}`))
			req.Header.Set("Content-Type", "application/json")
			res, err := tlsSrv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 200 || len(res.Cookies()) == 0 {
				t.Fatalf("POST /auth/local: %d with %d cookies", res.StatusCode, len(res.Cookies()))
			}
			for _, c := range res.Cookies() {
				if c.Secure != tt.secure {
					t.Errorf("cookie %s: Secure = %v, want %v", c.Name, c.Secure, tt.secure)
				}
			}
		})
	}
}

// TestAccessLogShowsClientBehindProxy: behind a trusted proxy the access
// log names the client, not the proxy.
func TestAccessLogShowsClientBehindProxy(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	trusting, err := forwarded.Parse([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	behind := httptest.NewServer(trusting.Handler(env.s.Handler()))
	defer behind.Close()
	getVia(t, behind.Client(), behind.URL, "/healthz", "X-Forwarded-For", "198.51.100.23")
	if logs := env.logs.String(); !strings.Contains(logs, "remote=198.51.100.23") {
		t.Errorf("access log does not name the client 198.51.100.23:\n%s", logs)
	}
}
