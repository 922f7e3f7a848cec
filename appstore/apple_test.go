package appstore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/appstore"
	"github.com/heraldhq/herald/appstore/appletest"
)

const bundle = "com.example.herald"

func transaction(expires time.Time) map[string]any {
	return map[string]any{
		"transactionId": "2000000111", "originalTransactionId": "2000000100", "bundleId": bundle,
		"productId": "pro.monthly", "expiresDate": expires.UnixMilli(), "environment": "Sandbox",
		"type": "Auto-Renewable Subscription",
	}
}

func newApple(t *testing.T, c *appletest.Chain) *appstore.Apple {
	t.Helper()
	a, err := appstore.NewApple(bundle, c.RootFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestAppleVerifyTransaction(t *testing.T) {
	t.Parallel()
	c := appletest.NewChain(t, appletest.Options{})
	a := newApple(t, c)
	expires := time.Now().Add(30 * 24 * time.Hour).Truncate(time.Millisecond).UTC()
	got, err := a.VerifyTransaction(c.Sign(transaction(expires)))
	if err != nil {
		t.Fatal(err)
	}
	if got.OriginalTransactionID != "2000000100" || got.ProductID != "pro.monthly" || got.Environment != "Sandbox" {
		t.Errorf("transaction = %+v", got)
	}
	if e := got.Expires(); e == nil || !e.Equal(expires) {
		t.Errorf("Expires() = %v, want %v", e, expires)
	}
}

func TestAppleRefuses(t *testing.T) {
	t.Parallel()
	good := appletest.NewChain(t, appletest.Options{})
	other := appletest.NewChain(t, appletest.Options{})
	noMarkers := appletest.NewChain(t, appletest.Options{NoMarkers: true})
	expired := appletest.NewChain(t, appletest.Options{NotAfter: time.Now().Add(-time.Minute)})
	later := time.Now().Add(time.Hour)

	wrongBundle := transaction(later)
	wrongBundle["bundleId"] = "com.example.other"
	noOriginal := transaction(later)
	delete(noOriginal, "originalTransactionId")
	parts := strings.Split(good.Sign(transaction(later)), ".")
	tampered := parts[0] + "." + parts[1] + "x." + parts[2]
	// The same signed transaction in JWS's JSON serialization: Apple sends
	// only the compact one, so nothing else is read.
	flattened := `{"protected":"` + parts[0] + `","payload":"` + parts[1] + `","signature":"` + parts[2] + `"}`

	for name, tc := range map[string]struct {
		trusted *appletest.Chain // the root the verifier trusts
		jws     string
	}{
		"another root":          {good, other.Sign(transaction(later))},
		"no App Store markers":  {noMarkers, noMarkers.Sign(transaction(later))},
		"expired leaf":          {expired, expired.Sign(transaction(later))},
		"key not the leaf's":    {good, good.SignWith(transaction(later), appletest.NewKey(t))},
		"another app":           {good, good.Sign(wrongBundle)},
		"no original id":        {good, good.Sign(noOriginal)},
		"tampered payload":      {good, tampered},
		"JSON serialization":    {good, flattened},
		"not a JWS":             {good, "hello"},
		"HS256-looking garbage": {good, "eyJhbGciOiJIUzI1NiJ9.e30.c2ln"},
	} {
		_, err := newApple(t, tc.trusted).VerifyTransaction(tc.jws)
		t.Logf("%s: %v", name, err)
		if !errors.Is(err, appstore.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	// The control: each trusted chain signs a good transaction that passes,
	// except the two whose certificates are the defect.
	if _, err := newApple(t, good).VerifyTransaction(good.Sign(transaction(later))); err != nil {
		t.Errorf("control: %v", err)
	}
}

func TestAppleNotification(t *testing.T) {
	t.Parallel()
	c := appletest.NewChain(t, appletest.Options{})
	a := newApple(t, c)
	expires := time.Now().Add(time.Hour)
	n, err := a.VerifyNotification(c.Sign(map[string]any{
		"notificationType": "DID_RENEW", "notificationUUID": "u-1",
		"data": map[string]any{"bundleId": bundle, "environment": "Sandbox",
			"signedTransactionInfo": c.Sign(transaction(expires))},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if n.Type != "DID_RENEW" || n.Transaction == nil || n.Transaction.OriginalTransactionID != "2000000100" {
		t.Errorf("notification = %+v, transaction %+v", n, n.Transaction)
	}

	test, err := a.VerifyNotification(c.Sign(map[string]any{"notificationType": "TEST",
		"data": map[string]any{"bundleId": bundle}}))
	if err != nil || test.Transaction != nil {
		t.Errorf("TEST notification: %+v, %v; want no transaction, no error", test, err)
	}

	other := appletest.NewChain(t, appletest.Options{})
	for name, payload := range map[string]string{
		"inner transaction from another root": c.Sign(map[string]any{"notificationType": "DID_RENEW",
			"data": map[string]any{"bundleId": bundle, "signedTransactionInfo": other.Sign(transaction(expires))}}),
		"another app": c.Sign(map[string]any{"notificationType": "DID_RENEW",
			"data": map[string]any{"bundleId": "com.example.other", "signedTransactionInfo": c.Sign(transaction(expires))}}),
		"outer from another root": other.Sign(map[string]any{"notificationType": "DID_RENEW",
			"data": map[string]any{"bundleId": bundle, "signedTransactionInfo": c.Sign(transaction(expires))}}),
	} {
		if _, err := a.VerifyNotification(payload); !errors.Is(err, appstore.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

// The bundled Apple root loads, and a chain of another root fails with it.
func TestAppleBundledRoot(t *testing.T) {
	t.Parallel()
	a, err := appstore.NewApple(bundle, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := appletest.NewChain(t, appletest.Options{})
	if _, err := a.VerifyTransaction(c.Sign(transaction(time.Now().Add(time.Hour)))); !errors.Is(err, appstore.ErrInvalid) {
		t.Errorf("a test chain passed against Apple's root: %v", err)
	}
	if _, err := appstore.NewApple(bundle, "/nonexistent/root.pem", nil); err == nil {
		t.Error("a missing root_ca_file was accepted")
	}
}
