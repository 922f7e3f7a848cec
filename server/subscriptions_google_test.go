package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/appstore"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/googletest"
	"github.com/heraldhq/herald/store"
)

// Google Play subscriptions, end to end: the real appstore.Play signs a
// service-account JWT, trades it for an access token at a fake OAuth2 token
// endpoint and reads purchases from a fake Play Developer API; the real
// appstore.PubSub checks push tokens minted by a fake OIDC issuer.

const (
	playPackage    = "com.example.herald"
	playMonthly    = "herald_pro_monthly"
	playYearly     = "herald_pro_yearly"
	playSAEmail    = "herald-play@herald-test.iam.gserviceaccount.com"
	playScopeWant  = "https://www.googleapis.com/auth/androidpublisher"
	pubsubAudience = "https://herald.example.com/v1/subscriptions/google/webhook"
	pubsubEmail    = "play-rtdn@herald-test.iam.gserviceaccount.com"

	playActive   = "SUBSCRIPTION_STATE_ACTIVE"
	playGrace    = "SUBSCRIPTION_STATE_IN_GRACE_PERIOD"
	playCanceled = "SUBSCRIPTION_STATE_CANCELED"
	playOnHold   = "SUBSCRIPTION_STATE_ON_HOLD"
	playPaused   = "SUBSCRIPTION_STATE_PAUSED"
	playExpired  = "SUBSCRIPTION_STATE_EXPIRED"

	// RTDN subscription notification types.
	rtdnRecovered = 1
	rtdnRenewed   = 2
	rtdnRevoked   = 12
	rtdnExpired   = 13
)

// playPurchase is what the fake Play API says of a purchase token.
type playPurchase struct {
	state   string
	product string
	expiry  time.Time
}

// playCall is one request the Play API got.
type playCall struct {
	Path          string // escaped
	Authorization string
}

// fakePlay is a service account's token endpoint (googletest) and the
// purchases.subscriptionsv2.get method of the Play Developer API.
type fakePlay struct {
	t           *testing.T
	srv         *httptest.Server
	sa          *googletest.ServiceAccount
	credentials string // service-account JSON file

	mu        sync.Mutex
	purchases map[string]playPurchase
	down      int // non-zero: the Play API answers every call with this status
	calls     []playCall
}

