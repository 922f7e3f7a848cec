package push

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// FCM data payloads are limited to 4 KB.
const fcmMaxPayload = 4096

const fcmScope = "https://www.googleapis.com/auth/firebase.messaging"

// FCMConfig is a Firebase project and its service account.
type FCMConfig struct {
	CredentialsFile string // service-account JSON
	ProjectID       string // default: the service account's project_id
	Endpoint        string // default https://fcm.googleapis.com (tests override)
}

// FCM sends to Android phones through the FCM HTTP v1 API, with an OAuth2
// token from the service account (no Firebase SDK).
type FCM struct {
	client *http.Client
	url    string
}

// NewFCM reads the service account. base, when not nil, is the HTTP client
// under the OAuth2 transport (and for the token endpoint); it must have a
// timeout.
func NewFCM(cfg FCMConfig, base *http.Client) (*FCM, error) {
	sa, err := os.ReadFile(cfg.CredentialsFile)
	if err != nil {
		return nil, fmt.Errorf("push: fcm credentials: %w", err)
	}
	jwtCfg, err := google.JWTConfigFromJSON(sa, fcmScope)
	if err != nil {
		return nil, fmt.Errorf("push: fcm credentials %s: %w", cfg.CredentialsFile, err)
	}
	if cfg.ProjectID == "" {
		var meta struct {
			ProjectID string `json:"project_id"`
		}
		_ = json.Unmarshal(sa, &meta)
		cfg.ProjectID = meta.ProjectID
	}
	if cfg.ProjectID == "" {
		return nil, fmt.Errorf("push: fcm: no project_id in config or credentials")
	}
	if base == nil {
		base = &http.Client{Timeout: 15 * time.Second}
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, base)
	client := jwtCfg.Client(ctx)
	client.Timeout = base.Timeout
	endpoint := strings.TrimRight(cfg.Endpoint, "/")
	if endpoint == "" {
		endpoint = "https://fcm.googleapis.com"
	}
	return &FCM{client: client, url: endpoint + "/v1/projects/" + cfg.ProjectID + "/messages:send"}, nil
}

type fcmMessage struct {
	Message struct {
		Token        string            `json:"token"`
		Notification fcmNotification   `json:"notification"`
		Data         map[string]string `json:"data"`
		Android      fcmAndroid        `json:"android"`
	} `json:"message"`
}

type fcmNotification struct {
	Title string `json:"title"`
	Body  string `json:"body,omitempty"`
}

type fcmAndroid struct {
	Priority     string `json:"priority"` // HIGH or NORMAL
	CollapseKey  string `json:"collapse_key,omitempty"`
	Notification struct {
		Sound string `json:"sound,omitempty"`
		// NotificationPriority is PRIORITY_MAX on an urgent message: a
		// heads-up notification that stays; PRIORITY_LOW on a silent one
		// (quiet hours).
		NotificationPriority string `json:"notification_priority,omitempty"`
		Tag                  string `json:"tag,omitempty"`
		Image                string `json:"image,omitempty"`
		ClickURL             string `json:"-"`
	} `json:"notification"`
}

// fcmPayloadFor maps priority: urgent → android priority HIGH with sound
// and notification priority PRIORITY_MAX; high → HIGH with sound; low →
// NORMAL; normal → HIGH without sound (a visible notification). An urgent
// message's repeats replace its notification (the same tag) and sound
// again. A silent notification (quiet hours) is NORMAL, without sound, at
// notification priority low.
func fcmPayloadFor(token string, n Notification) ([]byte, error) {
	var m fcmMessage
	m.Message.Token = token
	m.Message.Notification = fcmNotification{Title: n.Title, Body: PlainText(n.Body)}
	m.Message.Data = map[string]string{"message_id": n.MessageID, "channel_id": n.ChannelID,
		"priority": n.Priority, "actions": string(n.Actions)}
	m.Message.Android.Priority = "HIGH"
	m.Message.Android.Notification.Tag = n.CollapseID()
	if n.Group != "" {
		// A sequence's messages replace one another, also while the
		// phone is offline: FCM keeps only the newest.
		m.Message.Android.CollapseKey = n.Group
	}
	m.Message.Android.Notification.Image = n.Image
	for k, v := range map[string]string{"click_url": n.Click, "icon_url": n.Icon, "image_url": n.Image,
		"tags": strings.Join(n.Tags, ",")} {
		if v != "" {
			m.Message.Data[k] = v
		}
	}
	switch n.Priority {
	case "urgent":
		m.Message.Android.Notification.Sound = "default"
		m.Message.Android.Notification.NotificationPriority = "PRIORITY_MAX"
	case "high":
		m.Message.Android.Notification.Sound = "default"
	case "low":
		m.Message.Android.Priority = "NORMAL"
	}
	if n.Silent {
		// Quiet hours: no sound, low priority, and a flag with which the
		// app can pick a notification channel that makes no sound.
		m.Message.Android.Priority = "NORMAL"
		m.Message.Android.Notification.Sound = ""
		m.Message.Android.Notification.NotificationPriority = "PRIORITY_LOW"
		m.Message.Data["silent"] = "true"
	}
	b, _, err := fitPayload(&m.Message.Notification.Body, fcmMaxPayload, func() ([]byte, error) { return json.Marshal(m) }, 0)
	return b, err
}

// Send pushes one notification.
func (f *FCM) Send(ctx context.Context, token string, n Notification) error {
	body, err := fcmPayloadFor(token, n)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := f.client.Do(req)
	if err != nil {
		return fmt.Errorf("push: fcm: %w", err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if res.StatusCode == http.StatusOK {
		return nil
	}
	var fe struct {
		Error struct {
			Status  string `json:"status"`
			Message string `json:"message"`
			Details []struct {
				ErrorCode string `json:"errorCode"`
			} `json:"details"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &fe)
	reason := fe.Error.Status
	for _, d := range fe.Error.Details {
		if d.ErrorCode != "" {
			reason = d.ErrorCode
		}
	}
	e := classifyHTTP("fcm", res.StatusCode, reason)
	if reason == "UNREGISTERED" || res.StatusCode == http.StatusNotFound {
		e.Permanent, e.Retryable = true, false
	}
	return e
}
