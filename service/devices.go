package service

import (
	"errors"
	"strings"

	"github.com/heraldhq/herald/push"
)

// MaxPushToken bounds a push token; a Web Push subscription JSON is ~400
// bytes.
const MaxPushToken = 4096

// CheckPushToken checks a device's push token for its platform. A web
// token is the browser's PushSubscription JSON: an https endpoint and keys
// a message can be encrypted to (push.CheckSubscription), so that a
// registration that could never receive a push is refused at once, naming
// the field.
func CheckPushToken(platform, token string) error {
	if strings.TrimSpace(token) == "" {
		return invalid("push_token is required")
	}
	if len(token) > MaxPushToken {
		return invalid("push_token is longer than %d bytes", MaxPushToken)
	}
	if platform != "web" {
		return nil
	}
	err := push.CheckSubscription(token)
	var se *push.SubscriptionError
	switch {
	case errors.As(err, &se):
		return invalid("push_token.%s %s", se.Field, se.Reason)
	case err != nil:
		return invalid("push_token for platform web must be the PushSubscription JSON as a string")
	}
	return nil
}
