package server

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/appstore/appletest"
	"github.com/heraldhq/herald/config"
)

const appleBundle = "com.example.herald"

// appleEnv is a server taking App Store subscriptions signed by a test
// chain (its root stands in for Apple's through root_ca_file).
func appleEnv(t *testing.T) (*testEnv, *appletest.Chain) {
	t.Helper()
	chain := appletest.NewChain(t, appletest.Options{})
	env := newTestEnv(t, func(c *config.Config) {
		c.Subscriptions.Apple = config.Apple{BundleID: appleBundle, ProProductIDs: []string{"pro.monthly", "pro.yearly"},
			RootCAFile: chain.RootFile}
	})
	return env, chain
}

func appleTx(original, product string, expires time.Time) map[string]any {
	return map[string]any{"transactionId": original + "-1", "originalTransactionId": original, "bundleId": appleBundle,
		"productId": product, "expiresDate": expires.UnixMilli(), "environment": "Production"}
}

// wantSubscription checks GET /v1/subscriptions for u (and the plan).
func wantSubscription(t *testing.T, env *testEnv, u *testUser, plan, status string, expires *time.Time) response {
	t.Helper()
	r := env.do(200, "GET", "/v1/subscriptions", nil, u.Token)
	if r.Str("plan") != plan || r.Str("status") != status {
		t.Fatalf("subscription = %s, want plan %s, status %s", r.Raw, plan, status)
	}
	if expires != nil {
		got, err := time.Parse(time.RFC3339Nano, r.Str("expires_at"))
		if err != nil || !got.Equal(*expires) {
			t.Fatalf("expires_at = %q, want %v", r.Str("expires_at"), expires.UTC())
		}
	}
	return r
}

func TestAppleSubscriptionVerify(t *testing.T) {
	t.Parallel()
	env, chain := appleEnv(t)
	ann, bob := env.newUser("ann@example.com"), env.newUser("bob@example.com")
	wantSubscription(t, env, ann, "free", "none", nil)

	expires := env.clock.Now().Add(30 * 24 * time.Hour).Truncate(time.Millisecond)
	r := env.do(200, "POST", "/v1/subscriptions/apple/verify",
		map[string]any{"signed_transaction": chain.Sign(appleTx("1000", "pro.monthly", expires))}, ann.Token)
	if r.Str("plan") != "pro" || r.Str("status") != "active" || r.Str("store") != "apple" || r.Str("product_id") != "pro.monthly" {
		t.Fatalf("verify answered %s", r.Raw)
	}
	wantSubscription(t, env, ann, "pro", "active", &expires)

	// The same purchase cannot pay for a second account.
	wantError(t, env.request("POST", "/v1/subscriptions/apple/verify",
		map[string]any{"signed_transaction": chain.Sign(appleTx("1000", "pro.monthly", expires))}, bob.Token), 409, "purchase_taken")
	wantSubscription(t, env, bob, "free", "none", nil)

	// Verifying again (a renewal the app saw first) moves the end date.
	later := expires.Add(30 * 24 * time.Hour)
	env.do(200, "POST", "/v1/subscriptions/apple/verify",
		map[string]any{"signed_transaction": chain.Sign(appleTx("1000", "pro.monthly", later))}, ann.Token)
	wantSubscription(t, env, ann, "pro", "active", &later)

	// A refunded purchase (revocationDate) pays for nothing.
	refunded := appleTx("1000", "pro.monthly", later)
	refunded["revocationDate"] = env.clock.Now().UnixMilli()
	env.do(200, "POST", "/v1/subscriptions/apple/verify", map[string]any{"signed_transaction": chain.Sign(refunded)}, ann.Token)
	wantSubscription(t, env, ann, "free", "expired", nil)
}

