package service

import (
	"context"
	"errors"
	"time"

	"github.com/heraldhq/herald/store"
)

// Urgent messages (docs/sending.md, "Urgent messages"): pushed loudly, and
// again every repeat interval until someone acknowledges them, for at most
// the expiry; escalated to the next person of the channel's escalation
// list every escalate_after; the sender learns who acknowledged, or that
// the alert was cancelled or expired.

// Escalations returns the invitations of a channel's escalation list, in
// the list's order, to the channel's owner only: anyone else gets
// ErrNotFound. An entry shows who is behind it only once they accepted.
func (s *Service) Escalations(ctx context.Context, userID, channelID string) ([]store.ChannelApprover, error) {
	if _, err := s.st.Channel(ctx, userID, channelID); err != nil {
		return nil, err
	}
	return s.st.ChannelEscalations(ctx, channelID)
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
		return Answer{}, conflict("alert_closed", "this urgent message has no alert: it was not pushed (its channel was muted), so nothing repeats")
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
