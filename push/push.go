// Package push sends notifications to phones and browsers through APNs, FCM
// HTTP v1 and Web Push. It knows nothing of the store: callers hand it a
// Notification and a device's platform and token, and get back an error
// classified as permanent (the token is dead) or retryable.
package push

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
)

// Notification is what a device shows.
type Notification struct {
	MessageID string
	ChannelID string
	Title     string
	Body      string          // Markdown, as sent; each provider renders plain text
	Priority  string          // low, normal, high, urgent (alerts until acknowledged)
	Actions   json.RawMessage // the message's actions, so an app can draw buttons

	// Group is the notification's identity when it is not the message's
	// own: a later message of the same sequence (SequenceGroup) replaces
	// the earlier one's notification on every device. "" is the message's.
	Group string
	// What the message carries beside its text (service.Extras): shown
	// where the platform can.
	Tags               []string
	Click, Icon, Image string
	// Silent shows the notification without sound or alert: its user's
	// quiet hours are on, and they chose to see pushes silently.
	Silent bool

	// What a browser's service worker needs besides (Web Push only).

	// Kind is PushMessage (or empty) for a new message, PushUpdate once it
	// was answered elsewhere: the notification is then replaced.
	Kind        string
	ChannelName string
	// URL is the app's page of the message, opened by a click.
	URL string
	// Status is where an updated message stands: answered, approved,
	// rejected or expired.
	Status string
	// Answer lets this device answer from the notification; nil: it cannot.
	Answer *Answer
}

// Kinds of Notification.
const (
	KindMessage = "message"
	KindUpdate  = "update"
)

// Answer is what a service worker sends with an answer from a notification.
type Answer struct {
	DeviceID string `json:"device_id"`
	Token    string `json:"token"` // AnswerToken
	URL      string `json:"url"`   // where to POST the answer
}

// Tag identifies a message's notification in a browser, so that a later
// push for the same message replaces it instead of adding another.
func Tag(messageID string) string { return "herald-" + messageID }

// CollapseID is what identifies n's notification on a device: the
// sequence's group, else the message's id. At most 64 bytes, as APNs's
// apns-collapse-id allows.
func (n *Notification) CollapseID() string {
	if n.Group != "" {
		return n.Group
	}
	return n.MessageID
}

// SequenceGroup is the stable group of a channel's sequence: the same for
// every message of it, and for no other channel's. 36 bytes.
func SequenceGroup(channelID, sequenceID string) string {
	sum := sha256.Sum256([]byte(channelID + "\x00" + sequenceID))
	return "seq-" + hex.EncodeToString(sum[:16])
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

// IsThrottled reports whether err is a provider's 429: it limits the
// sender, and says nothing of the device.
func IsThrottled(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == 429
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

// LooksLikeImage reports whether a URL's path ends like a picture's file
// name, so that a notification may show it as one.
func LooksLikeImage(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	switch strings.ToLower(path.Ext(u.Path)) {
	case ".jpg", ".jpeg", ".png", ".gif", ".webp", ".avif":
		return true
	}
	return false
}
