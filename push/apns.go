package push

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/sideshow/apns2"
	"github.com/sideshow/apns2/token"
)

// APNs payloads are limited to 4 KB; the body gets what the rest leaves.
const apnsMaxPayload = 4096

// APNsConfig is token (.p8) authentication for APNs.
type APNsConfig struct {
	KeyFile    string
	KeyID      string
	TeamID     string
	Topic      string // the app's bundle id
	Production bool
	Host       string // overrides the APNs host (tests)
	// CriticalAlerts sends urgent messages as critical alerts (the app
	// needs Apple's entitlement); else they are time-sensitive.
	CriticalAlerts bool
}

// APNs sends to iPhones over HTTP/2 with a JWT provider token.
type APNs struct {
	client   *apns2.Client
	topic    string
	critical bool // urgent messages as critical alerts
}

// NewAPNs loads the .p8 key and prepares the client. httpClient, when not
// nil, replaces the HTTP/2 client (tests use the httptest server's).
func NewAPNs(cfg APNsConfig, httpClient *http.Client) (*APNs, error) {
	key, err := token.AuthKeyFromFile(cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("push: apns key %s: %w", cfg.KeyFile, err)
	}
	c := apns2.NewTokenClient(&token.Token{AuthKey: key, KeyID: cfg.KeyID, TeamID: cfg.TeamID})
	if cfg.Production {
		c = c.Production()
	} else {
		c = c.Development()
	}
	if cfg.Host != "" {
		c.Host = cfg.Host
	}
	if httpClient != nil {
		c.HTTPClient = httpClient
	}
	return &APNs{client: c, topic: cfg.Topic, critical: cfg.CriticalAlerts}, nil
}

type apsAlert struct {
	Title string `json:"title"`
	Body  string `json:"body,omitempty"`
}

type aps struct {
	Alert             apsAlert `json:"alert"`
	Sound             any      `json:"sound,omitempty"` // a name, or a critical alert's {critical, name, volume}
	InterruptionLevel string   `json:"interruption-level"`
	MutableContent    int      `json:"mutable-content"`
	Category          string   `json:"category,omitempty"`
}

type apnsPayload struct {
	APS       aps             `json:"aps"`
	MessageID string          `json:"message_id"`
	ChannelID string          `json:"channel_id"`
	Actions   json.RawMessage `json:"actions,omitempty"`
	// ImageURL is the picture a notification service extension (which
	// mutable-content runs) downloads and shows.
	ImageURL string `json:"image_url,omitempty"`
}

// criticalSound is the sound of a critical alert: at full volume, through
// silent mode and Focus.
type criticalSound struct {
	Critical int     `json:"critical"`
	Name     string  `json:"name"`
	Volume   float64 `json:"volume"`
}

// apnsPayloadFor maps priority: urgent → sound and time-sensitive, or a
// critical alert when critical is set, priority 10; high → sound and
// time-sensitive, priority 10; normal → alert, priority 10; low → passive,
// priority 5. An urgent message's repeats replace its notification (the
// same apns-collapse-id) and sound again. A silent notification (quiet
// hours; never an urgent one) is passive and without sound.
func apnsPayloadFor(n Notification, critical bool) ([]byte, int, error) {
	p := apnsPayload{MessageID: n.MessageID, ChannelID: n.ChannelID, Actions: n.Actions, ImageURL: n.Image,
		APS: aps{Alert: apsAlert{Title: n.Title, Body: PlainText(n.Body)}, InterruptionLevel: "active", MutableContent: 1}}
	if len(n.Actions) > 2 { // not "[]"
		p.APS.Category = "HERALD_ACTIONS"
	}
	prio := apns2.PriorityHigh
	switch {
	case n.Priority == "urgent" && critical:
		p.APS.Sound, p.APS.InterruptionLevel = criticalSound{Critical: 1, Name: "default", Volume: 1}, "critical"
	case n.Priority == "high" || n.Priority == "urgent":
		p.APS.Sound, p.APS.InterruptionLevel = "default", "time-sensitive"
	case n.Priority == "low":
		p.APS.InterruptionLevel, prio = "passive", apns2.PriorityLow
	}
	if n.Silent {
		// Quiet hours: in the notification list, without sound, without
		// lighting the screen.
		p.APS.Sound, p.APS.InterruptionLevel = nil, "passive"
	}
	return fitPayload(&p.APS.Alert.Body, apnsMaxPayload, func() ([]byte, error) { return json.Marshal(p) }, prio)
}

// fitPayload marshals, shortening *body until the payload fits max bytes.
func fitPayload(body *string, limit int, marshal func() ([]byte, error), prio int) ([]byte, int, error) {
	for {
		b, err := marshal()
		if err != nil {
			return nil, 0, err
		}
		if len(b) <= limit || *body == "" {
			return b, prio, nil
		}
		*body = Truncate(*body, max(0, len(*body)-(len(b)-limit)-16))
	}
}

// Send pushes one notification.
func (a *APNs) Send(ctx context.Context, deviceToken string, n Notification) error {
	payload, prio, err := apnsPayloadFor(n, a.critical)
	if err != nil {
		return err
	}
	res, err := a.client.PushWithContext(ctx, &apns2.Notification{DeviceToken: deviceToken, Topic: a.topic,
		Payload: payload, Priority: prio, PushType: apns2.PushTypeAlert, CollapseID: n.CollapseID()})
	if err != nil {
		return fmt.Errorf("push: apns: %w", err)
	}
	if res.Sent() {
		return nil
	}
	e := classifyHTTP("apns", res.StatusCode, res.Reason)
	switch res.Reason {
	case apns2.ReasonUnregistered, apns2.ReasonBadDeviceToken, apns2.ReasonDeviceTokenNotForTopic, apns2.ReasonExpiredToken:
		e.Permanent = true
	}
	if res.StatusCode == http.StatusGone {
		e.Permanent = true
	}
	return e
}
