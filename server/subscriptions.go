package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/appstore"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// The app stores Herald takes subscriptions from.
const (
	storeApple  = "apple"
	storeGoogle = "google"
)

// subscriptionView is GET /v1/subscriptions: the user's plan, what pays
// for it, and its limits.
func (s *Server) subscriptionView(ctx context.Context, userID string) (map[string]any, error) {
	u, err := s.st.UserByID(ctx, userID)
	if err != nil {
		return nil, err
	}
	// The rate limits this server applies, and the caps its rules do.
	rates, caps := s.cfg.Plans.Limits(u.Plan), s.svc.Limits(u.Plan)
	view := map[string]any{
		"plan": u.Plan, "status": "none", "store": nil, "product_id": nil, "expires_at": nil,
		"limits": map[string]int{"send_per_minute": rates.SendPerMinute, "api_per_minute": rates.APIPerMinute,
			"max_channels": caps.MaxChannels, "max_devices": caps.MaxDevices, "max_folders": caps.MaxFolders,
			"max_pins": caps.MaxPins, "max_streams": rates.MaxStreams, "max_api_keys": service.MaxActiveKeys},
	}
	sub, err := s.st.UserSubscription(ctx, userID)
	if errors.Is(err, store.ErrNotFound) {
		return view, nil
	}
	if err != nil {
		return nil, err
	}
	view["status"] = store.SubscriptionExpired
	if sub.Active(s.now()) {
		view["status"] = store.SubscriptionActive
	}
	view["store"], view["product_id"] = sub.Store, sub.ProductID
	if sub.ExpiresAt != nil {
		view["expires_at"] = tsPtr(sub.ExpiresAt)
	}
	return view, nil
}

// handleSubscription is GET /v1/subscriptions.
func (s *Server) handleSubscription(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	view, err := s.subscriptionView(r.Context(), who.user.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view)
	return nil
}

// knownStore checks the {store} segment: unknown or not configured is 404.
func (s *Server) knownStore(name string) error {
	configured := s.subs != nil && ((name == storeApple && s.subs.Apple != nil) || (name == storeGoogle && s.subs.Play != nil))
	switch {
	case name != storeApple && name != storeGoogle:
		return errNotFound("unknown store %q; Herald takes %q and %q", name, storeApple, storeGoogle)
	case !configured:
		return errNotFound("subscriptions through %s are not configured on this server", name)
	}
	return nil
}

// handleVerifyPurchase is POST /v1/subscriptions/{store}/verify: the app
// hands over a purchase; Herald checks it with the store and sets the plan.
func (s *Server) handleVerifyPurchase(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	name := p.ByName("store")
	if err := s.knownStore(name); err != nil {
		return err
	}
	var sub *store.Subscription
	var err error
	if name == storeApple {
		sub, err = s.verifyApple(r)
	} else {
		sub, err = s.verifyGoogle(r)
	}
	if err != nil {
		return err
	}
	sub.UserID = who.user.ID
	if err := s.saveSubscription(r.Context(), sub); errors.Is(err, store.ErrPurchaseTaken) {
		return newError(http.StatusConflict, "purchase_taken", "this purchase is already linked to another account")
	} else if err != nil {
		return err
	}
	view, err := s.subscriptionView(r.Context(), who.user.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view)
	return nil
}

func (s *Server) saveSubscription(ctx context.Context, sub *store.Subscription) error {
	return s.st.SaveSubscription(ctx, sub, config.PlanPro, s.cfg.DefaultPlan)
}

// verifyApple checks {"signed_transaction"} from StoreKit 2.
func (s *Server) verifyApple(r *http.Request) (*store.Subscription, error) {
	var body struct {
		SignedTransaction *string `json:"signed_transaction"`
	}
	if err := decodeJSON(r, &body); err != nil {
		return nil, err
	}
	if body.SignedTransaction == nil || *body.SignedTransaction == "" {
		return nil, errInvalidPayload("signed_transaction is required: the JWS StoreKit returned for the purchase")
	}
	t, err := s.subs.Apple.VerifyTransaction(*body.SignedTransaction)
	if err != nil {
		return nil, errInvalidPayload("signed_transaction: %v", err)
	}
	if !slices.Contains(s.subs.ApplePro, t.ProductID) {
		return nil, errInvalidPayload("product %q is not a Herald subscription", t.ProductID)
	}
	return appleSubscription(t, ""), nil
}

// appleSubscription is what a verified transaction says; a refund or a
// revocation ends it, as does a notification of one (notificationType).
func appleSubscription(t *appstore.Transaction, notificationType string) *store.Subscription {
	status := store.SubscriptionActive
	if t.RevocationDate != 0 || slices.Contains([]string{"EXPIRED", "REFUND", "REVOKE", "GRACE_PERIOD_EXPIRED"}, notificationType) {
		status = store.SubscriptionExpired
	}
	return &store.Subscription{Store: storeApple, OriginalID: t.OriginalTransactionID, ProductID: t.ProductID,
		Status: status, ExpiresAt: t.Expires()}
}

