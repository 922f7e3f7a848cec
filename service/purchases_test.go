package service

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/appstore"
	"github.com/heraldhq/herald/store"
)

// TestAppleMapping: what a verified App Store transaction, and the
// notification that carries it, say of the subscription.
func TestAppleMapping(t *testing.T) {
	t.Parallel()
	end := time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)
	tx := func(revoked int64) *appstore.Transaction {
		return &appstore.Transaction{OriginalTransactionID: "1000", ProductID: "pro.monthly", ExpiresDate: end.UnixMilli(), RevocationDate: revoked}
	}
	for _, c := range []struct {
		name         string
		t            *appstore.Transaction
		notification string
		want         string
	}{
		{"a purchase", tx(0), "", store.SubscriptionActive},
		{"a renewal", tx(0), "DID_RENEW", store.SubscriptionActive},
		{"a subscription", tx(0), "SUBSCRIBED", store.SubscriptionActive},
		{"a refunded purchase", tx(1), "", store.SubscriptionExpired},
		{"a refund", tx(0), "REFUND", store.SubscriptionExpired},
		{"a revocation", tx(0), "REVOKE", store.SubscriptionExpired},
		{"an expiry", tx(0), "EXPIRED", store.SubscriptionExpired},
		{"the end of a grace period", tx(0), "GRACE_PERIOD_EXPIRED", store.SubscriptionExpired},
	} {
		t.Run(c.name, func(t *testing.T) {
			sub := appleSubscription(c.t, c.notification)
			if sub.Status != c.want || sub.Store != StoreApple || sub.OriginalID != "1000" || sub.ProductID != "pro.monthly" ||
				sub.ExpiresAt == nil || !sub.ExpiresAt.Equal(end) {
				t.Errorf("got %+v; want %s, apple, 1000, pro.monthly until %v", sub, c.want, end)
			}
		})
	}
	if sub := appleSubscription(&appstore.Transaction{OriginalTransactionID: "1", ProductID: "p"}, ""); sub.ExpiresAt != nil {
		t.Errorf("a transaction without an end: expires %v; want none", sub.ExpiresAt)
	}
}

// TestPlayMapping: what Google Play's answer about a purchase token says
// of the subscription, among the products that pay for pro.
func TestPlayMapping(t *testing.T) {
	t.Parallel()
	end := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	play := func(state, product string) *appstore.PlaySubscription {
		var ps appstore.PlaySubscription
		if err := json.Unmarshal([]byte(`{"subscriptionState":"`+state+`","lineItems":[
			{"productId":"`+product+`","expiryTime":"`+end.Format(time.RFC3339)+`"}]}`), &ps); err != nil {
			t.Fatal(err)
		}
		return &ps
	}
	pro := []string{"pro.monthly", "pro.yearly"}
	for _, c := range []struct {
		name, state, product string
		want                 string // a status, or "" for errNotPro
	}{
		{"active", "SUBSCRIPTION_STATE_ACTIVE", "pro.yearly", store.SubscriptionActive},
		{"in its grace period", "SUBSCRIPTION_STATE_IN_GRACE_PERIOD", "pro.monthly", store.SubscriptionActive},
		{"canceled, paid to its end", "SUBSCRIPTION_STATE_CANCELED", "pro.monthly", store.SubscriptionActive},
		{"on hold", "SUBSCRIPTION_STATE_ON_HOLD", "pro.monthly", store.SubscriptionExpired},
		{"paused", "SUBSCRIPTION_STATE_PAUSED", "pro.monthly", store.SubscriptionExpired},
		{"expired", "SUBSCRIPTION_STATE_EXPIRED", "pro.monthly", store.SubscriptionExpired},
		{"pending", "SUBSCRIPTION_STATE_PENDING", "pro.monthly", store.SubscriptionExpired},
		{"a product that is not pro", "SUBSCRIPTION_STATE_ACTIVE", "coins", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			sub, err := playSubscription("tok", play(c.state, c.product), pro)
			if c.want == "" {
				if !errors.Is(err, errNotPro) {
					t.Fatalf("got %+v, %v; want errNotPro", sub, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sub.Status != c.want || sub.Store != StoreGoogle || sub.OriginalID != "tok" || sub.ProductID != c.product ||
				sub.ExpiresAt == nil || !sub.ExpiresAt.Equal(end) {
				t.Errorf("got %+v; want %s, google, tok, %s until %v", sub, c.want, c.product, end)
			}
		})
	}
}