func newFakePlay(t *testing.T) *fakePlay {
	t.Helper()
	f := &fakePlay{t: t, purchases: map[string]playPurchase{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /androidpublisher/v3/applications/{package}/purchases/subscriptionsv2/tokens/{token}", f.serveSubscription)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	f.sa = googletest.New(t, mux, f.srv.URL, playScopeWant, "herald-test", playSAEmail)
	f.credentials = f.sa.CredentialsFile
	return f
}

// playAPIError is the Google API error body.
func playAPIError(code int, status, message string) map[string]any {
	return map[string]any{"error": map[string]any{"code": code, "message": message, "status": status,
		"errors": []map[string]any{{"message": message, "domain": "androidpublisher", "reason": strings.ToLower(status)}}}}
}

func (f *fakePlay) serveSubscription(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls = append(f.calls, playCall{Path: r.URL.EscapedPath(), Authorization: r.Header.Get("Authorization")})
	authorized := f.sa.Authorized(r.Header.Get("Authorization"))
	down := f.down
	p, known := f.purchases[r.PathValue("token")]
	f.mu.Unlock()
	switch {
	case !authorized:
		writeJSONForTest(w, http.StatusUnauthorized, playAPIError(401, "UNAUTHENTICATED",
			"Request is missing required authentication credential."))
	case r.PathValue("package") != playPackage:
		writeJSONForTest(w, http.StatusNotFound, playAPIError(404, "NOT_FOUND", "No application was found for the given package name."))
	case down != 0:
		writeJSONForTest(w, down, playAPIError(down, http.StatusText(down), "Internal error encountered."))
	case !known:
		writeJSONForTest(w, http.StatusNotFound, playAPIError(404, "NOT_FOUND", "The purchase token was not found."))
	default:
		writeJSONForTest(w, http.StatusOK, map[string]any{
			"kind":                 "androidpublisher#subscriptionPurchaseV2",
			"regionCode":           "US",
			"startTime":            p.expiry.Add(-30 * 24 * time.Hour).UTC().Format(time.RFC3339Nano),
			"subscriptionState":    p.state,
			"latestOrderId":        "GPA.3333-4444-5555-66666",
			"acknowledgementState": "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED",
			"lineItems": []map[string]any{{
				"productId":        p.product,
				"expiryTime":       p.expiry.UTC().Format(time.RFC3339Nano),
				"autoRenewingPlan": map[string]any{"autoRenewEnabled": p.state == playActive},
				"offerDetails":     map[string]any{"basePlanId": "monthly"},
			}},
		})
	}
}

func (f *fakePlay) set(token, state, product string, expiry time.Time) {
	f.mu.Lock()
	f.purchases[token] = playPurchase{state: state, product: product, expiry: expiry}
	f.mu.Unlock()
}

func (f *fakePlay) setDown(status int) {
	f.mu.Lock()
	f.down = status
	f.mu.Unlock()
}

func (f *fakePlay) callLog() []playCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakePlay) tokens() []string { return f.sa.Issued() }

// playToken is a purchase token shaped like Google's.
func playToken(name string) string {
	return name + "lmgkbjpbghdmnak.AO-J1Oy7hL0FfBqSxvQj3kRUFV3d8DOZ9H_g3WxqD0lZjm4n6Fp1R7Qf2pB0xXcL8mG3Ty"
}

func playPath(token string) string {
	return "/androidpublisher/v3/applications/" + playPackage + "/purchases/subscriptionsv2/tokens/" + token
}

// googleEnv is a server with Google Play configured against fakePlay, and
// its Pub/Sub webhook trusting idp instead of accounts.google.com.
type googleEnv struct {
	*testEnv
	t    *testing.T
	play *fakePlay
	idp  *fakeIdP
}

func newGoogleEnv(t *testing.T) *googleEnv {
	t.Helper()
	play := newFakePlay(t)
	idp := newFakeIdP(t)
	env := newTestEnv(t, func(c *config.Config) {
		c.Plans.Pro = config.Plan{SendPerMinute: 100001, APIPerMinute: 100002} // tells the plans' limits apart
		c.Subscriptions.Google = config.Google{PackageName: playPackage, ProProductIDs: []string{playMonthly, playYearly},
			CredentialsFile: play.credentials, Endpoint: play.srv.URL, PubsubAudience: pubsubAudience, PubsubEmail: pubsubEmail}
	})
	if env.s.subs == nil || env.s.subs.Play == nil || env.s.subs.PubSub == nil {
		t.Fatal("NewSubscriptions did not configure Google Play and its webhook")
	}
	env.s.subs.PubSub = appstore.NewPubSub(pubsubAudience, pubsubEmail, playPackage, idp.URL, idp.URL+"/jwks",
		&http.Client{Timeout: 10 * time.Second})
	return &googleEnv{testEnv: env, t: t, play: play, idp: idp}
}

// in is g for the subtest t: its helpers fail t, not the parent test.
func (g *googleEnv) in(t *testing.T) *googleEnv {
	e := *g.testEnv
	e.t = t
	return &googleEnv{testEnv: &e, t: t, play: g.play, idp: g.idp}
}

func googleVerifyBody(token, product string) map[string]string {
	return map[string]string{"purchase_token": token, "product_id": product}
}

// pubsubToken is an OIDC token as Pub/Sub puts on a push, with extra
// claims merged over it (nil deletes one).
func (g *googleEnv) pubsubToken(extra map[string]any) string {
	c := map[string]any{"aud": pubsubAudience, "email": pubsubEmail, "email_verified": true,
		"sub": "113463856329584651278", "azp": "113463856329584651278", "name": nil}
	for k, v := range extra {
		c[k] = v
	}
	return g.idp.token(c)
}

// pubsubPushBody wraps a Real-time Developer Notification in a Pub/Sub push.
func pubsubPushBody(t *testing.T, rtdn map[string]any) []byte {
	t.Helper()
	data, err := json.Marshal(rtdn)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(map[string]any{
		"message": map[string]any{
			"attributes":   map[string]string{},
			"data":         base64.StdEncoding.EncodeToString(data),
			"messageId":    "2070443601311540",
			"message_id":   "2070443601311540",
			"publishTime":  "2021-02-26T19:13:55.749Z",
			"publish_time": "2021-02-26T19:13:55.749Z",
		},
		"subscription": "projects/herald-test/subscriptions/play-rtdn-push",
	})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func playRTDN(pkg string, typ int, token, product string) map[string]any {
	return map[string]any{"version": "1.0", "packageName": pkg, "eventTimeMillis": "1614366835749",
		"subscriptionNotification": map[string]any{"version": "1.0", "notificationType": typ,
			"purchaseToken": token, "subscriptionId": product}}
}

// push delivers body to the Google webhook with authorization as is ("" sends none).
func (g *googleEnv) push(authorization string, body []byte) response {
	g.t.Helper()
	if authorization == "" {
		return g.request("POST", "/v1/subscriptions/google/webhook", body, "")
	}
	return g.request("POST", "/v1/subscriptions/google/webhook", body, "", "Authorization", authorization)
}

// wantGooglePushed checks a webhook answer.
func wantGooglePushed(t *testing.T, r response, ignored bool) {
	t.Helper()
	if r.Status != 200 || r.Body["ok"] != true || r.Body["ignored"] != ignored {
		t.Fatalf("webhook answered %d %s, want 200 ok with ignored %v", r.Status, r.Raw, ignored)
	}
}

// googleView is what GET /v1/subscriptions should say.
type googleView struct {
	plan, status, product string
	expires               *time.Time
}

func (g *googleEnv) wantView(r response, want googleView) {
	g.t.Helper()
	t := g.t
	if r.Status != 200 {
		t.Fatalf("status %d %s, want 200", r.Status, r.Raw)
	}
	if r.Str("plan") != want.plan || r.Str("status") != want.status {
		t.Fatalf("plan %q status %q, want %q %q: %s", r.Str("plan"), r.Str("status"), want.plan, want.status, r.Raw)
	}
	if want.status == "none" {
		if r.Body["store"] != nil || r.Body["product_id"] != nil || r.Body["expires_at"] != nil {
			t.Fatalf("no subscription, yet %s", r.Raw)
		}
	} else if r.Str("store") != "google" || r.Str("product_id") != want.product {
		t.Fatalf("store %v product_id %v, want google %q: %s", r.Body["store"], r.Body["product_id"], want.product, r.Raw)
	}
	switch raw := r.Body["expires_at"]; {
	case want.expires == nil && raw != nil:
		t.Fatalf("expires_at = %v, want null", raw)
	case want.expires != nil:
		s, _ := raw.(string)
		got, err := time.Parse(time.RFC3339, s)
		if err != nil || !got.Equal(*want.expires) {
			t.Fatalf("expires_at = %v, want %s (%v)", raw, want.expires.Format(time.RFC3339Nano), err)
		}
	}
	limits, _ := r.Body["limits"].(map[string]any)
	pl := g.cfg.Plans.Limits(want.plan)
	if limits["send_per_minute"] != float64(pl.SendPerMinute) || limits["api_per_minute"] != float64(pl.APIPerMinute) {
		t.Fatalf("limits %v, want those of %s %+v", r.Body["limits"], want.plan, pl)
	}
}

// wantSubscription checks GET /v1/subscriptions for u and the user's plan
// in the database.
func (g *googleEnv) wantSubscription(u *testUser, want googleView) {
	g.t.Helper()
	g.wantView(g.do(200, "GET", "/v1/subscriptions", nil, u.Token), want)
	stored, err := g.st.UserByID(context.Background(), u.ID)
	if err != nil {
		g.t.Fatal(err)
	}
	if stored.Plan != want.plan {
		g.t.Fatalf("stored plan of %s = %q, want %q", u.Email, stored.Plan, want.plan)
	}
}

// wantStored checks the stored row of a purchase token.
func (g *googleEnv) wantStored(token string, owner *testUser, status string, expires time.Time) {
	g.t.Helper()
	sub, err := g.st.Subscription(context.Background(), "google", token)
	if err != nil {
		g.t.Fatalf("purchase %s: %v", token, err)
	}
	if sub.UserID != owner.ID || sub.Status != status || sub.ExpiresAt == nil || !sub.ExpiresAt.Equal(expires) {
		g.t.Fatalf("stored %+v (expires %v), want owner %s, status %s, expires %s", sub, sub.ExpiresAt, owner.ID, status, expires)
	}
}

// wantNothingStored checks that u has no subscription and token is unknown.
func (g *googleEnv) wantNothingStored(u *testUser, token string) {
	g.t.Helper()
	ctx := context.Background()
	if sub, err := g.st.UserSubscription(ctx, u.ID); !errors.Is(err, store.ErrNotFound) {
		g.t.Fatalf("subscription of %s = %+v, %v; want none", u.Email, sub, err)
	}
	if sub, err := g.st.Subscription(ctx, "google", token); !errors.Is(err, store.ErrNotFound) {
		g.t.Fatalf("purchase %s stored as %+v, %v; want nothing", token, sub, err)
	}
	g.wantSubscription(u, googleView{plan: "free", status: "none"})
}

func TestGoogleVerifyActivatesPro(t *testing.T) {
	t.Parallel()
	g := newGoogleEnv(t)
	u := g.newUser("play@example.com")
	token := playToken("happy")
	expires := g.clock.Now().Add(30*24*time.Hour + 345*time.Millisecond)
	g.play.set(token, playActive, playMonthly, expires)
	g.wantSubscription(u, googleView{plan: "free", status: "none"})

	r := g.do(200, "POST", "/v1/subscriptions/google/verify", googleVerifyBody(token, playMonthly), u.Token)
	want := googleView{plan: "pro", status: "active", product: playMonthly, expires: &expires}
	g.wantView(r, want)
	g.wantSubscription(u, want)
	g.wantStored(token, u, store.SubscriptionActive, expires)

	calls, issued := g.play.callLog(), g.play.tokens()
	if len(calls) != 1 || len(issued) != 1 {
		t.Fatalf("Play API calls %+v, access tokens issued %v; want one of each", calls, issued)
	}
	if calls[0].Path != playPath(token) {
		t.Fatalf("Play API path = %q, want %q", calls[0].Path, playPath(token))
	}
	if calls[0].Authorization != "Bearer "+issued[0] {
		t.Fatalf("Play API Authorization = %q, want the token from /token %q", calls[0].Authorization, "Bearer "+issued[0])
	}

	// The app may verify again (a restore, with an API key this time): same
	// answer, and the access token is reused rather than fetched again.
	key := g.apiKey(u)
	g.wantView(g.do(200, "POST", "/v1/subscriptions/google/verify", googleVerifyBody(token, playMonthly), key), want)
	g.wantView(g.do(200, "GET", "/v1/subscriptions", nil, key), want)
	if calls, issued := g.play.callLog(), g.play.tokens(); len(calls) != 2 || len(issued) != 1 ||
		calls[1].Authorization != "Bearer "+issued[0] {
		t.Fatalf("after a second verify: Play API calls %+v, access tokens %v", calls, issued)
	}
}

// Which Play states pay for pro: a grace period and a cancelled
// subscription run to their expiry; on hold, paused and expired do not.
func TestGoogleVerifyStates(t *testing.T) {
	t.Parallel()
	g := newGoogleEnv(t)
	now := g.clock.Now()
	for i, tc := range []struct {
		state   string
		expiry  time.Duration
		product string
		plan    string
		status  string
	}{
		{playActive, 72 * time.Hour, playYearly, "pro", "active"},
		{playGrace, 48 * time.Hour, playMonthly, "pro", "active"},
		{playCanceled, 10 * 24 * time.Hour, playMonthly, "pro", "active"},
		{playCanceled, -time.Hour, playMonthly, "free", "expired"},
		{playOnHold, -time.Hour, playMonthly, "free", "expired"},
		{playPaused, -24 * time.Hour, playMonthly, "free", "expired"},
		{playExpired, -time.Minute, playMonthly, "free", "expired"},
	} {
		t.Run(fmt.Sprintf("%s_%s", tc.state, tc.expiry), func(t *testing.T) {
			g := g.in(t)
			u := g.newUser(fmt.Sprintf("state%d@example.com", i))
			token := playToken(fmt.Sprintf("state%d", i))
			expires := now.Add(tc.expiry)
			g.play.set(token, tc.state, tc.product, expires)
			want := googleView{plan: tc.plan, status: tc.status, product: tc.product, expires: &expires}
			g.wantView(g.do(200, "POST", "/v1/subscriptions/google/verify", googleVerifyBody(token, tc.product), u.Token), want)
			g.wantSubscription(u, want)
			g.wantStored(token, u, tc.status, expires)
		})
	}
}

func TestGoogleVerifyErrors(t *testing.T) {
	t.Parallel()
	g := newGoogleEnv(t)
	u := g.newUser("errors@example.com")
	known := playToken("known")
	g.play.set(known, playActive, playYearly, g.clock.Now().Add(30*24*time.Hour))
	unknown := playToken("unknown")
	for _, tc := range []struct {
		name     string
		path     string
		body     any
		token    string // user's session unless "-"
		down     int
		status   int
		code     string
		playCall bool // whether Herald should have asked Google
	}{
		{name: "unknown store", path: "/v1/subscriptions/nokia/verify", body: googleVerifyBody(known, playYearly), status: 404, code: "not_found"},
		{name: "apple not configured", path: "/v1/subscriptions/apple/verify", body: map[string]string{"signed_transaction": "x.y.z"}, status: 404, code: "not_found"},
		{name: "not signed in", body: googleVerifyBody(known, playYearly), token: "-", status: 401, code: "invalid_token"},
		{name: "missing purchase_token", body: map[string]string{"product_id": playYearly}, status: 400, code: "invalid_payload"},
		{name: "empty purchase_token", body: googleVerifyBody("", playYearly), status: 400, code: "invalid_payload"},
		{name: "missing product_id", body: map[string]string{"purchase_token": known}, status: 400, code: "invalid_payload"},
		{name: "unknown field", body: map[string]string{"purchase_token": known, "product_id": playYearly, "sku": "x"}, status: 400, code: "invalid_payload"},
		{name: "bad JSON", body: `{"purchase_token":`, status: 400, code: "invalid_json"},
		{name: "product not pro", body: googleVerifyBody(known, "coins_100"), status: 400, code: "invalid_payload"},
		{name: "purchase is for another product", body: googleVerifyBody(known, playMonthly), status: 400, code: "invalid_payload", playCall: true},
		{name: "play 404", body: googleVerifyBody(unknown, playYearly), status: 400, code: "invalid_payload", playCall: true},
		{name: "play 410", body: googleVerifyBody(known, playYearly), down: 410, status: 400, code: "invalid_payload", playCall: true},
		{name: "play 400 invalid value", body: googleVerifyBody(known, playYearly), down: 400, status: 400, code: "invalid_payload", playCall: true},
		{name: "play 500", body: googleVerifyBody(known, playYearly), down: 500, status: 503, code: "provider_unavailable", playCall: true},
		{name: "play 503", body: googleVerifyBody(known, playYearly), down: 503, status: 503, code: "provider_unavailable", playCall: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := g.in(t)
			path := tc.path
			if path == "" {
				path = "/v1/subscriptions/google/verify"
			}
			token := u.Token
			if tc.token == "-" {
				token = ""
			}
			g.play.setDown(tc.down)
			defer g.play.setDown(0)
			before := len(g.play.callLog())
			wantError(t, g.request("POST", path, tc.body, token), tc.status, tc.code)
			if called := len(g.play.callLog()) > before; called != tc.playCall {
				t.Fatalf("Play API called: %v, want %v", called, tc.playCall)
			}
			g.wantNothingStored(u, known)
			g.wantNothingStored(u, unknown)
		})
	}
	if !strings.Contains(g.logs.String(), "google play api") {
		t.Errorf("Play API failures were not logged:\n%s", g.logs.String())
	}
}

func TestGoogleNotConfigured(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("nogoogle@example.com")
	wantError(t, env.request("POST", "/v1/subscriptions/google/verify", googleVerifyBody(playToken("x"), playMonthly), u.Token), 404, "not_found")
	wantError(t, env.request("POST", "/v1/subscriptions/google/webhook", pubsubPushBody(t, playRTDN(playPackage, rtdnRenewed, playToken("x"), playMonthly)), ""), 404, "not_found")
	if r := env.do(200, "GET", "/v1/subscriptions", nil, u.Token); r.Str("plan") != "free" || r.Str("status") != "none" {
		t.Fatalf("subscription = %s", r.Raw)
	}

	// Play configured, but no pubsub_audience: verify works, the webhook is off.
	play := newFakePlay(t)
	env2 := newTestEnv(t, func(c *config.Config) {
		c.Subscriptions.Google = config.Google{PackageName: playPackage, ProProductIDs: []string{playMonthly},
			CredentialsFile: play.credentials, Endpoint: play.srv.URL}
	})
	if env2.s.subs.PubSub != nil {
		t.Fatal("a Pub/Sub verifier without pubsub_audience")
	}
	wantError(t, env2.request("POST", "/v1/subscriptions/google/webhook", pubsubPushBody(t, playRTDN(playPackage, rtdnRenewed, playToken("x"), playMonthly)), ""), 404, "not_found")
	u2 := env2.newUser("nowebhook@example.com")
	play.set(playToken("y"), playActive, playMonthly, env2.clock.Now().Add(time.Hour))
	if r := env2.do(200, "POST", "/v1/subscriptions/google/verify", googleVerifyBody(playToken("y"), playMonthly), u2.Token); r.Str("plan") != "pro" {
		t.Fatalf("verify = %s", r.Raw)
	}
}

func TestGoogleVerifyPurchaseTaken(t *testing.T) {
	t.Parallel()
	g := newGoogleEnv(t)
	first, second := g.newUser("first@example.com"), g.newUser("second@example.com")
	token := playToken("shared")
	expires := g.clock.Now().Add(30 * 24 * time.Hour)
	g.play.set(token, playActive, playMonthly, expires)
	pro := googleView{plan: "pro", status: "active", product: playMonthly, expires: &expires}
	g.wantView(g.do(200, "POST", "/v1/subscriptions/google/verify", googleVerifyBody(token, playMonthly), first.Token), pro)

	wantError(t, g.request("POST", "/v1/subscriptions/google/verify", googleVerifyBody(token, playMonthly), second.Token), 409, "purchase_taken")
	g.wantSubscription(first, pro)
	g.wantStored(token, first, store.SubscriptionActive, expires)
	if sub, err := g.st.UserSubscription(context.Background(), second.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second user's subscription = %+v, %v; want none", sub, err)
	}
	g.wantSubscription(second, googleView{plan: "free", status: "none"})
}

func TestGoogleWebhookExpires(t *testing.T) {
	t.Parallel()
	g := newGoogleEnv(t)
	u := g.newUser("webhook@example.com")
	token := playToken("webhook")
	expires := g.clock.Now().Add(30 * 24 * time.Hour)
	g.play.set(token, playActive, playMonthly, expires)
	pro := googleView{plan: "pro", status: "active", product: playMonthly, expires: &expires}
	g.wantView(g.do(200, "POST", "/v1/subscriptions/google/verify", googleVerifyBody(token, playMonthly), u.Token), pro)

	// Google revokes the purchase; what Play says now is what counts.
	ended := g.clock.Now().Add(-time.Minute)
	g.play.set(token, playExpired, playMonthly, ended)
	body := pubsubPushBody(t, playRTDN(playPackage, rtdnRevoked, token, playMonthly))

	claims := g.idp.claims(map[string]any{"aud": pubsubAudience, "email": pubsubEmail, "email_verified": true, "sub": "1"})
	for _, tc := range []struct {
		name, authorization string
		body                []byte
	}{
		{"missing header", "", body},
		{"not bearer", "Basic " + base64.StdEncoding.EncodeToString([]byte("pubsub:secret")), body},
		{"garbage token", "Bearer not.a.jwt", body},
		{"wrong audience", "Bearer " + g.pubsubToken(map[string]any{"aud": "https://evil.example.com/push"}), body},
		{"wrong signing key", "Bearer " + g.idp.sign(g.idp.other, idpKID, claims), body},
		{"unknown key id", "Bearer " + g.idp.sign(g.idp.other, "other-key", claims), body},
		{"wrong issuer", "Bearer " + g.pubsubToken(map[string]any{"iss": "https://accounts.example.com"}), body},
		{"expired", "Bearer " + g.pubsubToken(map[string]any{"iat": time.Now().Add(-2 * time.Hour).Unix(), "exp": time.Now().Add(-time.Hour).Unix()}), body},
		{"another service account", "Bearer " + g.pubsubToken(map[string]any{"email": "someone@evil.iam.gserviceaccount.com"}), body},
		{"email not verified", "Bearer " + g.pubsubToken(map[string]any{"email_verified": false}), body},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := g.in(t)
			before := len(g.play.callLog())
			wantError(t, g.push(tc.authorization, tc.body), 401, "invalid_token")
			if n := len(g.play.callLog()); n != before {
				t.Fatalf("a rejected push made %d Play API calls", n-before)
			}
			g.wantSubscription(u, pro)
			g.wantStored(token, u, store.SubscriptionActive, expires)
		})
	}

	// A good token with a body that is no notification is a 400; another
	// app's notification is acknowledged and left alone (Pub/Sub would
	// redeliver anything else for days).
	before := len(g.play.callLog())
	wantError(t, g.push("Bearer "+g.pubsubToken(nil), []byte(`{"message":{"data":"bm90IGpzb24="}}`)), 400, "invalid_payload")
	wantGooglePushed(t, g.push("Bearer "+g.pubsubToken(nil), pubsubPushBody(t, playRTDN("com.example.other", rtdnRevoked, token, playMonthly))), true)
	if n := len(g.play.callLog()); n != before {
		t.Fatalf("a bad body or another app's notification made %d Play API calls", n-before)
	}
	g.wantSubscription(u, pro)

	wantGooglePushed(t, g.push("Bearer "+g.pubsubToken(nil), body), false)
	if calls := g.play.callLog(); len(calls) != before+1 || calls[len(calls)-1].Path != playPath(token) {
		t.Fatalf("the push should make one Play API call for %s; calls %+v", token, calls[before:])
	}
	expired := googleView{plan: "free", status: "expired", product: playMonthly, expires: &ended}
	g.wantSubscription(u, expired)
	g.wantStored(token, u, store.SubscriptionExpired, ended)
}

