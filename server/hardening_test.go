package server

import (
	"crypto/sha256"
	"encoding/base64"
	"regexp"
	"strings"
	"testing"

	"github.com/heraldhq/herald/config"
)

// TestDevicePatchMovesPushToken: PATCHing a push token onto a device takes
// it from whichever device had it, another user's too, as registering
// does, so no two users ever receive one phone's pushes.
func TestDevicePatchMovesPushToken(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	ann, bob := env.newUser("ann@example.com"), env.newUser("bob@example.com")
	const phone = "a3f1c2d4e5b6978812345678901234567890abcdefabcdefabcdefabcdef0123"
	const other = "b3f1c2d4e5b6978812345678901234567890abcdefabcdefabcdefabcdef0123"
	devRegister(env, ann.Token, "ios", phone, "Ann's iPhone")
	bobDev := devRegister(env, bob.Token, "ios", other, "Bob's iPhone")["id"].(string)
	bobOld := devRegister(env, bob.Token, "ios", strings.Replace(other, "b3", "c3", 1), "Bob's old iPhone")["id"].(string)

	env.do(200, "PATCH", "/v1/devices/"+bobDev, map[string]string{"push_token": phone}, bob.Token)
	if got := devList(env, ann.Token); len(got) != 0 {
		t.Fatalf("ann still has devices %v after bob took the push token", got)
	}
	if d := devStored(env, bob.ID, bobDev); d.PushToken != phone || !d.Active {
		t.Fatalf("bob's device = %+v, want the moved token, active", d)
	}

	// Within one user, the device that is PATCHed keeps the token alone.
	env.do(200, "PATCH", "/v1/devices/"+bobOld, map[string]string{"push_token": phone}, bob.Token)
	if got := devList(env, bob.Token); len(got) != 1 || got[0] != bobOld {
		t.Fatalf("bob's devices = %v, want only %s", got, bobOld)
	}
}

func TestMutedUntilRange(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("mute@example.com")
	id := env.newChannel(u, "mutable")["id"].(string)
	for _, v := range []string{"9999-12-31T23:59:59-14:00", "10000-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "0001-01-01T00:00:00Z"} {
		wantError(t, env.request("PATCH", "/v1/channels/"+id, map[string]any{"muted_until": v}, u.Token), 400, "invalid_payload")
	}
	if got := env.do(200, "GET", "/v1/channels/"+id, nil, u.Token).Body["muted_until"]; got != nil {
		t.Fatalf("muted_until = %v after refused updates, want null", got)
	}
	r := env.do(200, "PATCH", "/v1/channels/"+id, map[string]any{"muted_until": "9999-12-31T23:59:59Z"}, u.Token)
	if got := r.Str("muted_until"); got != "9999-12-31T23:59:59.000Z" {
		t.Fatalf("muted_until = %q", got)
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(c *config.Config) { c.BaseURL = "https://herald.example.com" })
	u := env.newUser("headers@example.com")

	// Every answer: API JSON, errors, and the answers that carry secrets.
	for _, r := range []response{
		env.request("GET", "/healthz", nil, ""),
		env.request("GET", "/v1/nope", nil, ""),
		env.request("POST", "/v1/channels", map[string]string{"name": "h"}, u.Token),
		env.request("POST", "/v1/keys", map[string]string{"name": "k"}, u.Token),
	} {
		for name, want := range map[string]string{
			"Referrer-Policy":           "no-referrer",
			"Content-Security-Policy":   "default-src 'none'; frame-ancestors 'none'",
			"X-Frame-Options":           "DENY",
			"X-Content-Type-Options":    "nosniff",
			"Cache-Control":             "no-store",
			"Strict-Transport-Security": "max-age=63072000",
		} {
			if got := r.Header.Get(name); got != want {
				t.Errorf("%d %s: %s = %q, want %q", r.Status, r.Raw, name, got, want)
			}
		}
	}

	// The HTML signature docs: the same protections, and a policy that
	// allows exactly its own style sheet.
	r := env.request("GET", "/v1/verify/docs", nil, "", "Accept", "text/html")
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("docs: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	csp := r.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("docs CSP = %q", csp)
	}
	style := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindSubmatch(r.Raw)
	if style == nil {
		t.Fatal("docs page has no style sheet")
	}
	sum := sha256.Sum256(style[1])
	if want := "style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(csp, want) {
		t.Errorf("docs CSP %q does not allow its style sheet (%s)", csp, want)
	}
	for _, name := range []string{"Referrer-Policy", "Strict-Transport-Security", "X-Frame-Options"} {
		if r.Header.Get(name) == "" {
			t.Errorf("docs page lacks %s", name)
		}
	}

	// Without https, no HSTS.
	plain := newTestEnv(t)
	if got := plain.request("GET", "/healthz", nil, "").Header.Get("Strict-Transport-Security"); got != "" {
		t.Errorf("HSTS %q over a plain-http base_url", got)
	}
}

func TestMetricsToken(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(c *config.Config) { c.MetricsToken = "m3trics-s3cret" })
	wantError(t, env.request("GET", "/metrics", nil, ""), 401, "invalid_token")
	wantError(t, env.request("GET", "/metrics", nil, "wrong"), 401, "invalid_token")
	r := env.request("GET", "/metrics", nil, "m3trics-s3cret")
	if r.Status != 200 || !strings.Contains(string(r.Raw), "herald_http_requests_total") {
		t.Fatalf("with the token: %d %.200s", r.Status, r.Raw)
	}
	// Without a token configured, /metrics stays open (the default).
	if r := newTestEnv(t).request("GET", "/metrics", nil, ""); r.Status != 200 {
		t.Fatalf("open metrics: %d", r.Status)
	}
}
