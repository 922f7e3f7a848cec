package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers (https://www.standardwebhooks.com), sent on
// every callback beside Header. Their key is not the secret's text but the
// bytes it encodes: the base64 (standard alphabet) after the "whsec_"
// prefix, as every Standard Webhooks library reads a "whsec_..." secret. A
// Herald secret is "whsec_" and 32 letters and digits, which is valid base64
// for 24 bytes, so one secret serves both schemes.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix starts every channel secret.
const SecretPrefix = "whsec_"

// Standard Webhooks failures beside ErrTimestamp and ErrMismatch.
var (
	ErrKey            = errors.New("signature: the secret after whsec_ is not base64")
	ErrStandardFormat = errors.New("signature: want webhook-id, webhook-timestamp (unix seconds) and webhook-signature (v1,<base64>)")
)

// StandardKey returns the Standard Webhooks key of a secret: the bytes its
// text after the "whsec_" prefix encodes in base64.
func StandardKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(key) == 0 {
		return nil, ErrKey
	}
	return key, nil
}

// computeStandard is the HMAC-SHA256 of "<id>.<t>.<body>" under key.
func computeStandard(key []byte, id string, t int64, body []byte) []byte {
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, t)
	mac.Write(body)
	return mac.Sum(nil)
}

// SignStandard returns the webhook-signature value ("v1,<base64>") of a
// message id, sent at t, with body, under secret.
func SignStandard(secret, id string, t time.Time, body []byte) (string, error) {
	key, err := StandardKey(secret)
	if err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(computeStandard(key, id, t.Unix(), body)), nil
}

// VerifyStandard checks Standard Webhooks headers against body and secret
// at now: the timestamp within tolerance, then any of the space-separated
// "v1,<base64>" signatures, compared in constant time.
func VerifyStandard(secret, id, timestamp, signatures string, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := StandardKey(secret)
	if err != nil {
		return err
	}
	if id == "" || timestamp == "" || signatures == "" {
		return ErrStandardFormat
	}
	t, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || t < 0 {
		return ErrStandardFormat
	}
	if d := now.Sub(time.Unix(t, 0)); d > tolerance || d < -tolerance {
		return ErrTimestamp
	}
	want := computeStandard(key, id, t, body)
	for _, s := range strings.Fields(signatures) {
		v, sig, ok := strings.Cut(s, ",")
		if !ok || v != "v1" {
			continue
		}
		if got, err := base64.StdEncoding.DecodeString(sig); err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrMismatch
}