func TestGoogleWebhookRenewsAndRecovers(t *testing.T) {
	t.Parallel()
	g := newGoogleEnv(t)
	u := g.newUser("renew@example.com")
	token := playToken("renew")
	now := g.clock.Now()
	first := now.Add(24 * time.Hour)
	g.play.set(token, playActive, playMonthly, first)
	g.do(200, "POST", "/v1/subscriptions/google/verify", googleVerifyBody(token, playMonthly), u.Token)

	// Renewed: a new period.
	second := now.Add(31 * 24 * time.Hour)
	g.play.set(token, playActive, playMonthly, second)
	wantGooglePushed(t, g.push("Bearer "+g.pubsubToken(nil), pubsubPushBody(t, playRTDN(playPackage, rtdnRenewed, token, playMonthly))), false)
	g.wantSubscription(u, googleView{plan: "pro", status: "active", product: playMonthly, expires: &second})
	g.wantStored(token, u, store.SubscriptionActive, second)

	// Play cannot be asked: 503, so Pub/Sub delivers again; nothing changes.
	g.play.setDown(500)
	wantError(t, g.push("Bearer "+g.pubsubToken(nil), pubsubPushBody(t, playRTDN(playPackage, rtdnExpired, token, playMonthly))), 503, "provider_unavailable")
	g.play.setDown(0)
	g.wantSubscription(u, googleView{plan: "pro", status: "active", product: playMonthly, expires: &second})

	// On hold, then recovered.
	g.play.set(token, playOnHold, playMonthly, now.Add(-time.Hour))
	wantGooglePushed(t, g.push("Bearer "+g.pubsubToken(nil), pubsubPushBody(t, playRTDN(playPackage, 5, token, playMonthly))), false)
	held := now.Add(-time.Hour)
	g.wantSubscription(u, googleView{plan: "free", status: "expired", product: playMonthly, expires: &held})
	third := now.Add(30 * 24 * time.Hour)
	g.play.set(token, playActive, playMonthly, third)
	wantGooglePushed(t, g.push("Bearer "+g.pubsubToken(nil), pubsubPushBody(t, playRTDN(playPackage, rtdnRecovered, token, playMonthly))), false)
	g.wantSubscription(u, googleView{plan: "pro", status: "active", product: playMonthly, expires: &third})

	// The purchase moves to another pro product (same token): still pro, for it.
	yearly := now.Add(365 * 24 * time.Hour)
	g.play.set(token, playActive, playYearly, yearly)
	wantGooglePushed(t, g.push("Bearer "+g.pubsubToken(nil), pubsubPushBody(t, playRTDN(playPackage, rtdnRenewed, token, playYearly))), false)
	g.wantSubscription(u, googleView{plan: "pro", status: "active", product: playYearly, expires: &yearly})
	g.wantStored(token, u, store.SubscriptionActive, yearly)

	// ... and to a product that does not pay for pro: it ends.
	g.play.set(token, playActive, "herald_basic_monthly", now.Add(30*24*time.Hour))
	wantGooglePushed(t, g.push("Bearer "+g.pubsubToken(nil), pubsubPushBody(t, playRTDN(playPackage, rtdnRenewed, token, "herald_basic_monthly"))), false)
	g.wantSubscription(u, googleView{plan: "free", status: "expired", product: playYearly, expires: &yearly})
	g.wantStored(token, u, store.SubscriptionExpired, yearly)

	// Back on pro, then Google no longer knows the token: nothing is paid for.
	g.play.set(token, playActive, playMonthly, third)
	wantGooglePushed(t, g.push("Bearer "+g.pubsubToken(nil), pubsubPushBody(t, playRTDN(playPackage, rtdnRecovered, token, playMonthly))), false)
	g.wantSubscription(u, googleView{plan: "pro", status: "active", product: playMonthly, expires: &third})
	g.play.mu.Lock()
	delete(g.play.purchases, token)
	g.play.mu.Unlock()
	wantGooglePushed(t, g.push("Bearer "+g.pubsubToken(nil), pubsubPushBody(t, playRTDN(playPackage, rtdnExpired, token, playMonthly))), false)
	g.wantSubscription(u, googleView{plan: "free", status: "expired", product: playMonthly, expires: &third})
	g.wantStored(token, u, store.SubscriptionExpired, third)
}

