package signature

import (
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
