// Package signature signs and verifies Herald's callback signatures:
// X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">,
// keyed with the channel's webhook secret (its whole text). The delivery
// queue, the public verify endpoints and the tests all use this one pair.
package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Header is the name of the signature header.
const Header = "X-Service-Signature"

// Algorithm names the MAC.
const Algorithm = "HMAC-SHA256"

// Tolerance is how far a signature's timestamp may be from now.
const Tolerance = 300 * time.Second

// Verification failures.
var (
	ErrFormat    = errors.New("signature: bad format, want t=<unix seconds>,v1=<hex>")
	ErrTimestamp = errors.New("signature: timestamp outside the tolerance")
	ErrMismatch  = errors.New("signature: does not match")
)

// Compute returns the hex HMAC-SHA256 of "<t>.<body>".
func Compute(secret string, t int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(t, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// Sign returns the header value for body signed at t.
func Sign(secret string, t time.Time, body []byte) string {
	ts := t.Unix()
	return fmt.Sprintf("t=%d,v1=%s", ts, Compute(secret, ts, body))
}

// Parse splits a header value into its timestamp and v1 signatures (a
// header may carry several v1 values while a secret is being rotated).
func Parse(header string) (int64, [][]byte, error) {
	var t int64 = -1
	var sigs [][]byte
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return 0, nil, ErrFormat
		}
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return 0, nil, ErrFormat
			}
			t = n
		case "v1":
			b, err := hex.DecodeString(v)
			if err != nil || len(b) != sha256.Size {
				return 0, nil, ErrFormat
			}
			sigs = append(sigs, b)
		}
	}
	if t < 0 || len(sigs) == 0 {
		return 0, nil, ErrFormat
	}
	return t, sigs, nil
}

// Verify checks a header value against body and secret at now: format, the
// timestamp within tolerance, and a constant-time comparison of the MAC.
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	t, sigs, err := Parse(header)
	if err != nil {
		return err
	}
	if d := now.Sub(time.Unix(t, 0)); d > tolerance || d < -tolerance {
		return ErrTimestamp
	}
	want, _ := hex.DecodeString(Compute(secret, t, body))
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return nil
		}
	}
	return ErrMismatch
}