func TestGoogleWebhookIgnored(t *testing.T) {
	t.Parallel()
	g := newGoogleEnv(t)
	u := g.newUser("ignored@example.com")
	token := playToken("mine")
	expires := g.clock.Now().Add(30 * 24 * time.Hour)
	g.play.set(token, playActive, playMonthly, expires)
	g.do(200, "POST", "/v1/subscriptions/google/verify", googleVerifyBody(token, playMonthly), u.Token)
	// Google would say the other purchase has ended, but no user verified it.
	other := playToken("nobodys")
	g.play.set(other, playExpired, playMonthly, g.clock.Now().Add(-time.Hour))
	before := len(g.play.callLog())

	wantGooglePushed(t, g.push("Bearer "+g.pubsubToken(nil), pubsubPushBody(t, playRTDN(playPackage, rtdnExpired, other, playMonthly))), true)
	test := map[string]any{"version": "1.0", "packageName": playPackage, "eventTimeMillis": "1614366835749",
		"testNotification": map[string]any{"version": "1.0"}}
	wantGooglePushed(t, g.push("Bearer "+g.pubsubToken(nil), pubsubPushBody(t, test)), true)
	if n := len(g.play.callLog()); n != before {
		t.Fatalf("ignored pushes made %d Play API calls", n-before)
	}
	if _, err := g.st.Subscription(context.Background(), "google", other); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an ignored purchase was stored: %v", err)
	}
	g.wantSubscription(u, googleView{plan: "pro", status: "active", product: playMonthly, expires: &expires})
}

