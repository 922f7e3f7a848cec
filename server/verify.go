package server

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/signature"
)

//go:embed verifyexamples/verify.go verifyexamples/verify.py verifyexamples/verify.js verifyexamples/verify.sh
//go:embed verifyexamples/standard/verify.go verifyexamples/standard/verify.py verifyexamples/standard/verify.js verifyexamples/standard/verify.sh
var examples embed.FS

func example(name string) string {
	b, err := examples.ReadFile("verifyexamples/" + name)
	if err != nil {
		panic("server: missing embedded example " + name)
	}
	return string(b)
}

// verifyDocs is the body of GET /v1/verify/docs.
var verifyDocs = map[string]any{
	"algorithm":         signature.Algorithm,
	"header_name":       signature.Header,
	"format":            "t=<unix_seconds>,v1=<hex_hmac_sha256>",
	"tolerance_seconds": int(signature.Tolerance.Seconds()),
	"signed_payload":    "<t>.<raw_body>",
	"steps": []string{
		"Read the X-Service-Signature header and split it on commas into t=<unix seconds> and v1=<hex signature>.",
		"Reject the request if |now - t| is more than 300 seconds.",
		"Build the string <t>.<raw body>, using the raw request body exactly as received (do not re-serialise the JSON).",
		"Compute HMAC-SHA256 of that string with the channel's webhook secret (the whole whsec_... text) as the key, hex-encoded.",
		"Compare it with v1 using a constant-time comparison; accept only on a match.",
		"Deduplicate on message_id + event: a delivery can arrive more than once.",
	},
	"examples": map[string]string{
		"go":     example("verify.go"),
		"python": example("verify.py"),
		"node":   example("verify.js"),
		"shell":  example("verify.sh"),
	},
	"standard_webhooks": standardDocs,
}

// standardDocs describes the Standard Webhooks headers every callback also
// carries, for receivers that use one of that convention's libraries.
var standardDocs = map[string]any{
	"headers":           []string{signature.HeaderID, signature.HeaderTimestamp, signature.HeaderSignature},
	"format":            "webhook-signature: v1,<base64 hmac_sha256> (several, space-separated, during a rotation)",
	"signed_payload":    "<webhook-id>.<webhook-timestamp>.<raw_body>",
	"key":               "the bytes the channel secret encodes in base64 after its whsec_ prefix (not its text)",
	"tolerance_seconds": int(signature.Tolerance.Seconds()),
	"steps": []string{
		"Read webhook-id, webhook-timestamp (unix seconds) and webhook-signature.",
		"Reject the request if |now - webhook-timestamp| is more than 300 seconds.",
		"Decode the channel secret's text after whsec_ from base64: those bytes are the key.",
		"Compute HMAC-SHA256 of <webhook-id>.<webhook-timestamp>.<raw body> with that key, base64-encoded.",
		"Compare it, in constant time, with each space-separated v1,<base64> of webhook-signature; accept on a match.",
		"Deduplicate on webhook-id: it is the same on every retry of one delivery.",
	},
	"examples": map[string]string{
		"go":     example("standard/verify.go"),
		"python": example("standard/verify.py"),
		"node":   example("standard/verify.js"),
		"shell":  example("standard/verify.sh"),
	},
}

// docsStyle is the docs page's only style sheet, allowed by its hash:
// the page runs no script and loads nothing.
const docsStyle = `body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem}pre{background:#f4f4f4;padding:1rem;overflow:auto}`

var docsCSP = func() string {
	sum := sha256.Sum256([]byte(docsStyle))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; frame-ancestors 'none'"
}()

