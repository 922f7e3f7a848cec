package transform

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"strings"
)

const authCredential = "Authorization header (Bearer <secret>, or Basic with the secret as password)"

// checkAuthorization accepts "Authorization: Bearer <secret>" or HTTP
// basic auth whose password is the secret (any user name): what
// Alertmanager's http_config, Grafana's webhook contact point and Uptime
// Kuma's additional headers can send.
func checkAuthorization(secret string, h Headers, _ []byte) bool {
	scheme, cred, _ := strings.Cut(h.Get("Authorization"), " ")
	switch strings.ToLower(scheme) {
	case "bearer":
		return secretEqual(strings.TrimSpace(cred), secret)
	case "basic":
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
		if err != nil {
			return false
		}
		_, pass, ok := strings.Cut(string(raw), ":")
		return ok && secretEqual(pass, secret)
	}
	return false
}

// checkGiteaSignature checks X-Forgejo-Signature or X-Gitea-Signature: the
// hex HMAC-SHA256 of the body keyed with the secret.
func checkGiteaSignature(secret string, h Headers, body []byte) bool {
	sig := firstNonEmpty(h.Get("X-Forgejo-Signature"), h.Get("X-Gitea-Signature"))
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return sig != "" && hmacEqualHex(sig, m.Sum(nil))
}

// checkGitLabToken checks X-Gitlab-Token, which GitLab sends as it is.
func checkGitLabToken(secret string, h Headers, _ []byte) bool {
	return secretEqual(h.Get("X-Gitlab-Token"), secret)
}

// secretEqual compares in constant time (for equal lengths; the length of
// a secret is no secret worth keeping).
func secretEqual(got, want string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