func TestAppleSubscriptionVerifyErrors(t *testing.T) {
	t.Parallel()
	env, chain := appleEnv(t)
	u := env.newUser("eve@example.com")
	later := env.clock.Now().Add(time.Hour)
	other := appletest.NewChain(t, appletest.Options{})
	for name, tc := range map[string]struct {
		path   string
		body   any
		status int
		code   string
	}{
		"unknown store":       {"/v1/subscriptions/nokia/verify", map[string]any{}, 404, "not_found"},
		"google unconfigured": {"/v1/subscriptions/google/verify", map[string]any{"purchase_token": "t", "product_id": "p"}, 404, "not_found"},
		"no transaction":      {"/v1/subscriptions/apple/verify", map[string]any{}, 400, "invalid_payload"},
		"unknown field":       {"/v1/subscriptions/apple/verify", map[string]any{"signed_transaction": "x", "receipt": "y"}, 400, "invalid_payload"},
		"not JSON":            {"/v1/subscriptions/apple/verify", "{", 400, "invalid_json"},
		"another root":        {"/v1/subscriptions/apple/verify", map[string]any{"signed_transaction": other.Sign(appleTx("2000", "pro.monthly", later))}, 400, "invalid_payload"},
		"not a pro product":   {"/v1/subscriptions/apple/verify", map[string]any{"signed_transaction": chain.Sign(appleTx("2000", "coins.100", later))}, 400, "invalid_payload"},
	} {
		t.Run(name, func(t *testing.T) {
			wantError(t, env.request("POST", tc.path, tc.body, u.Token), tc.status, tc.code)
		})
	}
	wantError(t, env.request("POST", "/v1/subscriptions/apple/verify",
		map[string]any{"signed_transaction": chain.Sign(appleTx("2000", "pro.monthly", later))}, ""), 401, "invalid_token")
	wantSubscription(t, env, u, "free", "none", nil)
	if _, err := env.st.Subscription(context.Background(), "apple", "2000"); err == nil {
		t.Error("a refused purchase was stored")
	}
}

func TestAppleSubscriptionNotifications(t *testing.T) {
	t.Parallel()
	env, chain := appleEnv(t)
	u := env.newUser("nia@example.com")
	expires := env.clock.Now().Add(24 * time.Hour).Truncate(time.Millisecond)
	env.do(200, "POST", "/v1/subscriptions/apple/verify",
		map[string]any{"signed_transaction": chain.Sign(appleTx("3000", "pro.yearly", expires))}, u.Token)

	notify := func(typ string, tx map[string]any) map[string]any {
		data := map[string]any{"bundleId": appleBundle, "environment": "Production"}
		if tx != nil {
			data["signedTransactionInfo"] = chain.Sign(tx)
		}
		return map[string]any{"signedPayload": chain.Sign(map[string]any{"notificationType": typ, "notificationUUID": typ, "data": data})}
	}
	hook := func(body any, status int) response {
		t.Helper()
		r := env.request("POST", "/v1/subscriptions/apple/webhook", body, "")
		if r.Status != status {
			t.Fatalf("webhook: %d %s, want %d", r.Status, r.Raw, status)
		}
		return r
	}

	renewed := expires.Add(365 * 24 * time.Hour)
	if r := hook(notify("DID_RENEW", appleTx("3000", "pro.yearly", renewed)), 200); r.Body["ignored"] != false {
		t.Fatalf("renewal answered %s", r.Raw)
	}
	wantSubscription(t, env, u, "pro", "active", &renewed)

	if r := hook(notify("TEST", nil), 200); r.Body["ignored"] != true {
		t.Errorf("TEST notification answered %s", r.Raw)
	}
	if r := hook(notify("SUBSCRIBED", appleTx("9999", "pro.yearly", renewed)), 200); r.Body["ignored"] != true {
		t.Errorf("a purchase no user verified answered %s", r.Raw)
	}
	other := appletest.NewChain(t, appletest.Options{})
	forged := map[string]any{"signedPayload": other.Sign(map[string]any{"notificationType": "EXPIRED",
		"data": map[string]any{"bundleId": appleBundle, "signedTransactionInfo": other.Sign(appleTx("3000", "pro.yearly", renewed))}})}
	wantError(t, hook(forged, 401), 401, "invalid_token")
	wantError(t, hook(map[string]any{}, 400), 400, "invalid_payload")
	wantSubscription(t, env, u, "pro", "active", &renewed)

	hook(notify("EXPIRED", appleTx("3000", "pro.yearly", renewed)), 200)
	wantSubscription(t, env, u, "free", "expired", nil)
}

// The sweep ends a subscription whose end date passed with no renewal.
func TestAppleSubscriptionLapses(t *testing.T) {
	t.Parallel()
	env, chain := appleEnv(t)
	u := env.newUser("lea@example.com")
	expires := env.clock.Now().Add(10 * time.Minute).Truncate(time.Millisecond)
	env.do(200, "POST", "/v1/subscriptions/apple/verify",
		map[string]any{"signed_transaction": chain.Sign(appleTx("4000", "pro.monthly", expires))}, u.Token)
	env.s.svc.Sweep(context.Background())
	wantSubscription(t, env, u, "pro", "active", &expires)

	env.clock.Advance(20 * time.Minute) // within the session's hour
	// Before the sweep runs, the answer already says expired...
	wantSubscription(t, env, u, "pro", "expired", &expires)
	env.s.svc.Sweep(context.Background())
	// ...and after it the plan follows.
	wantSubscription(t, env, u, "free", "expired", &expires)
}
