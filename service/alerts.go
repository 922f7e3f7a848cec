package service

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/heraldhq/herald/store"
)

// Urgent messages (docs/sending.md, "Urgent messages"): pushed loudly, and
// again every repeat interval until someone acknowledges them, for at most
// the expiry; escalated to the next person of the channel's escalation
// list every escalate_after; the sender learns who acknowledged, or that
// the alert was cancelled or expired.

// PriorityUrgent is the priority of a message that alerts until
// acknowledged.
const PriorityUrgent = "urgent"

// AckKey is the key of an urgent message's Acknowledge button.
const AckKey = "acknowledge"

// Bounds of an urgent alert, in seconds. A repeat more often than every
// 30 s is a flood, not an alert; an alert that nobody acknowledged in 3
// hours has failed, and its sender should learn so.
const (
	MinRepeatSeconds     = 30
	MaxExpireSeconds     = 3 * 60 * 60
	DefaultRepeatSeconds = 300
	DefaultExpireSeconds = 3600
	MaxEscalation        = 10
)

// AckButton is the Acknowledge button added to an urgent message that has
// none of its own.
var AckButton = Action{Type: "button", Key: AckKey, Label: "Acknowledge", Style: "primary"}

// UrgentOptions are a send's own alert times, overriding its channel's
// policy field by field.
type UrgentOptions struct {
	RepeatSeconds        *int `json:"repeat_seconds"`
	ExpireSeconds        *int `json:"expire_seconds"`
	EscalateAfterSeconds *int `json:"escalate_after_seconds"`
}

// checkUrgentSend checks what CheckSend can of an urgent send without its
// channel: the options' bounds, and room for the Acknowledge button.
func checkUrgentSend(p *SendPayload) error {
	if p.Priority != PriorityUrgent {
		if p.Urgent != nil {
			return invalid("urgent is for urgent messages: set priority to urgent, or leave urgent out")
		}
		return nil
	}
	ack := slices.IndexFunc(p.Actions, func(a Action) bool { return a.Key == AckKey })
	switch {
	case ack >= 0 && p.Actions[ack].Type != "button":
		return invalid("actions[%d]: on an urgent message the key %q is the Acknowledge button's: give it to a button, or to no action", ack, AckKey)
	case ack < 0 && len(p.Actions) >= MaxActions:
		return invalid("an urgent message gets an Acknowledge button: at most %d actions of its own, "+
			"or make one of them the button with key %q", MaxActions-1, AckKey)
	}
	if o := p.Urgent; o != nil {
		if o.RepeatSeconds != nil && (*o.RepeatSeconds < MinRepeatSeconds || *o.RepeatSeconds > MaxExpireSeconds) {
			return invalid("urgent.repeat_seconds must be between %d and %d", MinRepeatSeconds, MaxExpireSeconds)
		}
		if o.ExpireSeconds != nil && (*o.ExpireSeconds < MinRepeatSeconds || *o.ExpireSeconds > MaxExpireSeconds) {
			return invalid("urgent.expire_seconds must be between %d and %d (3 hours)", MinRepeatSeconds, MaxExpireSeconds)
		}
		if o.EscalateAfterSeconds != nil && (*o.EscalateAfterSeconds < MinRepeatSeconds || *o.EscalateAfterSeconds > MaxExpireSeconds) {
			return invalid("urgent.escalate_after_seconds must be between %d and %d", MinRepeatSeconds, MaxExpireSeconds)
		}
	}
	return nil
}

