package service

import (
	"encoding/json"
	"time"

	"github.com/heraldhq/herald/store"
)

// AlertEvent is the body of an alert's callback: alert.acknowledged,
// alert.cancelled or alert.expired.
type AlertEvent struct {
	Event     string    `json:"event"`
	MessageID string    `json:"message_id"`
	ChannelID string    `json:"channel_id"`
	Timestamp string    `json:"timestamp"`
	Alert     AlertJSON `json:"alert"`
	Metadata  *struct{} `json:"metadata"` // reserved; always null
}

// AlertJSON is an urgent message's alert as the sender's poll, its
// callbacks and the message resource show it.
type AlertJSON struct {
	State          string         `json:"state"`
	Repeats        int            `json:"repeats"`
	RepeatSeconds  int            `json:"repeat_seconds"`
	Level          int            `json:"level"`
	Alerted        []AlertedJSON  `json:"alerted"`
	AcknowledgedBy *AlertUserJSON `json:"acknowledged_by"`
	AcknowledgedAt *string        `json:"acknowledged_at"`
	Device         *string        `json:"device"`
	CancelledBy    *string        `json:"cancelled_by"`
	ResolvedAt     *string        `json:"resolved_at"`
	ExpiresAt      string         `json:"expires_at"`
	NextRepeatAt   *string        `json:"next_repeat_at"`
}

// AlertUserJSON is a person an alert names.
type AlertUserJSON struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// AlertedJSON is a person an alert reached, at which level, and when.
type AlertedJSON struct {
	AlertUserJSON
	Level     int    `json:"level"`
	AlertedAt string `json:"alerted_at"`
}

// RenderAlert is a stored alert as the API shows it.
func RenderAlert(a *store.Alert) AlertJSON {
	opt := func(t *time.Time) *string {
		if t == nil {
			return nil
		}
		s := FormatTime(*t)
		return &s
	}
	str := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	out := AlertJSON{State: a.State, Repeats: a.Repeats, RepeatSeconds: int(a.Repeat / time.Second), Level: a.Level,
		Alerted: make([]AlertedJSON, len(a.Alerted)), AcknowledgedAt: opt(a.AcknowledgedAt),
		Device: str(a.AcknowledgedDevice), CancelledBy: str(a.CancelledBy), ResolvedAt: opt(a.ResolvedAt),
		ExpiresAt: FormatTime(a.ExpiresAt), NextRepeatAt: opt(a.NextRepeatAt)}
	for i, r := range a.Alerted {
		out.Alerted[i] = AlertedJSON{AlertUserJSON: AlertUserJSON(r.AlertUser), Level: r.Level, AlertedAt: FormatTime(r.AlertedAt)}
	}
	if u := a.AcknowledgedBy; u != nil {
		out.AcknowledgedBy = &AlertUserJSON{ID: u.ID, Name: u.Name, Email: u.Email}
	}
	return out
}

// alertNotice builds an alert's callback to its message's callback_url:
// none without one.
func alertNotice(a *store.Alert, event string) (*store.NewDelivery, error) {
	if a.CallbackURL == nil {
		return nil, nil
	}
	at := a.CreatedAt
	if a.ResolvedAt != nil {
		at = *a.ResolvedAt
	}
	b, err := json.Marshal(AlertEvent{Event: event, MessageID: a.MessageID, ChannelID: a.ChannelID,
		Timestamp: FormatTime(at), Alert: RenderAlert(a)})
	if err != nil {
		return nil, err
	}
	return &store.NewDelivery{ChannelID: a.ChannelID, Event: event, URL: *a.CallbackURL, Body: b}, nil
}
