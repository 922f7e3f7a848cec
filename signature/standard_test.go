package signature

import (
	"errors"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// TestStandardSignature checks the signer against the reference library's
// test vector, and the verifier against the reference library's signatures.
func TestStandardSignature(t *testing.T) {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"test": 2432232314}`)
	sig, err := SignStandard(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), body)
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; sig != want {
		t.Fatalf("SignStandard = %q, want the reference vector %q", sig, want)
	}

	now := time.Now()
	ts := strconv.FormatInt(now.Unix(), 10)
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := wh.Sign("msg_1", now, body)
	for _, c := range []struct {
		name, secret, id, ts, sig string
		body                      []byte
		want                      error
	}{
		{"valid", secret, "msg_1", ts, ref, body, nil},
		{"valid among several", secret, "msg_1", ts, "v1,AAAA " + ref, body, nil},
		{"other id", secret, "msg_2", ts, ref, body, ErrMismatch},
		{"other body", secret, "msg_1", ts, ref, []byte(`{}`), ErrMismatch},
		{"other secret", "whsec_" + "abcdefghijklmnopqrstuvwxyzABCDEF", "msg_1", ts, ref, body, ErrMismatch},
		{"stale", secret, "msg_1", strconv.FormatInt(now.Add(-10*time.Minute).Unix(), 10), ref, body, ErrTimestamp},
		{"no id", secret, "", ts, ref, body, ErrStandardFormat},
		{"bad time", secret, "msg_1", "soon", ref, body, ErrStandardFormat},
		{"not base64 secret", "whsec_!!", "msg_1", ts, ref, body, ErrKey},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := VerifyStandard(c.secret, c.id, c.ts, c.sig, c.body, now, Tolerance); !errors.Is(err, c.want) {
				t.Fatalf("VerifyStandard = %v, want %v", err, c.want)
			}
		})
	}
}

// TestStandardKeyOfHeraldSecrets: a Herald secret ("whsec_" and 32 letters
// and digits) decodes to 24 bytes, and the reference library reads it the
// same way.
func TestStandardKeyOfHeraldSecrets(t *testing.T) {
	secret := "whsec_Q7fG2kLm9XpR4tVw8ZbN3cHd6JsY1aEu"
	key, err := StandardKey(secret)
	if err != nil || len(key) != 24 {
		t.Fatalf("StandardKey = %d bytes, %v; want 24", len(key), err)
	}
	now := time.Now()
	sig, err := SignStandard(secret, "dlv_x", now, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	wh, _ := standardwebhooks.NewWebhook(secret)
	h := map[string][]string{"Webhook-Id": {"dlv_x"}, "Webhook-Timestamp": {strconv.FormatInt(now.Unix(), 10)}, "Webhook-Signature": {sig}}
	if err := wh.Verify([]byte("{}"), h); err != nil {
		t.Fatalf("reference library refuses: %v", err)
	}
}

// BenchmarkSignCallback compares what an attempt costs to sign with
// X-Service-Signature alone and with the Standard Webhooks headers too.
func BenchmarkSignCallback(b *testing.B) {
	secret := "whsec_Q7fG2kLm9XpR4tVw8ZbN3cHd6JsY1aEu"
	body := make([]byte, 1024)
	now := time.Now()
	b.Run("service", func(b *testing.B) {
		for b.Loop() {
			_ = Sign(secret, now, body)
		}
	})
	b.Run("service+standard", func(b *testing.B) {
		for b.Loop() {
			_ = Sign(secret, now, body)
			if _, err := SignStandard(secret, "dlv_0123456789abcdefghij", now, body); err != nil {
				b.Fatal(err)
			}
		}
	})
}
