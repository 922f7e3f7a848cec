package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/heraldhq/herald/appstore"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/store"
)

// Subscriptions are the configured app stores; a nil field is a store that
// is not configured, whose endpoints answer 404.
type Subscriptions struct {
	Apple     *appstore.Apple
	ApplePro  []string // product ids that pay for the pro plan
	Play      *appstore.Play
	PubSub    *appstore.PubSub // nil: the Google webhook is off
	GooglePro []string
}

// NewSubscriptions builds the stores cfg configures: Apple when bundle_id is
// set, Google when package_name is. client makes the outbound calls (Play
// API, its token endpoint, Google's keys); it must have a timeout.
func NewSubscriptions(cfg config.Subscriptions, client *http.Client, now func() time.Time) (*Subscriptions, error) {
	subs := &Subscriptions{ApplePro: cfg.Apple.ProProductIDs, GooglePro: cfg.Google.ProProductIDs}
	if cfg.Apple.BundleID != "" {
		a, err := appstore.NewApple(cfg.Apple.BundleID, cfg.Apple.RootCAFile, now)
		if err != nil {
			return nil, err
		}
		subs.Apple = a
	}
	if g := cfg.Google; g.PackageName != "" {
		p, err := appstore.NewPlay(g.PackageName, g.CredentialsFile, g.Endpoint, client)
		if err != nil {
			return nil, err
		}
		subs.Play = p
		if g.PubsubAudience != "" {
			subs.PubSub = appstore.NewPubSub(g.PubsubAudience, g.PubsubEmail, g.PackageName, "", "", client)
		}
	}
	return subs, nil
}

// The app stores Herald takes subscriptions from, as purchases name them
// (store.Subscription.Store) and as the API's {store} segment does.
const (
	StoreApple  = "apple"
	StoreGoogle = "google"
)

// Purchases are the rules of in-app purchases over the configured app
// stores: which products pay for the pro plan, what a verified purchase or
// a store's notification of a renewal, expiry or refund says of it, and
// the plan it gives its user.
type Purchases struct {
	svc    *Service
	stores *Subscriptions
}

// Purchases returns the purchase rules over stores; nil stores: none is
// configured, and every purchase is refused.
func (s *Service) Purchases(stores *Subscriptions) *Purchases {
	if stores == nil {
		stores = &Subscriptions{}
	}
	return &Purchases{svc: s, stores: stores}
}

// PlanStatus is a user's plan, what pays for it, and its limits.
type PlanStatus struct {
	Plan   string
	Limits config.Plan
	// Subscription is the purchase that pays, or last paid, for the
	// plan; nil when the user never had one. Active tells whether it
	// pays now.
	Subscription *store.Subscription
	Active       bool
}

// PlanStatus returns userID's plan and what pays for it.
func (s *Service) PlanStatus(ctx context.Context, userID string) (PlanStatus, error) {
	u, err := s.st.UserByID(ctx, userID)
	if err != nil {
		return PlanStatus{}, err
	}
	out := PlanStatus{Plan: u.Plan, Limits: s.Limits(u.Plan)}
	sub, err := s.st.UserSubscription(ctx, userID)
	if errors.Is(err, store.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return PlanStatus{}, err
	}
	out.Subscription, out.Active = sub, sub.Active(s.now())
	return out, nil
}

// errNotPro: the purchase is for no product that pays for pro.
var errNotPro = errors.New("service: the purchase is for no product in pro_product_ids")

// VerifyApple checks signedTransaction, the JWS StoreKit 2 returned for a
// purchase, and links the purchase to who, whose plan it then sets.
func (p *Purchases) VerifyApple(ctx context.Context, who *store.User, signedTransaction string) (PlanStatus, error) {
	if p.stores.Apple == nil {
		return PlanStatus{}, notConfigured(StoreApple)
	}
	if signedTransaction == "" {
		return PlanStatus{}, invalid("signed_transaction is required: the JWS StoreKit returned for the purchase")
	}
	t, err := p.stores.Apple.VerifyTransaction(signedTransaction)
	if err != nil {
		return PlanStatus{}, invalid("signed_transaction: %v", err)
	}
	if !slices.Contains(p.stores.ApplePro, t.ProductID) {
		return PlanStatus{}, invalid("product %q is not a Herald subscription", t.ProductID)
	}
	return p.link(ctx, who, appleSubscription(t, ""))
}

// VerifyGoogle asks Google Play about purchaseToken, a purchase of
// productID, and links the purchase to who, whose plan it then sets.
func (p *Purchases) VerifyGoogle(ctx context.Context, who *store.User, purchaseToken, productID string) (PlanStatus, error) {
	if p.stores.Play == nil {
		return PlanStatus{}, notConfigured(StoreGoogle)
	}
	if purchaseToken == "" || productID == "" {
		return PlanStatus{}, invalid("purchase_token and product_id are required")
	}
	if !slices.Contains(p.stores.GooglePro, productID) {
		return PlanStatus{}, invalid("product %q is not a Herald subscription", productID)
	}
	sub, err := p.play(ctx, purchaseToken, []string{productID})
	switch {
	case errors.Is(err, appstore.ErrPurchaseNotFound):
		return PlanStatus{}, invalid("Google Play does not know this purchase_token")
	case errors.Is(err, errNotPro):
		return PlanStatus{}, invalid("this purchase_token is not for product %q", productID)
	case err != nil:
		return PlanStatus{}, err
	}
	return p.link(ctx, who, sub)
}

