package appstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

const (
	playScope       = "https://www.googleapis.com/auth/androidpublisher"
	playEndpoint    = "https://androidpublisher.googleapis.com"
	googleIssuer    = "https://accounts.google.com"
	googleJWKS      = "https://www.googleapis.com/oauth2/v3/certs"
	maxPlayResponse = 1 << 20
)

// ErrPurchaseNotFound is the Play API's answer for a token it does not know
// (404, 410) or does not accept (400 "Invalid Value", as for forged tokens).
var ErrPurchaseNotFound = errors.New("subscription: purchase token not found")

// ErrBadNotification is a push whose token is good but whose message is
// not a Play notification.
var ErrBadNotification = errors.New("subscription: not a Play notification")

// Play reads subscriptions of one app from the Google Play Developer API
// (purchases.subscriptionsv2) with a service account.
type Play struct {
	client *http.Client
	base   string // .../applications/{package}/purchases/subscriptionsv2/tokens/
}

// NewPlay reads the service-account JSON credentialsFile. endpoint replaces
// the API's base URL when set (tests). base carries the calls, under the
// OAuth2 transport and to the token endpoint; it must have a timeout.
func NewPlay(packageName, credentialsFile, endpoint string, base *http.Client) (*Play, error) {
	sa, err := os.ReadFile(credentialsFile)
	if err != nil {
		return nil, fmt.Errorf("subscription: google credentials: %w", err)
	}
	jwtCfg, err := google.JWTConfigFromJSON(sa, playScope)
	if err != nil {
		return nil, fmt.Errorf("subscription: google credentials %s: %w", credentialsFile, err)
	}
	if base == nil {
		base = &http.Client{Timeout: 15 * time.Second}
	}
	client := jwtCfg.Client(context.WithValue(context.Background(), oauth2.HTTPClient, base))
	client.Timeout = base.Timeout
	if endpoint == "" {
		endpoint = playEndpoint
	}
	return &Play{
		client: client,
		base: strings.TrimRight(endpoint, "/") + "/androidpublisher/v3/applications/" +
			url.PathEscape(packageName) + "/purchases/subscriptionsv2/tokens/",
	}, nil
}

// PlaySubscription is the part of a SubscriptionPurchaseV2 Herald uses.
type PlaySubscription struct {
	State     string `json:"subscriptionState"`
	LineItems []struct {
		ProductID  string    `json:"productId"`
		ExpiryTime time.Time `json:"expiryTime"`
	} `json:"lineItems"`
}

// entitled lists the states in which the buyer keeps what they paid for:
// a cancelled subscription runs to the end of its period, and a grace
// period is paid-for time while a payment is retried.
var entitled = []string{"SUBSCRIPTION_STATE_ACTIVE", "SUBSCRIPTION_STATE_IN_GRACE_PERIOD", "SUBSCRIPTION_STATE_CANCELED"}

// Entitlement says whether the purchase pays for one of products now, for
// which product, and until when (the latest expiry among its line items for
// those products). ok is false when no line item is one of products.
func (p *PlaySubscription) Entitlement(products []string) (active bool, product string, expires *time.Time, ok bool) {
	for _, li := range p.LineItems {
		if !slices.Contains(products, li.ProductID) {
			continue
		}
		t := li.ExpiryTime.UTC()
		if !ok || (!li.ExpiryTime.IsZero() && (expires == nil || t.After(*expires))) {
			product = li.ProductID
			if !li.ExpiryTime.IsZero() {
				expires = &t
			}
		}
		ok = true
	}
	return ok && slices.Contains(entitled, p.State), product, expires, ok
}

// Subscription fetches what Google says of a purchase token now.
func (p *Play) Subscription(ctx context.Context, token string) (*PlaySubscription, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+url.PathEscape(token), nil)
	if err != nil {
		return nil, err
	}
	res, err := p.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("subscription: play api: %w", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxPlayResponse))
	if err != nil {
		return nil, fmt.Errorf("subscription: play api: %w", err)
	}
	switch {
	case res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusGone || res.StatusCode == http.StatusBadRequest:
		return nil, ErrPurchaseNotFound
	case res.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("subscription: play api: status %d", res.StatusCode)
	}
	var sub PlaySubscription
	if err := json.Unmarshal(body, &sub); err != nil {
		return nil, fmt.Errorf("subscription: play api: %w", err)
	}
	return &sub, nil
}

// PubSub verifies the OIDC tokens Google Pub/Sub puts on push deliveries
// (Authorization: Bearer), and decodes Play's Real-time Developer
// Notifications from them.
type PubSub struct {
	verifier    *oidc.IDTokenVerifier
	email       string
	packageName string
}

// NewPubSub verifies tokens for audience, signed by Google, and, when email
// is set, naming that service account (verified) as their email: the
// audience is a public URL, so anyone's service account can get a token
// for it. issuer and jwksURL replace Google's when set (tests); client
// fetches the keys.
func NewPubSub(audience, email, packageName, issuer, jwksURL string, client *http.Client) *PubSub {
	if issuer == "" {
		issuer, jwksURL = googleIssuer, googleJWKS
	}
	ctx := oidc.ClientContext(context.Background(), client)
	keys := oidc.NewRemoteKeySet(ctx, jwksURL)
	return &PubSub{verifier: oidc.NewVerifier(issuer, keys, &oidc.Config{ClientID: audience}), email: email, packageName: packageName}
}

// PlayNotification is a Real-time Developer Notification about a
// subscription. A test notification has an empty PurchaseToken.
type PlayNotification struct {
	Type          int
	PurchaseToken string
	ProductID     string
}

// Verify checks the push's bearer token (ErrInvalid) and decodes its
// message (ErrBadNotification). A notification for another app comes back
// empty, as a test notification does: nothing to do.
func (ps *PubSub) Verify(ctx context.Context, authorization string, body []byte) (*PlayNotification, error) {
	raw, ok := strings.CutPrefix(authorization, "Bearer ")
	if !ok {
		return nil, fmt.Errorf("%w: no bearer token", ErrInvalid)
	}
	tok, err := ps.verifier.Verify(ctx, strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if ps.email != "" {
		var who struct {
			Email    string `json:"email"`
			Verified bool   `json:"email_verified"`
		}
		if err := tok.Claims(&who); err != nil || who.Email != ps.email || !who.Verified {
			return nil, fmt.Errorf("%w: the token is not from %s", ErrInvalid, ps.email)
		}
	}
	var push struct {
		Message struct {
			Data []byte `json:"data"` // base64 in JSON
		} `json:"message"`
	}
	if err := json.Unmarshal(body, &push); err != nil {
		return nil, fmt.Errorf("%w: push body: %v", ErrBadNotification, err)
	}
	var rtdn struct {
		PackageName              string `json:"packageName"`
		SubscriptionNotification *struct {
			NotificationType int    `json:"notificationType"`
			PurchaseToken    string `json:"purchaseToken"`
			SubscriptionID   string `json:"subscriptionId"`
		} `json:"subscriptionNotification"`
	}
	if err := json.Unmarshal(push.Message.Data, &rtdn); err != nil {
		return nil, fmt.Errorf("%w: notification: %v", ErrBadNotification, err)
	}
	n := &PlayNotification{}
	if rtdn.PackageName != ps.packageName {
		return n, nil // another app's: not ours to act on, and no use redelivering
	}
	if sn := rtdn.SubscriptionNotification; sn != nil {
		n.Type, n.PurchaseToken, n.ProductID = sn.NotificationType, sn.PurchaseToken, sn.SubscriptionID
	}
	return n, nil
}
