package signature

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

// FuzzParse feeds Parse arbitrary headers and signs fuzzed bodies. Parse
// must fail with ErrFormat or keep the last timestamp and every v1 value, in
// order; a header from Sign must parse back and verify, also beside the
// signature of a rotated-out secret.
func FuzzParse(f *testing.F) {
	body := []byte(`{"event":"response.received"}`)
	f.Add("t=1700000000,v1=2a14121e171df228c47562b9935b216d29535d9bab7cfff4d2aa66d0403cba81", "whsec_abc", int64(1_700_000_000), body)
	f.Add("t=1700000000, v1="+Compute("old", 1_700_000_000, body)+", v1="+Compute("new", 1_700_000_000, body), "new", int64(1_700_000_000), body)
	f.Add("t=1,v0=abc,v1="+strings.Repeat("00", 32), "", int64(0), []byte{})
	f.Add("t=-1,v1=", "s", int64(-1), []byte("\x00\xff"))
	f.Add("v1=zz,t=9223372036854775807", "s", int64(9223372036854775807), []byte("x"))
	f.Add("", "s", int64(1), []byte(nil))
	f.Fuzz(func(t *testing.T, header, secret string, ts int64, body []byte) {
		checkParse(t, header)

		if ts < 0 {
			ts = -(ts + 1) // timestamps are never before 1970
		}
		at := time.Unix(ts, 0)
		h := Sign(secret, at, body)
		gotT, sigs, err := Parse(h)
		if err != nil || gotT != ts || len(sigs) != 1 || hex.EncodeToString(sigs[0]) != Compute(secret, ts, body) {
			t.Fatalf("Parse(Sign(...)) = %d, %x, %v; want %d and one signature", gotT, sigs, err, ts)
		}
		if err := Verify(secret, h, body, at, Tolerance); err != nil {
			t.Fatalf("Verify(Sign(...)) = %v", err)
		}
		if err := Verify(secret+"x", h, body, at, Tolerance); !errors.Is(err, ErrMismatch) {
			t.Fatalf("Verify with another secret = %v, want ErrMismatch", err)
		}
		rotated := Sign("retired"+secret, at, body) + ",v1=" + Compute(secret, ts, body)
		if err := Verify(secret, rotated, body, at, Tolerance); err != nil {
			t.Fatalf("Verify(%q) = %v; the second v1 value was not tried", rotated, err)
		}
	})
}

// checkParse checks Parse(header) against the format, read independently.
func checkParse(t *testing.T, header string) {
	t.Helper()
	ts, sigs, err := Parse(header)
	if err != nil {
		if !errors.Is(err, ErrFormat) || ts != 0 || sigs != nil {
			t.Fatalf("Parse(%q) = %d, %x, %v; want 0, nil, ErrFormat", header, ts, sigs, err)
		}
		return
	}
	if ts < 0 || len(sigs) == 0 {
		t.Fatalf("Parse(%q) = %d, %d signatures", header, ts, len(sigs))
	}
	var want [][]byte
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		if k == "v1" {
			b, err := hex.DecodeString(v)
			if err != nil || len(b) != 32 {
				t.Fatalf("Parse(%q) accepted v1=%q", header, v)
			}
			want = append(want, b)
		}
	}
	if len(want) != len(sigs) {
		t.Fatalf("Parse(%q) kept %d v1 values of %d", header, len(sigs), len(want))
	}
	for i := range want {
		if !bytes.Equal(sigs[i], want[i]) {
			t.Fatalf("Parse(%q): signature %d is %x, want %x", header, i, sigs[i], want[i])
		}
	}
}