// verifyGoogle checks {"purchase_token", "product_id"} with the Play API.
func (s *Server) verifyGoogle(r *http.Request) (*store.Subscription, error) {
	var body struct {
		PurchaseToken *string `json:"purchase_token"`
		ProductID     *string `json:"product_id"`
	}
	if err := decodeJSON(r, &body); err != nil {
		return nil, err
	}
	if body.PurchaseToken == nil || *body.PurchaseToken == "" || body.ProductID == nil || *body.ProductID == "" {
		return nil, errInvalidPayload("purchase_token and product_id are required")
	}
	if !slices.Contains(s.subs.GooglePro, *body.ProductID) {
		return nil, errInvalidPayload("product %q is not a Herald subscription", *body.ProductID)
	}
	sub, err := s.playSubscription(r.Context(), *body.PurchaseToken, []string{*body.ProductID})
	switch {
	case errors.Is(err, appstore.ErrPurchaseNotFound):
		return nil, errInvalidPayload("Google Play does not know this purchase_token")
	case errors.Is(err, errNotPro):
		return nil, errInvalidPayload("this purchase_token is not for product %q", *body.ProductID)
	}
	return sub, err
}

// playSubscription asks Google what a purchase token pays for now among
// products. A purchase for none of them is errNotPro.
func (s *Server) playSubscription(ctx context.Context, token string, products []string) (*store.Subscription, error) {
	ps, err := s.subs.Play.Subscription(ctx, token)
	if errors.Is(err, appstore.ErrPurchaseNotFound) {
		return nil, err
	}
	if err != nil {
		s.log.WarnContext(ctx, "google play api", "err", err)
		return nil, newError(http.StatusServiceUnavailable, "provider_unavailable", "Google Play could not be asked; try again later")
	}
	active, product, expires, ok := ps.Entitlement(products)
	if !ok {
		return nil, errNotPro
	}
	status := store.SubscriptionExpired
	if active {
		status = store.SubscriptionActive
	}
	return &store.Subscription{Store: storeGoogle, OriginalID: token, ProductID: product, Status: status, ExpiresAt: expires}, nil
}

// errNotPro: the purchase is for no product that pays for pro.
var errNotPro = errInvalidPayload("this purchase is for no product in pro_product_ids")

// handleStoreWebhook is POST /v1/subscriptions/{store}/webhook: renewals,
// expiries and refunds pushed by the store. Notifications about purchases
// no user has verified are acknowledged and ignored.
func (s *Server) handleStoreWebhook(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	name := p.ByName("store")
	if err := s.knownStore(name); err != nil {
		return err
	}
	var handled bool
	var err error
	if name == storeApple {
		handled, err = s.appleNotification(r)
	} else {
		handled, err = s.googleNotification(r)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true, "ignored": !handled})
	return nil
}

func (s *Server) appleNotification(r *http.Request) (bool, error) {
	// Not decodeJSON: what Apple adds to its body later must not break this.
	raw, err := readBody(r)
	if err != nil {
		return false, jsonError(err)
	}
	var body struct {
		SignedPayload *string `json:"signedPayload"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return false, jsonError(err)
	}
	if body.SignedPayload == nil {
		return false, errInvalidPayload("signedPayload is required")
	}
	n, err := s.subs.Apple.VerifyNotification(*body.SignedPayload)
	if err != nil {
		return false, errInvalidToken("signedPayload: %v", err)
	}
	if n.Transaction == nil {
		return false, nil // TEST and other notifications without a transaction
	}
	return s.updateKnown(r.Context(), storeApple, n.Transaction.OriginalTransactionID, func(*store.Subscription) (*store.Subscription, error) {
		sub := appleSubscription(n.Transaction, n.Type)
		if !slices.Contains(s.subs.ApplePro, sub.ProductID) {
			sub.Status = store.SubscriptionExpired // moved to a product that does not pay for pro
		}
		return sub, nil
	})
}

func (s *Server) googleNotification(r *http.Request) (bool, error) {
	if s.subs.PubSub == nil {
		return false, errNotFound("the Google webhook needs subscriptions.google.pubsub_audience")
	}
	body, err := readBody(r)
	if err != nil {
		return false, jsonError(err)
	}
	n, err := s.subs.PubSub.Verify(r.Context(), r.Header.Get("Authorization"), body)
	if errors.Is(err, appstore.ErrBadNotification) {
		return false, errInvalidPayload("%v", err)
	}
	if err != nil {
		return false, errInvalidToken("%v", err)
	}
	if n.PurchaseToken == "" {
		return false, nil // a test notification, or another app's
	}
	return s.updateKnown(r.Context(), storeGoogle, n.PurchaseToken, func(old *store.Subscription) (*store.Subscription, error) {
		sub, err := s.playSubscription(r.Context(), n.PurchaseToken, s.subs.GooglePro)
		if errors.Is(err, appstore.ErrPurchaseNotFound) || errors.Is(err, errNotPro) {
			old.Status = store.SubscriptionExpired // nothing that pays for pro any more
			return old, nil
		}
		return sub, err
	})
}

// updateKnown refreshes a subscription a user has verified before, with
// what fresh says of it now. false: no user has this purchase.
func (s *Server) updateKnown(ctx context.Context, storeName, originalID string, fresh func(old *store.Subscription) (*store.Subscription, error)) (bool, error) {
	old, err := s.st.Subscription(ctx, storeName, originalID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	sub, err := fresh(old)
	if err != nil {
		return false, err
	}
	sub.UserID = old.UserID
	if err := s.saveSubscription(ctx, sub); err != nil {
		return false, fmt.Errorf("store notification: %w", err)
	}
	return true, nil
}