// urgentAlert is the alert of an urgent send to ch: the channel's policy,
// overridden by the send's own times. A channel without a policy refuses
// urgent messages, naming the setting: its owner has not agreed to be
// woken. A muted channel stores the message without an alert (nothing is
// pushed).
func urgentAlert(ch *store.Channel, p *SendPayload, muted bool) (*store.NewAlert, error) {
	pol := ch.Urgent
	if pol == nil {
		return nil, invalid("this channel does not take urgent messages: its owner turns them on with the channel's urgent " +
			"setting (PATCH /v1/channels/{id} with \"urgent\": {}); send with priority high instead")
	}
	repeat, expire, escalate := pol.RepeatSeconds, pol.ExpireSeconds, pol.EscalateAfterSeconds
	if o := p.Urgent; o != nil {
		repeat = cmp.Or(deref(o.RepeatSeconds), repeat)
		expire = cmp.Or(deref(o.ExpireSeconds), expire)
		escalate = cmp.Or(deref(o.EscalateAfterSeconds), escalate)
	}
	if repeat > expire {
		return nil, invalid("urgent.repeat_seconds (%d) must not exceed urgent.expire_seconds (%d): it would never repeat", repeat, expire)
	}
	if len(pol.Escalation) == 0 {
		escalate = 0
	}
	if muted {
		return nil, nil
	}
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	return &store.NewAlert{Repeat: sec(repeat), Expire: sec(expire), EscalateAfter: sec(escalate)}, nil
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// compatUrgent makes an ntfy priority 5 (max) or Gotify priority 10 send
// to a channel that takes urgent messages urgent, with the channel's
// policy, where it can alert: pushed (not ntfy's cache=no or firebase=no)
// and with room for the Acknowledge button. Else it stays high.
func compatUrgent(p *SendPayload) {
	if p.Ephemeral || p.NoPush || checkUrgentSend(&SendPayload{Priority: PriorityUrgent, Actions: p.Actions}) != nil {
		return
	}
	p.Priority = PriorityUrgent
}

// withAckButton returns actions with the Acknowledge button last, unless
// one of them is it already.
func withAckButton(actions []Action) []Action {
	if slices.ContainsFunc(actions, func(a Action) bool { return a.Key == AckKey }) {
		return actions
	}
	return append(slices.Clip(actions), AckButton)
}

// checkUrgentPolicy checks a channel's urgent policy and fills its
// defaults: 30 s <= repeat <= expire <= 3 h, escalate_after at least 30 s
// when the escalation list names anyone (default: the repeat interval),
// and at most MaxEscalation distinct, well-formed entries.
func checkUrgentPolicy(p *store.UrgentPolicy) error {
	p.RepeatSeconds = cmp.Or(p.RepeatSeconds, DefaultRepeatSeconds)
	p.ExpireSeconds = cmp.Or(p.ExpireSeconds, DefaultExpireSeconds)
	if p.RepeatSeconds < MinRepeatSeconds || p.RepeatSeconds > MaxExpireSeconds {
		return invalid("urgent.repeat_seconds must be between %d and %d", MinRepeatSeconds, MaxExpireSeconds)
	}
	if p.ExpireSeconds < MinRepeatSeconds || p.ExpireSeconds > MaxExpireSeconds {
		return invalid("urgent.expire_seconds must be between %d and %d (3 hours)", MinRepeatSeconds, MaxExpireSeconds)
	}
	if p.RepeatSeconds > p.ExpireSeconds {
		return invalid("urgent.repeat_seconds (%d) must not exceed urgent.expire_seconds (%d)", p.RepeatSeconds, p.ExpireSeconds)
	}
	if len(p.Escalation) > MaxEscalation {
		return invalid("urgent.escalation lists more than %d people", MaxEscalation)
	}
	if p.Escalation == nil {
		p.Escalation = []string{}
	}
	entries, err := normalizeEntries("urgent.escalation", p.Escalation)
	if err != nil {
		return err
	}
	p.Escalation = entries
	switch {
	case len(entries) == 0 && p.EscalateAfterSeconds != 0:
		return invalid("urgent.escalate_after_seconds needs urgent.escalation: whom to reach")
	case len(entries) == 0:
	case p.EscalateAfterSeconds == 0:
		p.EscalateAfterSeconds = p.RepeatSeconds
	case p.EscalateAfterSeconds < MinRepeatSeconds || p.EscalateAfterSeconds > MaxExpireSeconds:
		return invalid("urgent.escalate_after_seconds must be between %d and %d", MinRepeatSeconds, MaxExpireSeconds)
	}
	return nil
}

// Escalations returns the invitations of a channel's escalation list, in
// the list's order, to the channel's owner only: anyone else gets
// ErrNotFound. An entry shows who is behind it only once they accepted.
func (s *Service) Escalations(ctx context.Context, userID, channelID string) ([]store.ChannelApprover, error) {
	if _, err := s.st.Channel(ctx, userID, channelID); err != nil {
		return nil, err
	}
	return s.st.ChannelEscalations(ctx, channelID)
}

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

// Via is where an answer came from: the device, when the request says,
// else the credential ("key_…" for an API key, "session" for a sign-in
// session, "ntfy" for an ntfy app's answer). It is recorded on the
// acknowledgement of an urgent message.
type Via struct {
	Device string
}

// acking is the acknowledgement an answer by who to urgent message m
// carries; nil on other messages.
func (s *Service) acking(m *store.Message, who *store.User, via Via) *store.AlertAcking {
	if m.Priority != PriorityUrgent {
		return nil
	}
	return &store.AlertAcking{Ack: store.AlertAck{UserID: who.ID, At: s.now().UTC().Truncate(time.Millisecond),
		Device: via.Device}, Notice: alertNotice}
}

// acknowledge records who's tap of the Acknowledge button of urgent
// message m: the alert stops; the message stays unanswered, so that its
// other buttons still work.
func (s *Service) acknowledge(ctx context.Context, m *store.Message, who *store.User, via Via) (Answer, error) {
	ack := s.acking(m, who, via)
	a, err := s.st.AcknowledgeAlert(ctx, m.ID, ack.Ack, ack.Notice)
	switch {
	case errors.Is(err, store.ErrAlertClosed):
		return Answer{}, conflict("alert_closed", "this alert is no longer active: it was acknowledged, cancelled or expired")
	case errors.Is(err, store.ErrNotFound):
		return Answer{}, conflict("alert_closed", "this urgent message has no alert: it was sent to a muted channel")
	case err != nil:
		return Answer{}, err
	}
	return Answer{Status: m.State, AlertState: a.State}, nil
}

// mayAnswerAlert reports whether who was reached by urgent message m's
// alert (by escalation: the owner and approvers are checked apart).
func (s *Service) mayAnswerAlert(ctx context.Context, m *store.Message, who *store.User) (bool, error) {
	if m.Priority != PriorityUrgent {
		return false, nil
	}
	return s.st.Alerted(ctx, m.ID, who.ID)
}

// Alert returns urgent message id's alert to who, if they may see the
// message; a message without an alert is ErrNotFound.
func (s *Service) Alert(ctx context.Context, who *store.User, id string) (*store.Alert, error) {
	if _, _, err := s.MessageFor(ctx, who, id); err != nil {
		return nil, err
	}
	return s.st.Alert(ctx, id)
}

// Alerts returns the alerts of the urgent messages among msgs, by message
// id: one read for all of them, none when there is no urgent message.
func (s *Service) Alerts(ctx context.Context, msgs []store.Message) (map[string]*store.Alert, error) {
	var ids []string
	for _, m := range msgs {
		if m.Priority == PriorityUrgent {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return s.st.Alerts(ctx, ids)
}

// CancelAlert resolves urgent message id's alert for its channel's owner
// (who): no more repeats or escalation, and the sender's callback says
// so. Anyone else gets ErrNotFound.
func (s *Service) CancelAlert(ctx context.Context, who *store.User, id string) (*store.Alert, error) {
	m, ch, err := s.MessageFor(ctx, who, id)
	if err != nil {
		return nil, err
	}
	if ch.UserID != who.ID {
		return nil, forbidden("only the channel's owner or the sender cancels an alert; acknowledge it instead")
	}
	return s.cancelAlert(ctx, m, who.ID)
}

// CancelAlertBySender resolves the alert of urgent message id of channel
// ch for its sender, who holds the channel's webhook token.
func (s *Service) CancelAlertBySender(ctx context.Context, ch *store.Channel, id string) (*store.Alert, error) {
	m, err := s.st.Message(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && m.ChannelID != ch.ID) {
		return nil, notFound("no message %q in this channel", id)
	}
	if err != nil {
		return nil, err
	}
	return s.cancelAlert(ctx, m, "sender")
}

func (s *Service) cancelAlert(ctx context.Context, m *store.Message, by string) (*store.Alert, error) {
	a, err := s.st.CancelAlert(ctx, m.ID, by, alertNotice)
	switch {
	case errors.Is(err, store.ErrAlertClosed):
		return nil, conflict("alert_closed", "this alert is no longer active: it was acknowledged, cancelled or expired")
	case errors.Is(err, store.ErrNotFound):
		return nil, notFound("message %q has no alert: only an urgent message sent to an unmuted channel has one", m.ID)
	}
	return a, err
}

// alertBatch bounds the alerts one sweep write moves on.
const alertBatch = 256

// SweepAlerts moves on the alerts that are due: repeats, escalations and
// expiries, a batch per write until none is due.
func (s *Service) SweepAlerts(ctx context.Context) (store.AlertSweep, error) {
	var total store.AlertSweep
	for {
		r, err := s.st.SweepAlerts(ctx, s.now(), alertBatch, alertNotice)
		total.Claimed += r.Claimed
		total.Repeated += r.Repeated
		total.Escalated += r.Escalated
		total.Expired += r.Expired
		if err != nil || r.Claimed < alertBatch {
			return total, err
		}
	}
}

// ViaOf is where an answer by who came from: deviceID, one of who's
// devices, when the request names one (another's, or none, is refused);
// else the API key keyID, or a sign-in session.
func (s *Service) ViaOf(ctx context.Context, who *store.User, deviceID, keyID string) (Via, error) {
	switch {
	case deviceID != "":
		if _, err := s.st.Device(ctx, who.ID, deviceID); errors.Is(err, store.ErrNotFound) {
			return Via{}, invalid("device_id %q is not one of your devices", deviceID)
		} else if err != nil {
			return Via{}, err
		}
		return Via{Device: deviceID}, nil
	case keyID != "":
		return Via{Device: keyID}, nil
	}
	return Via{Device: "session"}, nil
}
