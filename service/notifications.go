package service

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"

	"github.com/heraldhq/herald/push"
	"github.com/heraldhq/herald/store"
)

// NotificationKey returns the key that signs the credentials of web
// notifications (push.AnswerToken, push.ResubscribeToken), generating it on
// first use and keeping it in the database, so that notifications already
// shown stay answerable across restarts.
func (s *Service) NotificationKey(ctx context.Context) ([]byte, error) {
	return s.st.EnsureSetting(ctx, "notification_key", func() ([]byte, error) {
		k := make([]byte, 32)
		_, err := rand.Read(k)
		return k, err
	})
}

// ResubscribeToken returns the credential a browser's service worker keeps
// to hand in a new subscription for web device d (see ResubscribeDevice);
// "" for a device no browser session registered.
func (s *Service) ResubscribeToken(ctx context.Context, d *store.Device) (string, error) {
	if d.Platform != "web" || d.SessionID == "" {
		return "", nil
	}
	key, err := s.NotificationKey(ctx)
	if err != nil {
		return "", err
	}
	return push.ResubscribeToken(key, d.ID, d.SessionID), nil
}

// RespondFromNotification records an answer tapped on a notification: the
// same answer as Respond, once the notification's credential (token, pushed
// to deviceID for messageID) shows that it comes from who's browser
// session that registered that device.
func (s *Service) RespondFromNotification(ctx context.Context, who *store.User, sessionID, deviceID, token, messageID, action string,
	responses map[string]json.RawMessage) (Answer, error) {
	err := s.checkDeviceToken(ctx, who, sessionID, deviceID, token, func(key []byte) string {
		return push.AnswerToken(key, deviceID, sessionID, messageID)
	})
	if err != nil {
		return Answer{}, err
	}
	return s.RespondVia(ctx, who, Via{Device: deviceID}, messageID, action, responses)
}

// ResubscribeDevice replaces the subscription of web device deviceID with
// pushToken (checked as at registration) when the browser rotated it: the service worker, which cannot send the CSRF
// token, proves with the token it was given at registration that it acts
// for the session that registered the device.
func (s *Service) ResubscribeDevice(ctx context.Context, who *store.User, sessionID, deviceID, token, pushToken string) (*store.Device, error) {
	if err := checkPushToken("web", pushToken); err != nil {
		return nil, err
	}
	err := s.checkDeviceToken(ctx, who, sessionID, deviceID, token, func(key []byte) string {
		return push.ResubscribeToken(key, deviceID, sessionID)
	})
	if err != nil {
		return nil, err
	}
	return s.st.UpdateDevice(ctx, who.ID, deviceID, store.DevicePatch{PushToken: &pushToken})
}

// checkDeviceToken accepts token when deviceID is one of who's web devices,
// still registered and active, registered by sessionID (the session the
// request came with), and token is the credential want computes.
func (s *Service) checkDeviceToken(ctx context.Context, who *store.User, sessionID, deviceID, token string, want func(key []byte) string) error {
	if sessionID == "" {
		return forbidden("a notification is answered from the browser session that turned notifications on")
	}
	d, err := s.st.Device(ctx, who.ID, deviceID)
	if errors.Is(err, store.ErrNotFound) {
		return forbidden("this browser's notifications are no longer registered; turn them on again")
	}
	if err != nil {
		return err
	}
	if d.Platform != "web" || !d.Active {
		return forbidden("this device cannot answer from notifications; turn them on again")
	}
	if d.SessionID != sessionID {
		return forbidden("notifications in this browser were turned on in another session; open Herald to turn them on again")
	}
	key, err := s.NotificationKey(ctx)
	if err != nil {
		return err
	}
	if !push.TokenEqual(token, want(key)) {
		return forbidden("the notification's credential does not match this device and message")
	}
	return nil
}
