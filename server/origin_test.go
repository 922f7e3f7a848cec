package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// originSetsCookie reports whether r set the session cookie.
func originSetsCookie(r response) bool {
	for _, c := range r.Header.Values("Set-Cookie") {
		if strings.HasPrefix(c, cookieSession+"=") {
			return true
		}
	}
	return false
}

// TestBrowserSignInOrigin: POST /auth/local sets the session cookie only for
// a JSON body from this server's own pages (or from no browser at all).
func TestBrowserSignInOrigin(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("kim@example.com")
	creds := `{"email":"kim@example.com","password":"` + u.Password + `"}`
	host := strings.TrimPrefix(env.srv.URL, "http://")

	cases := []struct {
		name    string
		headers []string
		status  int
		code    string
	}{
		{"cross-site text/plain (a form post)", []string{"Content-Type", "text/plain", "Origin", "https://evil.example"}, 403, "forbidden"},
		{"cross-site JSON", []string{"Origin", "https://evil.example"}, 403, "forbidden"},
		{"opaque origin", []string{"Origin", "null"}, 403, "forbidden"},
		{"same host, other port", []string{"Origin", "http://127.0.0.1:1"}, 403, "forbidden"},
		{"another name for this host", []string{"Origin", "http://localhost:" + strings.Split(host, ":")[1]}, 403, "forbidden"},
		{"cross-site by Sec-Fetch-Site", []string{"Content-Type", "text/plain", "Sec-Fetch-Site", "cross-site"}, 403, "forbidden"},
		{"sibling site by Sec-Fetch-Site", []string{"Sec-Fetch-Site", "same-site"}, 403, "forbidden"},
		{"text/plain without Origin", []string{"Content-Type", "text/plain"}, 415, "unsupported_media_type"},
		{"form from this origin", []string{"Content-Type", "application/x-www-form-urlencoded", "Origin", env.srv.URL}, 415, "unsupported_media_type"},
		{"no Content-Type", []string{"Content-Type", ""}, 415, "unsupported_media_type"},
		{"JSON from this origin", []string{"Origin", env.srv.URL}, 200, ""},
		{"JSON with charset, upper-case origin", []string{"Content-Type", "application/json; charset=utf-8", "Origin", strings.ToUpper(env.srv.URL)}, 200, ""},
		{"JSON, Sec-Fetch-Site same-origin", []string{"Sec-Fetch-Site", "same-origin"}, 200, ""},
		{"JSON from no browser", nil, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := env.request("POST", "/auth/local", creds, "", c.headers...)
			if c.status != 200 {
				wantError(t, r, c.status, c.code)
				if originSetsCookie(r) {
					t.Fatalf("a refused sign-in set the session cookie: %v", r.Header.Values("Set-Cookie"))
				}
				return
			}
			if r.Status != 200 || !originSetsCookie(r) {
				t.Fatalf("got %d %s, cookies %v; want 200 with the session cookie", r.Status, r.Raw, r.Header.Values("Set-Cookie"))
			}
		})
	}

	// The page's origin is the request's Host when that is not base_url's
	// (a server reached by another name), or base_url's behind a proxy.
	for _, c := range []struct{ host, origin string }{{"herald.lan:8080", "http://herald.lan:8080"}, {"herald.lan", "https://herald.lan"}} {
		req, err := http.NewRequest("POST", env.srv.URL+"/auth/local", strings.NewReader(creds))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = c.host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", c.origin)
		res, err := env.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("Host %s, Origin %s: %d, want 200", c.host, c.origin, res.StatusCode)
		}
	}
	proxied := newTestEnv(t)
	proxied.s.baseURL = "https://herald.example.com"
	proxied.newUser(u.Email)
	if r := proxied.request("POST", "/auth/local", creds, "", "Origin", "https://herald.example.com"); r.Status != 200 {
		t.Errorf("Origin = base_url behind a proxy: %d %s, want 200", r.Status, r.Raw)
	}
	wantError(t, proxied.request("POST", "/auth/local", creds, "", "Origin", "http://herald.example.com"), 403, "forbidden")
}

