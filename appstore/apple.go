// Package appstore verifies app-store purchases: App Store signed
// transactions and notifications (JWS with an x5c chain to Apple's root) and
// Google Play subscriptions (the Play Developer API, and the Pub/Sub push
// tokens of its notifications). It knows nothing of the store.
package appstore

import (
	"crypto/x509"
	"crypto/x509/pkix"
	_ "embed"
	"encoding/asn1"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// ErrInvalid wraps every reason a signed payload is refused.
var ErrInvalid = errors.New("invalid signed payload")

// appleRootG3 is Apple Root CA - G3, from https://www.apple.com/certificateauthority/
// (SHA-256 63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79).
//
//go:embed apple_root_ca_g3.pem
var appleRootG3 []byte

// Marker extensions Apple puts in the certificates that sign App Store
// payloads: the leaf and the intermediate (Apple Worldwide Developer
// Relations). A chain to Apple's root without them is some other Apple
// certificate, not the App Store's.
var (
	oidAppStoreLeaf         = asn1.ObjectIdentifier{1, 2, 840, 113635, 100, 6, 11, 1}
	oidAppStoreIntermediate = asn1.ObjectIdentifier{1, 2, 840, 113635, 100, 6, 2, 1}
)

// Apple verifies App Store Server API payloads for one app.
type Apple struct {
	roots    *x509.CertPool
	bundleID string
	now      func() time.Time
}

// NewApple verifies payloads for bundleID against the root certificates in
// the PEM file rootCAFile, or Apple Root CA - G3 when it is empty.
func NewApple(bundleID, rootCAFile string, now func() time.Time) (*Apple, error) {
	pem := appleRootG3
	if rootCAFile != "" {
		var err error
		if pem, err = os.ReadFile(rootCAFile); err != nil {
			return nil, fmt.Errorf("subscription: apple root: %w", err)
		}
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, errors.New("subscription: apple root: no certificate in the PEM data")
	}
	if now == nil {
		now = time.Now
	}
	return &Apple{roots: roots, bundleID: bundleID, now: now}, nil
}

// Transaction is the part of an App Store JWSTransaction Herald uses.
type Transaction struct {
	TransactionID         string `json:"transactionId"`
	OriginalTransactionID string `json:"originalTransactionId"`
	BundleID              string `json:"bundleId"`
	ProductID             string `json:"productId"`
	ExpiresDate           int64  `json:"expiresDate"`    // unix ms; 0 when absent
	RevocationDate        int64  `json:"revocationDate"` // unix ms; set when refunded or revoked
	Environment           string `json:"environment"`    // Production, Sandbox
}

// Expires is the end of the paid period, nil when the payload has none.
func (t *Transaction) Expires() *time.Time {
	if t.ExpiresDate == 0 {
		return nil
	}
	e := time.UnixMilli(t.ExpiresDate).UTC()
	return &e
}

// Notification is an App Store Server Notification V2, with its signed
// transaction verified and decoded.
type Notification struct {
	Type        string       `json:"notificationType"`
	Subtype     string       `json:"subtype"`
	UUID        string       `json:"notificationUUID"`
	Transaction *Transaction `json:"-"`
	Data        struct {
		BundleID              string `json:"bundleId"`
		Environment           string `json:"environment"`
		SignedTransactionInfo string `json:"signedTransactionInfo"`
	} `json:"data"`
}

// VerifyTransaction checks a signedTransactionInfo (a JWS from the app or a
// notification): its chain to the root, its signature and its bundle id.
func (a *Apple) VerifyTransaction(signed string) (*Transaction, error) {
	var t Transaction
	if err := a.verify(signed, &t); err != nil {
		return nil, err
	}
	if t.BundleID != a.bundleID {
		return nil, fmt.Errorf("%w: transaction for bundle %q, not %q", ErrInvalid, t.BundleID, a.bundleID)
	}
	if t.OriginalTransactionID == "" || t.ProductID == "" {
		return nil, fmt.Errorf("%w: transaction without originalTransactionId or productId", ErrInvalid)
	}
	return &t, nil
}

// VerifyNotification checks a notification's signedPayload and the
// transaction inside it. A notification without a transaction (TEST, for
// one) has a nil Transaction.
func (a *Apple) VerifyNotification(signedPayload string) (*Notification, error) {
	var n Notification
	if err := a.verify(signedPayload, &n); err != nil {
		return nil, err
	}
	if n.Data.BundleID != a.bundleID {
		return nil, fmt.Errorf("%w: notification for bundle %q, not %q", ErrInvalid, n.Data.BundleID, a.bundleID)
	}
	if n.Data.SignedTransactionInfo != "" {
		t, err := a.VerifyTransaction(n.Data.SignedTransactionInfo)
		if err != nil {
			return nil, err
		}
		n.Transaction = t
	}
	return &n, nil
}

// verify checks a compact JWS signed by ES256 with an x5c chain to a.roots
// carrying Apple's marker extensions, and decodes its payload into dst.
func (a *Apple) verify(compact string, dst any) error {
	jws, err := jose.ParseSignedCompact(compact, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if len(jws.Signatures) != 1 {
		return fmt.Errorf("%w: %d signatures, want 1", ErrInvalid, len(jws.Signatures))
	}
	chains, err := jws.Signatures[0].Protected.Certificates(x509.VerifyOptions{
		Roots:       a.roots,
		CurrentTime: a.now(),
		KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
	})
	if err != nil {
		return fmt.Errorf("%w: certificate chain: %v", ErrInvalid, err)
	}
	chain := chains[0]
	if len(chain) != 3 || !hasExtension(chain[0], oidAppStoreLeaf) || !hasExtension(chain[1], oidAppStoreIntermediate) {
		return fmt.Errorf("%w: the chain is not the App Store's (leaf, Apple WWDR intermediate, root)", ErrInvalid)
	}
	payload, err := jws.Verify(chain[0].PublicKey)
	if err != nil {
		return fmt.Errorf("%w: signature: %v", ErrInvalid, err)
	}
	if err := json.Unmarshal(payload, dst); err != nil {
		return fmt.Errorf("%w: payload: %v", ErrInvalid, err)
	}
	return nil
}

func hasExtension(c *x509.Certificate, oid asn1.ObjectIdentifier) bool {
	return slices.ContainsFunc(c.Extensions, func(e pkix.Extension) bool { return e.Id.Equal(oid) })
}
