package service

import (
	"context"
	"errors"
	"strings"

	"github.com/heraldhq/herald/push"
	"github.com/heraldhq/herald/store"
)

// MaxPushToken bounds a push token; a Web Push subscription JSON is ~400
// bytes.
const MaxPushToken = 4096

// checkPlatform checks a device's platform: ios, android or web.
func checkPlatform(platform string) error {
	switch platform {
	case "ios", "android", "web":
		return nil
	case "":
		return invalid("platform is required: ios, android or web")
	}
	return invalid("platform must be ios, android or web")
}

// checkPushToken checks a device's push token for its platform. A web
// token is the browser's PushSubscription JSON: an https endpoint and keys
// a message can be encrypted to (push.CheckSubscription), so that a
// registration that could never receive a push is refused at once, naming
// the field.
func checkPushToken(platform, token string) error {
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

// checkDeviceName checks a device's name, which may be empty.
func checkDeviceName(name string) error {
	if chars(name) > maxName {
		return invalid("name is longer than %d characters", maxName)
	}
	return nil
}

// RegisterDevice checks d and registers it for owner's pushes. A web
// device is bound to sessionID, the browser session that registers it:
// answers from its notifications must come from that session, and its
// service worker gets workerToken to hand in a rotated subscription
// (ResubscribeDevice); other devices get "". A push token owner already
// registered updates its device, whatever the count; a new device is
// refused when owner already has as many as their plan allows.
func (s *Service) RegisterDevice(ctx context.Context, owner *store.User, sessionID string, d *store.Device) (workerToken string, err error) {
	for _, err := range []error{checkPlatform(d.Platform), checkPushToken(d.Platform, d.PushToken), checkDeviceName(d.Name)} {
		if err != nil {
			return "", err
		}
	}
	d.UserID = owner.ID
	if d.Platform == "web" {
		d.SessionID = sessionID
	}
	max := s.Limits(owner.Plan).MaxDevices
	err = s.st.RegisterDeviceCapped(ctx, d, max)
	if err != nil {
		return "", overCap(err, owner.Plan, "devices", "remove one to register another")
	}
	return s.ResubscribeToken(ctx, d)
}

// UpdateDevice checks p and applies it to userID's device id: a new push
// token must suit the device's platform, and reactivates it.
func (s *Service) UpdateDevice(ctx context.Context, userID, id string, p store.DevicePatch) (*store.Device, error) {
	if p.PushToken == nil && p.Name == nil {
		return nil, invalid("send push_token and/or name")
	}
	if p.Name != nil {
		if err := checkDeviceName(*p.Name); err != nil {
			return nil, err
		}
	}
	if p.PushToken != nil {
		// The token format depends on the device's platform.
		d, err := s.st.Device(ctx, userID, id)
		if err != nil {
			return nil, err
		}
		if err := checkPushToken(d.Platform, *p.PushToken); err != nil {
			return nil, err
		}
	}
	return s.st.UpdateDevice(ctx, userID, id, p)
}

// DeleteDevice unregisters userID's device id: nothing is pushed to it any
// more.
func (s *Service) DeleteDevice(ctx context.Context, userID, id string) error {
	return s.st.DeleteDevice(ctx, userID, id)
}
