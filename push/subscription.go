package push

import (
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// authSecretLen is the length of a subscription's auth secret (RFC 8291).
const authSecretLen = 16

// SubscriptionError is a browser's PushSubscription that cannot be pushed
// to: Field names what is wrong (endpoint, keys.p256dh, keys.auth).
type SubscriptionError struct {
	Field  string
	Reason string
}

func (e *SubscriptionError) Error() string { return e.Field + " " + e.Reason }

// subscription is the PushSubscription JSON a browser hands the app.
type subscription struct {
	Endpoint string `json:"endpoint"`
	Keys     struct {
		P256dh string `json:"p256dh"`
		Auth   string `json:"auth"`
	} `json:"keys"`
}

// CheckSubscription checks a PushSubscription JSON as a device registers
// it: an https endpoint, and keys a message can be encrypted to. The error
// is a *SubscriptionError, or says the text is not such JSON.
func CheckSubscription(token string) error {
	sub, err := parseSubscription(token)
	if err != nil {
		return err
	}
	u, err := url.Parse(sub.Endpoint)
	switch {
	case err != nil || u.Scheme != "https" || u.Host == "" || u.Opaque != "":
		return &SubscriptionError{Field: "endpoint", Reason: "must be an absolute https URL"}
	case u.User != nil:
		return &SubscriptionError{Field: "endpoint", Reason: "must not carry a user name or password"}
	}
	return checkKeys(sub)
}

func parseSubscription(token string) (*subscription, error) {
	var sub subscription
	if err := json.Unmarshal([]byte(token), &sub); err != nil {
		return nil, fmt.Errorf("not a PushSubscription JSON object: %w", err)
	}
	return &sub, nil
}

// checkKeys checks that a message can be encrypted to sub (RFC 8291):
// p256dh is an uncompressed P-256 point on the curve, auth 16 bytes.
func checkKeys(sub *subscription) error {
	p256dh, err := decodeKey("keys.p256dh", sub.Keys.P256dh)
	if err != nil {
		return err
	}
	// NewPublicKey takes only the 65-byte uncompressed form, and refuses a
	// point off the curve.
	if _, err := ecdh.P256().NewPublicKey(p256dh); err != nil {
		return &SubscriptionError{Field: "keys.p256dh",
			Reason: "must be an uncompressed P-256 public key (65 bytes starting 0x04) on the curve"}
	}
	auth, err := decodeKey("keys.auth", sub.Keys.Auth)
	if err != nil {
		return err
	}
	if len(auth) != authSecretLen {
		return &SubscriptionError{Field: "keys.auth",
			Reason: fmt.Sprintf("must be %d bytes, not %d", authSecretLen, len(auth))}
	}
	return nil
}

// decodeKey decodes the key field, base64url with or without its padding,
// as browsers write a subscription's keys.
func decodeKey(field, s string) ([]byte, error) {
	if s == "" {
		return nil, &SubscriptionError{Field: field, Reason: "is required"}
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, &SubscriptionError{Field: field, Reason: "must be base64url"}
	}
	return b, nil
}