// TestCookieChangesNeedOwnOrigin: a cookie-authenticated change from another
// origin is refused even with the right CSRF token, and changes nothing;
// bearer tokens are not subject to the check.
func TestCookieChangesNeedOwnOrigin(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("lee@example.com")
	r := env.do(200, "POST", "/auth/local", map[string]string{"email": u.Email, "password": u.Password}, "")
	var cookie, csrf string
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		switch c.Name {
		case cookieSession:
			cookie = cookieSession + "=" + c.Value
		case cookieCSRF:
			csrf = c.Value
		}
	}
	if cookie == "" || csrf == "" {
		t.Fatalf("sign-in set no cookies: %v", r.Header.Values("Set-Cookie"))
	}
	ch := map[string]string{"name": "planted"}
	for _, h := range [][]string{
		{"Origin", "https://evil.example"},
		{"Origin", "null"},
		{"Sec-Fetch-Site", "cross-site"},
	} {
		r := env.request("POST", "/v1/channels", ch, "", append([]string{"Cookie", cookie, headerCSRF, csrf}, h...)...)
		wantError(t, r, 403, "forbidden")
		if !strings.Contains(r.Str("message"), "cross-site") {
			t.Errorf("%v: message %q does not say why", h, r.Str("message"))
		}
		wantError(t, env.request("DELETE", "/v1/auth/user", nil, "", append([]string{"Cookie", cookie, headerCSRF, csrf}, h...)...), 403, "forbidden")
		wantError(t, env.request("POST", "/auth/logout", nil, "", append([]string{"Cookie", cookie, headerCSRF, csrf}, h...)...), 403, "forbidden")
	}
	if chs, err := env.st.ListChannels(context.Background(), u.ID); err != nil || len(chs) != 0 {
		t.Fatalf("refused requests created channels: %v, %v", chs, err)
	}
	// A body-less logout may not carry a form either.
	wantError(t, env.request("POST", "/auth/logout", "", "", "Cookie", cookie, headerCSRF, csrf, "Content-Type", "application/x-www-form-urlencoded"), 415, "unsupported_media_type")
	if got := env.request("GET", "/v1/auth/me", nil, "", "Cookie", cookie).Status; got != 200 {
		t.Fatalf("the session after refused logouts: %d, want 200", got)
	}

	// From this origin, and from no browser, the same requests work.
	for _, h := range [][]string{{"Origin", env.srv.URL}, {"Sec-Fetch-Site", "same-origin"}, nil} {
		if r := env.request("POST", "/v1/channels", ch, "", append([]string{"Cookie", cookie, headerCSRF, csrf}, h...)...); r.Status != 201 {
			t.Fatalf("%v: %d %s, want 201", h, r.Status, r.Raw)
		}
	}
	// A bearer token is no browser's cookie: no origin check.
	if r := env.request("POST", "/v1/channels", ch, u.Token, "Origin", "https://evil.example"); r.Status != 201 {
		t.Fatalf("bearer token with a foreign Origin: %d %s, want 201", r.Status, r.Raw)
	}
	// Logging out from this origin works and ends the session.
	if r := env.request("POST", "/auth/logout", nil, "", "Cookie", cookie, headerCSRF, csrf, "Origin", env.srv.URL); r.Status != 200 {
		t.Fatalf("logout from this origin: %d %s, want 200", r.Status, r.Raw)
	}
	wantError(t, env.request("GET", "/v1/auth/me", nil, "", "Cookie", cookie), 401, "invalid_token")
	if chs, err := env.st.ListChannels(context.Background(), u.ID); err != nil || len(chs) != 4 {
		t.Fatalf("channels = %d, %v; want the 4 created by allowed requests", len(chs), err)
	}
}