// link gives sub to who and sets their plan by it. A purchase another
// account has linked stays theirs.
func (p *Purchases) link(ctx context.Context, who *store.User, sub *store.Subscription) (PlanStatus, error) {
	sub.UserID = who.ID
	if err := p.save(ctx, sub); errors.Is(err, store.ErrPurchaseTaken) {
		return PlanStatus{}, conflict("purchase_taken", "this purchase is already linked to another account")
	} else if err != nil {
		return PlanStatus{}, err
	}
	return p.svc.PlanStatus(ctx, who.ID)
}

// save stores sub and sets its user's plan: pro while a subscription of
// theirs pays, else the default plan.
func (p *Purchases) save(ctx context.Context, sub *store.Subscription) error {
	return p.svc.st.SaveSubscription(ctx, sub, config.PlanPro, p.svc.opts.DefaultPlan)
}

func notConfigured(name string) error {
	return notFound("subscriptions through %s are not configured on this server", name)
}

// appleSubscription is what a verified transaction says; a refund or a
// revocation ends it, as does a notification of one (notificationType).
func appleSubscription(t *appstore.Transaction, notificationType string) *store.Subscription {
	status := store.SubscriptionActive
	if t.RevocationDate != 0 || slices.Contains([]string{"EXPIRED", "REFUND", "REVOKE", "GRACE_PERIOD_EXPIRED"}, notificationType) {
		status = store.SubscriptionExpired
	}
	return &store.Subscription{Store: StoreApple, OriginalID: t.OriginalTransactionID, ProductID: t.ProductID,
		Status: status, ExpiresAt: t.Expires()}
}

// play asks Google what purchase token pays for now among products.
func (p *Purchases) play(ctx context.Context, token string, products []string) (*store.Subscription, error) {
	ps, err := p.stores.Play.Subscription(ctx, token)
	if errors.Is(err, appstore.ErrPurchaseNotFound) {
		return nil, err
	}
	if err != nil {
		p.svc.log.WarnContext(ctx, "google play api", "err", err)
		return nil, unavailable("provider_unavailable", "Google Play could not be asked; try again later")
	}
	return playSubscription(token, ps, products)
}

// playSubscription is what Google says of purchase token: active while
// its state entitles it, until the latest end among products. A purchase
// for none of them is errNotPro.
func playSubscription(token string, ps *appstore.PlaySubscription, products []string) (*store.Subscription, error) {
	active, product, expires, ok := ps.Entitlement(products)
	if !ok {
		return nil, errNotPro
	}
	status := store.SubscriptionExpired
	if active {
		status = store.SubscriptionActive
	}
	return &store.Subscription{Store: StoreGoogle, OriginalID: token, ProductID: product, Status: status, ExpiresAt: expires}, nil
}

// AppleNotification applies an App Store notification, already verified
// (appstore.Apple.VerifyNotification), to the purchase it is about:
// renewals, expiries and refunds. handled is false when no user has
// verified that purchase, or the notification has no transaction (TEST).
func (p *Purchases) AppleNotification(ctx context.Context, n *appstore.Notification) (handled bool, err error) {
	if n.Transaction == nil {
		return false, nil
	}
	return p.updateKnown(ctx, StoreApple, n.Transaction.OriginalTransactionID, func(*store.Subscription) (*store.Subscription, error) {
		sub := appleSubscription(n.Transaction, n.Type)
		if !slices.Contains(p.stores.ApplePro, sub.ProductID) {
			sub.Status = store.SubscriptionExpired // moved to a product that does not pay for pro
		}
		return sub, nil
	})
}

// GoogleNotification applies a Google Play notification, already verified
// (appstore.PubSub.Verify), to the purchase it is about, as Google Play
// now tells it. handled is false when no user has verified that purchase,
// or the notification names none (a test, or another app's).
func (p *Purchases) GoogleNotification(ctx context.Context, n *appstore.PlayNotification) (handled bool, err error) {
	if n.PurchaseToken == "" {
		return false, nil
	}
	if p.stores.Play == nil {
		return false, notConfigured(StoreGoogle)
	}
	return p.updateKnown(ctx, StoreGoogle, n.PurchaseToken, func(old *store.Subscription) (*store.Subscription, error) {
		sub, err := p.play(ctx, n.PurchaseToken, p.stores.GooglePro)
		if errors.Is(err, appstore.ErrPurchaseNotFound) || errors.Is(err, errNotPro) {
			old.Status = store.SubscriptionExpired // nothing that pays for pro any more
			return old, nil
		}
		return sub, err
	})
}

// updateKnown refreshes a subscription a user has verified before, with
// what fresh says of it now. false: no user has this purchase.
func (p *Purchases) updateKnown(ctx context.Context, storeName, originalID string, fresh func(old *store.Subscription) (*store.Subscription, error)) (bool, error) {
	old, err := p.svc.st.Subscription(ctx, storeName, originalID)
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
	if err := p.save(ctx, sub); err != nil {
		return false, fmt.Errorf("service: store notification: %w", err)
	}
	return true, nil
}