func TestGoogleSubscriptionExpiresBySweep(t *testing.T) {
	t.Parallel()
	g := newGoogleEnv(t)
	short, long := g.newUser("short@example.com"), g.newUser("long@example.com")
	shortToken, longToken := playToken("short"), playToken("long")
	soon, later := g.clock.Now().Add(time.Hour), g.clock.Now().Add(30*24*time.Hour)
	g.play.set(shortToken, playActive, playMonthly, soon)
	g.play.set(longToken, playActive, playYearly, later)
	g.wantView(g.do(200, "POST", "/v1/subscriptions/google/verify", googleVerifyBody(shortToken, playMonthly), short.Token),
		googleView{plan: "pro", status: "active", product: playMonthly, expires: &soon})
	g.do(200, "POST", "/v1/subscriptions/google/verify", googleVerifyBody(longToken, playYearly), long.Token)

	// Sessions last an hour; API keys outlive the jump.
	short.Token, long.Token = g.apiKey(short), g.apiKey(long)
	g.clock.Advance(2 * time.Hour)
	g.s.svc.Sweep(context.Background())

	g.wantSubscription(short, googleView{plan: "free", status: "expired", product: playMonthly, expires: &soon})
	g.wantStored(shortToken, short, store.SubscriptionExpired, soon)
	g.wantSubscription(long, googleView{plan: "pro", status: "active", product: playYearly, expires: &later})
	g.wantStored(longToken, long, store.SubscriptionActive, later)
}