var docsPage = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Herald callback signatures</title>
<style>` + docsStyle + `</style>
</head><body>
<h1>Verifying Herald callback signatures</h1>
<p>Every callback carries <code>{{.header_name}}: {{.format}}</code>. The signature is {{.algorithm}} over <code>{{.signed_payload}}</code>, keyed with the channel's webhook secret. Tolerance: {{.tolerance_seconds}} seconds.</p>
<ol>{{range .steps}}<li>{{.}}</li>{{end}}</ol>
{{range $lang, $code := .examples}}<h2>{{$lang}}</h2><pre><code>{{$code}}</code></pre>{{end}}
{{with .standard_webhooks}}<h1>Standard Webhooks</h1>
<p>Every callback also carries {{range $i, $h := .headers}}{{if $i}}, {{end}}<code>{{$h}}</code>{{end}}: <code>{{.format}}</code>, HMAC-SHA256 over <code>{{.signed_payload}}</code>. The key is {{.key}}. Tolerance: {{.tolerance_seconds}} seconds.</p>
<ol>{{range .steps}}<li>{{.}}</li>{{end}}</ol>
{{range $lang, $code := .examples}}<h2>{{$lang}}</h2><pre><code>{{$code}}</code></pre>{{end}}{{end}}
</body></html>
`))

// prefersHTML reports whether the Accept header ranks text/html above JSON:
// by q-value, then by order. Wildcards count for neither, so curl's */* gets
// JSON and a browser's text/html,...,*/*;q=0.8 gets the page.
func prefersHTML(r *http.Request) bool {
	html, js := -1.0, -1.0 // q-values; -1 when not listed
	htmlAt, jsAt := -1, -1
	for i, part := range strings.Split(r.Header.Get("Accept"), ",") {
		typ, params, _ := strings.Cut(part, ";")
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
		}
		switch strings.ToLower(strings.TrimSpace(typ)) {
		case "text/html":
			if htmlAt < 0 {
				html, htmlAt = q, i
			}
		case "application/json":
			if jsAt < 0 {
				js, jsAt = q, i
			}
		}
	}
	return html > 0 && (html > js || html == js && htmlAt < jsAt)
}

func (s *Server) handleVerifyDocs(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if prefersHTML(r) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", docsCSP)
		w.Header().Set("Cache-Control", "no-cache")
		return docsPage.Execute(w, verifyDocs)
	}
	writeJSON(w, http.StatusOK, verifyDocs)
	return nil
}

type verifyRequest struct {
	Payload   *string `json:"payload"`
	Secret    *string `json:"secret"`
	Signature *string `json:"signature"`
}

// check reports the first missing field: payload, signature (when wanted)
// and a non-empty secret.
func (req *verifyRequest) check(wantSignature bool) error {
	switch {
	case req.Payload == nil:
		return errInvalidPayload("payload is required (a string)")
	case wantSignature && req.Signature == nil:
		return errInvalidPayload("signature is required (a string)")
	case req.Secret == nil:
		return errInvalidPayload("secret is required (a string)")
	case *req.Secret == "":
		return errInvalidPayload("secret must not be empty")
	}
	return nil
}

// handleVerifyGenerate signs a payload as the delivery queue would, now.
func (s *Server) handleVerifyGenerate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var req verifyRequest
	if err := decodeJSONWithNUL(r, &req); err != nil {
		return err
	}
	if req.Signature != nil {
		return errInvalidPayload("unknown field \"signature\"; generate takes payload and secret")
	}
	if err := req.check(false); err != nil {
		return err
	}
	now := s.now()
	writeJSON(w, http.StatusOK, map[string]any{
		"signature": signature.Sign(*req.Secret, now, []byte(*req.Payload)),
		"timestamp": now.Unix(),
	})
	return nil
}

// handleVerifySignature checks a signature: 200 {valid:true} or
// 200 {valid:false, reason}.
func (s *Server) handleVerifySignature(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var req verifyRequest
	if err := decodeJSONWithNUL(r, &req); err != nil {
		return err
	}
	if err := req.check(true); err != nil {
		return err
	}
	err := signature.Verify(*req.Secret, *req.Signature, []byte(*req.Payload), s.now(), signature.Tolerance)
	var reason string
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, map[string]bool{"valid": true})
		return nil
	case errors.Is(err, signature.ErrFormat):
		reason = "bad format: want t=<unix_seconds>,v1=<hex>"
	case errors.Is(err, signature.ErrTimestamp):
		reason = "timestamp is more than 300 seconds from now"
	default:
		reason = "signature does not match the payload and secret"
	}
	writeJSON(w, http.StatusOK, map[string]any{"valid": false, "reason": reason})
	return nil
}
