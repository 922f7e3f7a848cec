package appstore_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/heraldhq/herald/appstore"
)

func TestPlayEntitlement(t *testing.T) {
	t.Parallel()
	early := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	late := early.Add(30 * 24 * time.Hour)
	parse := func(state string) *appstore.PlaySubscription {
		var p appstore.PlaySubscription
		if err := json.Unmarshal([]byte(`{"subscriptionState":"`+state+`","lineItems":[
			{"productId":"coins","expiryTime":"2031-01-01T00:00:00Z"},
			{"productId":"pro.monthly","expiryTime":"`+early.Format(time.RFC3339)+`"},
			{"productId":"pro.yearly","expiryTime":"`+late.Format(time.RFC3339)+`"}]}`), &p); err != nil {
			t.Fatal(err)
		}
		return &p
	}
	pro := []string{"pro.monthly", "pro.yearly"}
	for state, want := range map[string]bool{
		"SUBSCRIPTION_STATE_ACTIVE": true, "SUBSCRIPTION_STATE_IN_GRACE_PERIOD": true, "SUBSCRIPTION_STATE_CANCELED": true,
		"SUBSCRIPTION_STATE_ON_HOLD": false, "SUBSCRIPTION_STATE_PAUSED": false, "SUBSCRIPTION_STATE_EXPIRED": false,
		"SUBSCRIPTION_STATE_PENDING": false, "": false,
	} {
		active, product, expires, ok := parse(state).Entitlement(pro)
		if active != want || !ok || product != "pro.yearly" || expires == nil || !expires.Equal(late) {
			t.Errorf("%s: active %v product %q expires %v ok %v; want active %v, pro.yearly until %v", state, active, product, expires, ok, want, late)
		}
	}
	if active, _, _, ok := parse("SUBSCRIPTION_STATE_ACTIVE").Entitlement([]string{"other"}); active || ok {
		t.Errorf("a purchase of no listed product: active %v ok %v", active, ok)
	}
}
