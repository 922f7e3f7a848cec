package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/appstore"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// renderPlan is GET /v1/subscriptions: the user's plan, what pays for it,
// and its limits.
func renderPlan(ps service.PlanStatus) map[string]any {
	lim := ps.Limits
	view := map[string]any{
		"plan": ps.Plan, "status": "none", "store": nil, "product_id": nil, "expires_at": nil,
		"limits": map[string]int{"send_per_minute": lim.SendPerMinute, "api_per_minute": lim.APIPerMinute,
			"max_channels": lim.MaxChannels, "max_devices": lim.MaxDevices, "max_folders": lim.MaxFolders,
			"max_pins": lim.MaxPins, "max_streams": lim.MaxStreams, "max_api_keys": service.MaxActiveKeys},
	}
	sub := ps.Subscription
	if sub == nil {
		return view
	}
	view["status"] = store.SubscriptionExpired
	if ps.Active {
		view["status"] = store.SubscriptionActive
	}
	view["store"], view["product_id"] = sub.Store, sub.ProductID
	if sub.ExpiresAt != nil {
		view["expires_at"] = tsPtr(sub.ExpiresAt)
	}
	return view
}

// handleSubscription is GET /v1/subscriptions.
func (s *Server) handleSubscription(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	ps, err := s.svc.PlanStatus(r.Context(), who.user.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderPlan(ps))
	return nil
}

// knownStore checks the {store} segment: unknown or not configured is 404.
func (s *Server) knownStore(name string) error {
	configured := s.subs != nil && ((name == service.StoreApple && s.subs.Apple != nil) ||
		(name == service.StoreGoogle && s.subs.Play != nil))
	switch {
	case name != service.StoreApple && name != service.StoreGoogle:
		return errNotFound("unknown store %q; Herald takes %q and %q", name, service.StoreApple, service.StoreGoogle)
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
	var ps service.PlanStatus
	var err error
	if name == service.StoreApple {
		ps, err = s.verifyApple(r, who)
	} else {
		ps, err = s.verifyGoogle(r, who)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderPlan(ps))
	return nil
}

// verifyApple reads {"signed_transaction"} from StoreKit 2.
func (s *Server) verifyApple(r *http.Request, who *principal) (service.PlanStatus, error) {
	var body struct {
		SignedTransaction string `json:"signed_transaction"`
	}
	if err := decodeJSON(r, &body); err != nil {
		return service.PlanStatus{}, err
	}
	return s.purchases.VerifyApple(r.Context(), who.user, body.SignedTransaction)
}

// verifyGoogle reads {"purchase_token", "product_id"}.
func (s *Server) verifyGoogle(r *http.Request, who *principal) (service.PlanStatus, error) {
	var body struct {
		PurchaseToken string `json:"purchase_token"`
		ProductID     string `json:"product_id"`
	}
	if err := decodeJSON(r, &body); err != nil {
		return service.PlanStatus{}, err
	}
	return s.purchases.VerifyGoogle(r.Context(), who.user, body.PurchaseToken, body.ProductID)
}

// handleStoreWebhook is POST /v1/subscriptions/{store}/webhook: renewals,
// expiries and refunds pushed by the store. Herald checks that the store
// sent it; the rules apply it. Notifications about purchases no user has
// verified are acknowledged and ignored.
func (s *Server) handleStoreWebhook(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	name := p.ByName("store")
	if err := s.knownStore(name); err != nil {
		return err
	}
	var handled bool
	var err error
	if name == service.StoreApple {
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
	return s.purchases.AppleNotification(r.Context(), n)
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
	return s.purchases.GoogleNotification(r.Context(), n)
}
