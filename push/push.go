// Package push sends notifications to phones and browsers through APNs, FCM
// HTTP v1 and Web Push. It knows nothing of the store: callers hand it a
// Notification and a device's platform and token, and get back an error
// classified as permanent (the token is dead) or retryable.
package push

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Notification is what a device shows.
type Notification struct {
	MessageID string
	ChannelID string
	Title     string
	Body      string          // Markdown, as sent; each provider renders plain text
	Priority  string          // low, normal, high
	Actions   json.RawMessage // the message's actions, so an app can draw buttons
}

// Error is a failed push, classified.
type Error struct {
	Provider  string
	Permanent bool // the device token is dead: deactivate the device
	Retryable bool // a transient failure (429, 5xx, timeout): try again later
	Status    int
	Reason    string
}

func (e *Error) Error() string {
	kind := "failed"
	switch {
	case e.Permanent:
		kind = "token rejected"
	case e.Retryable:
		kind = "temporary failure"
	}
	return fmt.Sprintf("push: %s: %s (status %d, %s)", e.Provider, kind, e.Status, e.Reason)
}

// IsPermanent reports whether err says the device token is dead.
func IsPermanent(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Permanent
}

// IsRetryable reports whether err is worth retrying. Errors that are not an
// *Error (connection failures, timeouts) are retryable.
func IsRetryable(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Retryable
	}
	return err != nil
}

// ErrNotConfigured is returned for a platform whose provider is not set up.
var ErrNotConfigured = errors.New("push: provider not configured")

// Sender delivers to one platform.
type Sender interface {
	Send(ctx context.Context, token string, n Notification) error
}

// Dispatcher routes a push to its platform's provider.
type Dispatcher struct {
	senders map[string]Sender // by platform: ios, android, web
}

// NewDispatcher returns a dispatcher; nil senders are left out.
func NewDispatcher(apns, fcm, web Sender) *Dispatcher {
	d := &Dispatcher{senders: map[string]Sender{}}
	for platform, s := range map[string]Sender{"ios": apns, "android": fcm, "web": web} {
		if s != nil && !isNil(s) {
			d.senders[platform] = s
		}
	}
	return d
}

func isNil(s Sender) bool {
	switch v := s.(type) {
	case *APNs:
		return v == nil
	case *FCM:
		return v == nil
	case *WebPush:
		return v == nil
	}
	return false
}

// Configured reports whether platform has a provider.
func (d *Dispatcher) Configured(platform string) bool { return d.senders[platform] != nil }

// Send pushes n to one device.
func (d *Dispatcher) Send(ctx context.Context, platform, token string, n Notification) error {
	s := d.senders[platform]
	if s == nil {
		return fmt.Errorf("%w: %s", ErrNotConfigured, platform)
	}
	return s.Send(ctx, token, n)
}

// classifyHTTP classifies an HTTP status for providers without finer reasons.
func classifyHTTP(provider string, status int, reason string) *Error {
	return &Error{Provider: provider, Status: status, Reason: reason,
		Retryable: status == 429 || status >= 500}
}
