package push

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
)

// Web notifications carry the credential that lets the browser's service
// worker answer them: a MAC, under a key only the server holds, of what the
// answer may do. The service worker cannot read the CSRF cookie, and the
// push payload can be read on the device, so the credential is bound to
// everything that must match when it comes back:
//
//   - the device it was pushed to: a removed device no longer answers;
//   - the browser session that registered that device: the request must
//     carry that session's cookie, so a signed-out or revoked session, or
//     another user, cannot answer;
//   - the message: a captured request does not answer another message.
//
// Purposes are kept apart, so that one credential never passes for another.
const (
	purposeAnswer      = "herald notification answer v1"
	purposeResubscribe = "herald web device resubscribe v1"
)

// AnswerToken is the credential with which the device deviceID, registered
// by session sessionID, answers message messageID.
func AnswerToken(key []byte, deviceID, sessionID, messageID string) string {
	return mac(key, purposeAnswer, deviceID, sessionID, messageID)
}

// ResubscribeToken is the credential with which the service worker of web
// device deviceID, registered by session sessionID, hands in the new
// subscription when the browser replaces the old one.
func ResubscribeToken(key []byte, deviceID, sessionID string) string {
	return mac(key, purposeResubscribe, deviceID, sessionID)
}

// TokenEqual compares a presented credential with the expected one in
// constant time.
func TokenEqual(got, want string) bool {
	return want != "" && hmac.Equal([]byte(got), []byte(want))
}

func mac(key []byte, parts ...string) string {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		// Each part ends with a NUL, which no id contains, so that no two
		// lists of parts write the same bytes.
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
