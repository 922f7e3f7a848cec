package server

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/heraldhq/herald/delivery"
	"github.com/heraldhq/herald/signature"
)

// swVerify checks a received callback with the Standard Webhooks reference
// library, as a receiver would.
func swVerify(t *testing.T, h cbHit, secret string) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("NewWebhook(%q): %v", secret, err)
	}
	return wh.Verify(h.Body, h.Header)
}

// TestCallbackStandardWebhooks: every attempt carries webhook-id,
// webhook-timestamp and webhook-signature that the reference library
// verifies with the channel's secret; the id is the same on a retry; the
// attempt after a rotation verifies with the new secret only; and
// X-Service-Signature is still there.
func TestCallbackStandardWebhooks(t *testing.T) {
	e := cbEnv(t)
	f := cbSetup(e, "cb-standard@example.com")
	rotated := make(chan struct{})
	rc := cbNewReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.WriteHeader(503) // one retry, same secret
			return
		}
		if n == 2 { // hold until the secret has changed, then fail
			cbHold(r, rotated)
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(200)
	})
	cbStartQueue(t, e.st, cbQueueConfig(), delivery.Options{})

	id := f.send(rc.URL)
	f.tap(id, "approve")
	rc.waitHits(t, 2, 5*time.Second)
	old := f.secret
	fresh := e.do(200, "POST", "/v1/channels/"+f.chID+"/secret/rotate", nil, f.token).Str("webhook_secret")
	close(rotated)
	f.waitState(id, "delivered", 5*time.Second)
	hits := rc.Hits()
	if len(hits) != 3 {
		t.Fatalf("%d requests, want 3", len(hits))
	}
	wantID := hits[0].Header.Get("X-Service-Delivery")
	for i, h := range hits {
		if got := h.Header.Get("webhook-id"); got != wantID || !cbDeliveryIDRe.MatchString(got) {
			t.Errorf("attempt %d: webhook-id %q, want the delivery id %q on every attempt", i+1, got, wantID)
		}
		if got, want := h.Header.Get("webhook-timestamp"), h.Header.Get(signature.Header); !strings.HasPrefix(want, "t="+got+",") {
			t.Errorf("attempt %d: webhook-timestamp %q, X-Service-Signature %q: want one time", i+1, got, want)
		}
		if !strings.HasPrefix(h.Header.Get("webhook-signature"), "v1,") {
			t.Errorf("attempt %d: webhook-signature %q", i+1, h.Header.Get("webhook-signature"))
		}
	}
	for i, c := range []struct {
		hit    cbHit
		secret string
		valid  bool
	}{
		{hits[0], old, true}, {hits[1], old, true}, {hits[2], fresh, true},
		{hits[2], old, false}, {hits[0], fresh, false},
	} {
		err := swVerify(t, c.hit, c.secret)
		if c.valid && err != nil {
			t.Errorf("case %d: reference library refuses a real callback: %v", i, err)
		}
		if !c.valid && err == nil {
			t.Errorf("case %d: callback verifies with the wrong secret", i)
		}
		if c.valid {
			if err := cbVerify(c.hit, c.secret); err != nil {
				t.Errorf("case %d: X-Service-Signature: %v", i, err)
			}
		}
	}
	// A tampered body fails too.
	h := hits[2]
	h.Body = []byte(strings.Replace(string(h.Body), "approve", "reject", 1))
	if err := swVerify(t, h, fresh); err == nil {
		t.Error("tampered body verifies")
	}
}

// swSecret has the shape of a Herald secret: whsec_ and 32 letters and
// digits, which is valid base64.
const swSecret = "whsec_Q7fG2kLm9XpR4tVw8ZbN3cHd6JsY1aEu"

// TestVerifyStandardExamples runs each published Standard Webhooks example
// against signatures made by the reference library: valid exits 0 and
// prints "valid"; a tampered body, another secret, another id and a stale
// timestamp exit non-zero. It also checks the docs describe the scheme.
func TestVerifyStandardExamples(t *testing.T) {
	e := newTestEnv(t)
	std, _ := vfDocs(e).Body["standard_webhooks"].(map[string]any)
	if std == nil || !strings.Contains(fmt.Sprint(std["signed_payload"]), "<webhook-id>.<webhook-timestamp>.<raw_body>") ||
		!strings.Contains(fmt.Sprint(std["key"]), "base64") {
		t.Fatalf("docs: standard_webhooks = %v", std)
	}
	ex, _ := std["examples"].(map[string]any)
	cbWantKeys(t, "standard_webhooks.examples", ex, "go", "python", "node", "shell")
	wh, err := standardwebhooks.NewWebhook(swSecret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	sign := func(id string, at time.Time, body string) string {
		s, err := wh.Sign(id, at, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := []struct {
		name, body, id, secret string
		at                     time.Time
		sig                    string
		valid                  bool
	}{
		{"valid", vfBody, "dlv_1", swSecret, now, sign("dlv_1", now, vfBody), true},
		{"valid among several", vfBody, "dlv_1", swSecret, now, "v1,AAAA " + sign("dlv_1", now, vfBody), true},
		{"tampered body", strings.Replace(vfBody, "approve", "reject", 1), "dlv_1", swSecret, now, sign("dlv_1", now, vfBody), false},
		{"other id", vfBody, "dlv_2", swSecret, now, sign("dlv_1", now, vfBody), false},
		{"other secret", vfBody, "dlv_1", "whsec_" + strings.Repeat("A", 32), now, sign("dlv_1", now, vfBody), false},
		{"stale timestamp", vfBody, "dlv_1", swSecret, now.Add(-10 * time.Minute), sign("dlv_1", now.Add(-10*time.Minute), vfBody), false},
	}
	vfEach(t, ex, func(t *testing.T, dir, bin string, args []string) {
		for _, c := range cases {
			t.Setenv("WEBHOOK_ID", c.id)
			t.Setenv("WEBHOOK_TIMESTAMP", strconv.FormatInt(c.at.Unix(), 10))
			t.Setenv("WEBHOOK_SIGNATURE", c.sig)
			out, exit := vfRun(t, dir, c.body, c.secret, "", bin, args...)
			if c.valid && (exit != 0 || strings.TrimSpace(out) != "valid") {
				t.Errorf("%s: exit %d, output %q; want 0 and \"valid\"", c.name, exit, out)
			}
			if !c.valid && exit == 0 {
				t.Errorf("%s: exit 0 (output %q), want non-zero", c.name, out)
			}
		}
	})
}
