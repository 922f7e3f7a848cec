package signature

import (
	"encoding/hex"
	"errors"
	"testing"
	"time"
)

func TestSignVerify(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{"event":"response.received"}`)
	h := Sign("whsec_abc", now, body)
	// A known value, computed independently with:
	// printf '%s' '1700000000.{"event":"response.received"}' | openssl dgst -sha256 -hmac whsec_abc
	if want := "t=1700000000,v1=2a14121e171df228c47562b9935b216d29535d9bab7cfff4d2aa66d0403cba81"; h != want {
		t.Fatalf("Sign = %s, want %s", h, want)
	}
	cases := []struct {
		name   string
		secret string
		header string
		body   []byte
		now    time.Time
		want   error
	}{
		{"valid", "whsec_abc", h, body, now, nil},
		{"valid at the edge of tolerance", "whsec_abc", h, body, now.Add(300 * time.Second), nil},
		{"valid at the future edge of tolerance", "whsec_abc", h, body, now.Add(-300 * time.Second), nil},
		{"too old", "whsec_abc", h, body, now.Add(301 * time.Second), ErrTimestamp},
		{"from the future", "whsec_abc", h, body, now.Add(-301 * time.Second), ErrTimestamp},
		{"other secret", "whsec_xyz", h, body, now, ErrMismatch},
		{"body changed", "whsec_abc", h, []byte(`{"event":"x"}`), now, ErrMismatch},
		{"no t", "whsec_abc", "v1=" + Compute("whsec_abc", 1, body), body, now, ErrFormat},
		{"no v1", "whsec_abc", "t=1700000000", body, now, ErrFormat},
		{"not hex", "whsec_abc", "t=1700000000,v1=zz", body, now, ErrFormat},
		{"garbage", "whsec_abc", "hello", body, now, ErrFormat},
		{"empty", "whsec_abc", "", body, now, ErrFormat},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := Verify(c.secret, c.header, c.body, c.now, Tolerance); !errors.Is(err, c.want) {
				t.Fatalf("Verify = %v, want %v", err, c.want)
			}
		})
	}
}

// TestVerifyDuringRotation: while a secret is rotated the header carries one
// v1 value per secret, and a receiver holding either secret accepts it,
// whichever place its value has.
func TestVerifyDuringRotation(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{"event":"response.received"}`)
	oldSig, newSig := Compute("whsec_old", now.Unix(), body), Compute("whsec_new", now.Unix(), body)
	header := "t=1700000000,v1=" + oldSig + ",v1=" + newSig
	for _, secret := range []string{"whsec_old", "whsec_new"} {
		if err := Verify(secret, header, body, now, Tolerance); err != nil {
			t.Errorf("Verify with %s = %v, want nil", secret, err)
		}
	}
	if err := Verify("whsec_other", header, body, now, Tolerance); !errors.Is(err, ErrMismatch) {
		t.Errorf("Verify with a third secret = %v, want ErrMismatch", err)
	}
	ts, sigs, err := Parse(header)
	if err != nil || ts != 1_700_000_000 || len(sigs) != 2 {
		t.Fatalf("Parse = %d, %d signatures, %v; want 1700000000, 2, nil", ts, len(sigs), err)
	}
	if got := hex.EncodeToString(sigs[0]); got != oldSig {
		t.Errorf("first signature %s, want %s", got, oldSig)
	}
	if got := hex.EncodeToString(sigs[1]); got != newSig {
		t.Errorf("second signature %s, want %s", got, newSig)
	}
}

// TestParse covers the header's syntax: unknown keys are skipped, spaces
// around parts are allowed, and a negative or short value is refused.
func TestParse(t *testing.T) {
	sig := Compute("s", 5, nil)
	cases := []struct {
		header string
		t      int64
		n      int
		err    error
	}{
		{"t=5,v1=" + sig, 5, 1, nil},
		{" t=5 , v1=" + sig + " ", 5, 1, nil},
		{"t=5,v0=abc,v1=" + sig, 5, 1, nil},
		{"t=0,v1=" + sig, 0, 1, nil},
		{"t=-1,v1=" + sig, 0, 0, ErrFormat},
		{"t=x,v1=" + sig, 0, 0, ErrFormat},
		{"t=5,v1=" + sig[:62], 0, 0, ErrFormat},
		{"t=5,v1=" + sig + "00", 0, 0, ErrFormat},
		{"t=5,v1", 0, 0, ErrFormat},
	}
	for _, c := range cases {
		ts, sigs, err := Parse(c.header)
		if ts != c.t || len(sigs) != c.n || !errors.Is(err, c.err) {
			t.Errorf("Parse(%q) = %d, %d signatures, %v; want %d, %d, %v", c.header, ts, len(sigs), err, c.t, c.n, c.err)
		}
	}
}
