package service

import (
	"strings"
	"testing"
)

// webKeys are a browser's subscription keys: a P-256 point and a 16-byte
// auth secret, base64url.
const webKeys = `{"p256dh":"BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM","auth":"tBHItJI5svbpez7KI4CCXg"}`

func TestDeviceRules(t *testing.T) {
	t.Parallel()
	web := func(endpoint, keys string) string { return `{"endpoint":"` + endpoint + `","keys":` + keys + `}` }
	for _, c := range []struct {
		name, platform, token, want string
	}{
		{"an ios token", "ios", "abc123", ""},
		{"an android token", "android", "fcm:token", ""},
		{"a web subscription", "web", web("https://push.example.com/abc", webKeys), ""},
		{"an empty token", "ios", "", "push_token is required"},
		{"a blank token", "android", "  \n", "push_token is required"},
		{"a token of the most bytes", "ios", strings.Repeat("a", MaxPushToken), ""},
		{"a token one byte over", "ios", strings.Repeat("a", MaxPushToken+1), "push_token is longer than 4096 bytes"},
		{"web, not JSON", "web", "not-json", "push_token for platform web must be the PushSubscription JSON as a string"},
		{"web, an http endpoint", "web", web("http://push.example.com/abc", webKeys), "push_token.endpoint must be an absolute https URL"},
		{"web, a user in the endpoint", "web", web("https://u:p@push.example.com/abc", webKeys), "push_token.endpoint must not carry"},
		{"web, no keys", "web", web("https://push.example.com/abc", `{}`), "push_token.keys.p256dh"},
		{"web, a point off the curve", "web", web("https://push.example.com/abc",
			`{"p256dh":"BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","auth":"tBHItJI5svbpez7KI4CCXg"}`),
			"push_token.keys.p256dh must be an uncompressed P-256 public key"},
		{"ios takes any text", "ios", "not-json", ""},
	} {
		t.Run(c.name, func(t *testing.T) { wantRefusal(t, checkPushToken(c.platform, c.token), c.want) })
	}
	for _, c := range []struct{ platform, want string }{
		{"ios", ""}, {"android", ""}, {"web", ""},
		{"", "platform is required: ios, android or web"},
		{"windows", "platform must be ios, android or web"},
		{"IOS", "platform must be ios, android or web"},
	} {
		t.Run("platform "+c.platform, func(t *testing.T) { wantRefusal(t, checkPlatform(c.platform), c.want) })
	}
	wantRefusal(t, checkDeviceName(""), "")
	wantRefusal(t, checkDeviceName(strings.Repeat("é", 100)), "")
	wantRefusal(t, checkDeviceName(strings.Repeat("é", 101)), "name is longer than 100 characters")
}
