package push

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"
)

// Web Push payloads must fit one record (~4 KB) after encryption.
const webPushMaxPayload = 3000

// WebPush sends to browsers with VAPID.
type WebPush struct {
	subscriber string
	public     string
	private    string
	client     *http.Client
}

// GenerateVAPIDKeys returns a new VAPID key pair (base64url).
func GenerateVAPIDKeys() (private, public string, err error) { return webpush.GenerateVAPIDKeys() }

// NewWebPush prepares Web Push with a VAPID subject (mailto: or https:) and
// key pair. client must have a timeout. A subscription's endpoint is chosen
// by whoever registers the device, so the server hands in a client that
// refuses networks users may not reach and follows no redirects.
func NewWebPush(subject, publicKey, privateKey string, client *http.Client) *WebPush {
	if client == nil {
		client = &http.Client{Timeout: 15 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	// webpush-go adds "mailto:" to any subscriber not starting with "https:",
	// so hand it the address without the scheme.
	return &WebPush{subscriber: strings.TrimPrefix(subject, "mailto:"), public: publicKey, private: privateKey, client: client}
}

// webPushPayload is the JSON a service worker receives: all it needs to
// show the notification, draw its buttons and answer it, without asking
// the server first.
type webPushPayload struct {
	Type      string `json:"type"` // message or update
	MessageID string `json:"message_id"`
	ChannelID string `json:"channel_id"`
	Channel   string `json:"channel,omitempty"`
	Title     string `json:"title"`
	Body      string `json:"body"` // plain text
	Priority  string `json:"priority"`
	Tag       string `json:"tag"`
	Renotify  bool   `json:"renotify,omitempty"` // a sequence's later message, an urgent repeat, alerts again
	// RequireInteraction: an urgent message's notification stays until
	// the person acts on it.
	RequireInteraction bool            `json:"require_interaction,omitempty"`
	Silent             bool            `json:"silent,omitempty"` // quiet hours: shown without sound or alert
	Tags               []string        `json:"tags,omitempty"`
	Click              string          `json:"click,omitempty"` // opened by a click instead of URL
	Icon               string          `json:"icon,omitempty"`
	Image              string          `json:"image,omitempty"`
	URL                string          `json:"url,omitempty"`
	Status             string          `json:"status,omitempty"` // on an update
	Actions            []webPushAction `json:"actions,omitempty"`
	Answer             *Answer         `json:"answer,omitempty"`
}

// webPushAction is an action as a notification button needs it: a form's
// fields stay out (a form opens the app), which keeps the payload small.
type webPushAction struct {
	Type  string `json:"type"` // button, form or url
	Key   string `json:"key,omitempty"`
	Label string `json:"label"`
	Style string `json:"style,omitempty"`
	Value string `json:"value,omitempty"` // a url action's link
}

// webPayload builds the payload of n.
func webPayload(n Notification) webPushPayload {
	p := webPushPayload{Type: KindMessage, MessageID: n.MessageID, ChannelID: n.ChannelID, Channel: n.ChannelName,
		Title: n.Title, Body: PlainText(n.Body), Priority: n.Priority, Tag: Tag(n.CollapseID()), URL: n.URL}
	if n.Kind == KindUpdate {
		p.Type, p.Status = KindUpdate, n.Status
		return p
	}
	urgent := n.Priority == "urgent"
	p.Renotify, p.RequireInteraction = (n.Group != "" && !n.Silent) || urgent, urgent
	p.Silent = n.Silent
	p.Tags, p.Click, p.Icon, p.Image = n.Tags, n.Click, n.Icon, n.Image
	p.Answer = n.Answer
	// Actions the service worker cannot read are left out rather than
	// failing the push: the app shows them.
	_ = json.Unmarshal(n.Actions, &p.Actions)
	return p
}

func urgency(priority string) webpush.Urgency {
	switch priority {
	case "high", "urgent":
		return webpush.UrgencyHigh
	case "low":
		return webpush.UrgencyLow
	}
	return webpush.UrgencyNormal
}

// Send pushes one notification; token is the browser's PushSubscription JSON.
func (w *WebPush) Send(ctx context.Context, token string, n Notification) error {
	parsed, err := parseSubscription(token)
	if err != nil {
		return &Error{Provider: "webpush", Permanent: true, Reason: "subscription is not valid JSON"}
	}
	// A key nothing can be encrypted to will never work: the device is
	// dead, not the push service busy.
	if err := checkKeys(parsed); err != nil {
		return &Error{Provider: "webpush", Permanent: true, Reason: "subscription " + err.Error()}
	}
	sub := webpush.Subscription{Endpoint: parsed.Endpoint,
		Keys: webpush.Keys{P256dh: parsed.Keys.P256dh, Auth: parsed.Keys.Auth}}
	p := webPayload(n)
	body, _, err := fitPayload(&p.Body, webPushMaxPayload, func() ([]byte, error) { return json.Marshal(p) }, 0)
	if err != nil {
		return err
	}
	res, err := webpush.SendNotificationWithContext(ctx, body, &sub, &webpush.Options{
		HTTPClient: w.client, Subscriber: w.subscriber, VAPIDPublicKey: w.public, VAPIDPrivateKey: w.private,
		TTL: 24 * 3600, Urgency: urgency(n.Priority),
	})
	if err != nil {
		return sendError(sub.Endpoint, err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		return nil
	}
	e := classifyHTTP("webpush", res.StatusCode, http.StatusText(res.StatusCode))
	if res.StatusCode >= 300 && res.StatusCode < 400 {
		e.Reason += "; redirects are not followed"
	}
	if res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusGone {
		e.Permanent = true
	}
	return e
}

// sendError classifies an error of webpush-go before any answer: the
// subscription's endpoint or keys are unusable (permanent), or the push
// service could not be reached (retryable).
func sendError(endpoint string, err error) error {
	var ue *url.Error
	switch {
	case errors.As(err, &ue) && ue.Op == "parse":
		return &Error{Provider: "webpush", Permanent: true, Reason: "subscription endpoint is not a URL"}
	case errors.As(err, &ue):
		// The endpoint's path is the subscription's capability: keep it,
		// and any query, out of the error, which ends up in the log.
		return fmt.Errorf("push: webpush: %s %s: %w", ue.Op, origin(endpoint), ue.Err)
	case strings.HasPrefix(err.Error(), "Unmarshal Error") || strings.HasPrefix(err.Error(), "Encryption error"):
		// webpush-go's words for a key the message cannot be encrypted to.
		return &Error{Provider: "webpush", Permanent: true, Reason: "encryption failed: " + err.Error()}
	}
	return fmt.Errorf("push: webpush: %w", err)
}

// origin is the scheme and host of an endpoint, all a log line needs.
func origin(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "(invalid endpoint)"
	}
	return u.Scheme + "://" + u.Host
}
