// Package appletest signs App Store payloads the way Apple does, with a
// certificate chain of its own (root, intermediate, leaf, the intermediate
// and leaf carrying Apple's marker extensions), for tests of code that
// verifies them. Only tests import it.
package appletest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Chain is a test root with an App Store-like intermediate and leaf.
type Chain struct {
	t        testing.TB
	Root     *x509.Certificate
	inter    *x509.Certificate
	leaf     *x509.Certificate
	leafKey  *ecdsa.PrivateKey
	RootFile string // the root as a PEM file, for root_ca_file
}

var (
	oidLeaf         = asn1.ObjectIdentifier{1, 2, 840, 113635, 100, 6, 11, 1}
	oidIntermediate = asn1.ObjectIdentifier{1, 2, 840, 113635, 100, 6, 2, 1}
)

// Options change the chain; the zero value is a good chain.
type Options struct {
	NoMarkers bool      // leave Apple's marker extensions out
	NotAfter  time.Time // the leaf's end; default in ten years
}

// NewChain makes a chain and writes its root to a file in t.TempDir().
func NewChain(t testing.TB, opts Options) *Chain {
	t.Helper()
	c := &Chain{t: t}
	now := time.Now()
	rootKey := newKey(t)
	c.Root = c.cert(&x509.Certificate{
		Subject: pkix.Name{CommonName: "Test Root CA - G3"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(20 * 365 * 24 * time.Hour),
	}, nil, rootKey, rootKey)
	interKey := newKey(t)
	inter := &x509.Certificate{
		Subject: pkix.Name{CommonName: "Test Worldwide Developer Relations"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(10 * 365 * 24 * time.Hour),
	}
	leafNotAfter := opts.NotAfter
	if leafNotAfter.IsZero() {
		leafNotAfter = now.Add(10 * 365 * 24 * time.Hour)
	}
	leaf := &x509.Certificate{
		Subject:   pkix.Name{CommonName: "Test Prod ECC Mac App Store and iTunes Store Receipt Signing"},
		KeyUsage:  x509.KeyUsageDigitalSignature,
		NotBefore: now.Add(-time.Hour), NotAfter: leafNotAfter,
	}
	if !opts.NoMarkers {
		inter.ExtraExtensions = []pkix.Extension{{Id: oidIntermediate, Value: []byte{5, 0}}}
		leaf.ExtraExtensions = []pkix.Extension{{Id: oidLeaf, Value: []byte{5, 0}}}
	}
	c.inter = c.cert(inter, c.Root, interKey, rootKey)
	c.leafKey = newKey(t)
	c.leaf = c.cert(leaf, c.inter, c.leafKey, interKey)

	c.RootFile = filepath.Join(t.TempDir(), "root.pem")
	if err := os.WriteFile(c.RootFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Root.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func (c *Chain) cert(tmpl, parent *x509.Certificate, key, parentKey *ecdsa.PrivateKey) *x509.Certificate {
	c.t.Helper()
	sn, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		c.t.Fatal(err)
	}
	tmpl.SerialNumber = sn
	if parent == nil {
		parent = tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		c.t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		c.t.Fatal(err)
	}
	return cert
}

// Sign encodes payload as JSON and signs it as a compact JWS (ES256) whose
// x5c header holds leaf, intermediate and root, as Apple's do.
func (c *Chain) Sign(payload any) string {
	c.t.Helper()
	return c.SignWith(payload, c.leafKey)
}

// SignWith signs with another key while keeping the chain in x5c: a
// signature the leaf certificate does not vouch for.
func (c *Chain) SignWith(payload any, key *ecdsa.PrivateKey) string {
	c.t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		c.t.Fatal(err)
	}
	opts := (&jose.SignerOptions{}).WithHeader("x5c", []string{
		encodeCert(c.leaf), encodeCert(c.inter), encodeCert(c.Root)})
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, opts)
	if err != nil {
		c.t.Fatal(err)
	}
	jws, err := signer.Sign(body)
	if err != nil {
		c.t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

// NewKey is a key the chain does not know.
func NewKey(t testing.TB) *ecdsa.PrivateKey { return newKey(t) }

func encodeCert(c *x509.Certificate) string {
	return base64Std(c.Raw)
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
