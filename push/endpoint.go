package push

import "encoding/json"

// WebPushEndpoint is the endpoint URL of a browser's PushSubscription JSON
// (a web device's token); "" when the token is not one. The URL's path is
// the subscription's capability: keep it out of logs.
func WebPushEndpoint(token string) string {
	var sub struct {
		Endpoint string `json:"endpoint"`
	}
	if json.Unmarshal([]byte(token), &sub) != nil {
		return ""
	}
	return sub.Endpoint
}
