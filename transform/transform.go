// Package transform turns webhooks from GitHub, Vercel, Netlify,
// Alertmanager, Grafana, Uptime Kuma, Gitea/Forgejo and GitLab into Herald
// messages: a readable title, a Markdown body, a priority and a link to the
// relevant page. It also checks each platform's signature or token.
//
// In the code these are webhook sources (a channel's source, the
// /v1/webhook/{source}/{token} route, source_secret); the user's guide
// calls the same thing integrations (docs/integrations.md).
package transform

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// Message is what a webhook becomes. A nil *Message means the event makes
// no notification (GitHub's ping, say).
type Message struct {
	Title    string
	Body     string
	Priority string // normal, or high for failures
	URL      string // the page to open: an absolute http(s) URL, or empty
	URLLabel string
}

// ErrUnknownSource is returned for a platform Herald does not know.
var ErrUnknownSource = errors.New("transform: unknown source")

// ErrBadSignature is returned when a request's credential is missing where
// it is required, or does not match.
var ErrBadSignature = errors.New("transform: signature does not match")

// ErrNoSignature is returned when a channel's source secret requires a
// platform's signature header and the request has none. It is also an
// ErrBadSignature.
var ErrNoSignature = fmt.Errorf("%w: the signature header is missing", ErrBadSignature)

// Headers is the part of a request a transformer reads.
type Headers interface{ Get(string) string }

// Secrets are the channel's secrets a webhook is checked with.
type Secrets struct {
	// Source is the channel's source secret. When set, every request must
	// carry the source's credential made with it: a GitHub, Vercel or
	// Netlify signature, an Authorization header, a Gitea or GitLab
	// header. When empty, the token in the URL is the only credential.
	Source string
	// Callback is the channel's callback-signing secret. Only on a channel
	// without a source secret, a GitHub, Vercel or Netlify signature header
	// that a request carries anyway is checked against it, as before
	// source secrets existed; a platform is never told to use it.
	Callback string
}

// Source is one platform.
type Source struct {
	// SignatureHeader names the platform's own signature header (GitHub,
	// Vercel, Netlify); verify checks it against a secret.
	SignatureHeader string
	verify          func(secret, header string, body []byte) bool
	build           func(h Headers, body []byte) (*Message, error)

	// Credential names what carries the source secret, for error messages.
	Credential string
	// check checks the credential of the sources without a signature
	// header of their own.
	check func(secret string, h Headers, body []byte) bool
}

// Sources are the supported platforms by their {source} path segment.
var Sources = map[string]Source{
	"github": {SignatureHeader: "X-Hub-Signature-256", verify: verifyGitHub, build: github,
		Credential: "X-Hub-Signature-256 header (sha256=<hex HMAC-SHA256 of the body, keyed with the source_secret>)"},
	"vercel": {SignatureHeader: "x-vercel-signature", verify: verifyVercel, build: vercel,
		Credential: "x-vercel-signature header (hex HMAC-SHA1 of the body, keyed with the source_secret)"},
	"netlify": {SignatureHeader: "X-Webhook-Signature", verify: verifyNetlify, build: netlify,
		Credential: "X-Webhook-Signature header (a JWS signed with the source_secret as its JWS secret token)"},

	"alertmanager": {build: alertmanager, Credential: authCredential, check: checkAuthorization},
	"grafana":      {build: grafana, Credential: authCredential, check: checkAuthorization},
	"uptimekuma":   {build: uptimeKuma, Credential: authCredential, check: checkAuthorization},
	"gitea":        {build: gitea, Credential: "X-Gitea-Signature header", check: checkGiteaSignature},
	"forgejo":      {build: gitea, Credential: "X-Forgejo-Signature header", check: checkGiteaSignature},
	"gitlab":       {build: gitlab, Credential: "X-Gitlab-Token header", check: checkGitLabToken},
}

// Names lists the sources, sorted, for error messages.
func Names() string {
	names := make([]string, 0, len(Sources))
	for n := range Sources {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Transform checks the request's credential (see Secrets) and builds the
// message for a webhook from source.
func Transform(source string, secrets Secrets, h Headers, body []byte) (*Message, error) {
	s, ok := Sources[source]
	if !ok {
		return nil, ErrUnknownSource
	}
	if err := s.authenticate(secrets, h, body); err != nil {
		return nil, err
	}
	m, err := s.build(h, body)
	if err != nil {
		return nil, fmt.Errorf("transform: %s: %w", source, err)
	}
	if m != nil {
		if m.Priority == "" {
			m.Priority = "normal"
		}
		if !webURL(m.URL) {
			// The link comes from the webhook body as it is: a javascript:
			// or relative one is no page to open.
			m.URL, m.URLLabel = "", ""
		}
	}
	return m, nil
}

// authenticate checks a request's credential against the channel's
// secrets.
func (s Source) authenticate(secrets Secrets, h Headers, body []byte) error {
	switch {
	case s.check != nil:
		if secrets.Source != "" && !s.check(secrets.Source, h, body) {
			return ErrBadSignature
		}
	case secrets.Source != "":
		sig := h.Get(s.SignatureHeader)
		if sig == "" {
			return ErrNoSignature
		}
		if !s.verify(secrets.Source, sig, body) {
			return ErrBadSignature
		}
	default:
		if sig := h.Get(s.SignatureHeader); sig != "" && !s.verify(secrets.Callback, sig, body) {
			return ErrBadSignature
		}
	}
	return nil
}

// webURL reports whether s is an absolute http or https URL.
func webURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// verifyGitHub checks "sha256=<hex HMAC-SHA256 of the body>".
func verifyGitHub(secret, header string, body []byte) bool {
	got, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hmacEqualHex(got, m.Sum(nil))
}

// verifyVercel checks the hex HMAC-SHA1 of the body.
func verifyVercel(secret, header string, body []byte) bool {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write(body)
	return hmacEqualHex(header, m.Sum(nil))
}

// verifyNetlify checks a JWS (HS256) issued by "netlify" whose sha256 claim
// is the hex SHA-256 of the body.
func verifyNetlify(secret, header string, body []byte) bool {
	parts := strings.Split(header, ".")
	if len(parts) != 3 {
		return false
	}
	enc := base64.RawURLEncoding
	var hdr struct {
		Alg string `json:"alg"`
	}
	hb, err := enc.DecodeString(parts[0])
	if err != nil || json.Unmarshal(hb, &hdr) != nil || hdr.Alg != "HS256" {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(parts[0] + "." + parts[1]))
	sig, err := enc.DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, m.Sum(nil)) {
		return false
	}
	var claims struct {
		Issuer string `json:"iss"`
		SHA256 string `json:"sha256"`
	}
	pb, err := enc.DecodeString(parts[1])
	if err != nil || json.Unmarshal(pb, &claims) != nil || claims.Issuer != "netlify" {
		return false
	}
	sum := sha256.Sum256(body)
	return hmacEqualHex(claims.SHA256, sum[:])
}

func hmacEqualHex(got string, want []byte) bool {
	b, err := hex.DecodeString(strings.TrimSpace(got))
	return err == nil && hmac.Equal(b, want)
}

// decodeBody decodes a source's JSON body into v, with an error in the
// sender's terms: where the JSON is wrong, never the decoder's Go types.
func decodeBody(body []byte, v any) error {
	err := json.Unmarshal(body, v)
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Errorf("the body must be a JSON object, not %s", typ.Value)
	case errors.As(err, &typ):
		return fmt.Errorf("field %q must not be %s", typ.Field, typ.Value)
	}
	return errors.New("invalid JSON")
}
