package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/store"
)

// Send stores a message, validated by CheckSend, in ch: with its stream
// event and push job, in one commit. A message to an approval channel sent
// without actions gets the Approve and Reject buttons. It returns once the
// message is durable; a channel deleted meanwhile is ErrNotFound. A
// message whose "attachment" names a file by URL has it fetched first
// (sendFetched).
func (s *Service) Send(ctx context.Context, ch *store.Channel, p *SendPayload) (*store.Message, error) {
	if p.Attachment != nil {
		return s.sendFetched(ctx, ch, p)
	}
	m, err := s.prepareSend(ch, p)
	if err != nil {
		return nil, err
	}
	// A plain send has no extras: EncodeExtras marshals nothing then.
	if m.Extras, err = store.EncodeExtras(&p.Extras); err != nil {
		return nil, err
	}
	if err := s.st.CreateMessage(ctx, m); err != nil {
		return nil, err
	}
	return m, nil
}

// prepareSend checks what a send asks of the network and the clock, and
// returns the message to store in ch, without its extras.
func (s *Service) prepareSend(ch *store.Channel, p *SendPayload) (*store.Message, error) {
	if p.CallbackURL != nil {
		if err := s.checkCallbackHost(*p.CallbackURL); err != nil {
			return nil, err
		}
	}
	if err := checkDelivery(p, s.now()); err != nil {
		return nil, err
	}
	if p.NtfyPriority == 5 && ch.Urgent != nil {
		compatUrgent(p)
	}
	for i, a := range p.Actions {
		if a.Type == "http" {
			if err := s.checkHost(fmt.Sprintf("actions[%d].value", i), a.Value); err != nil {
				return nil, err
			}
		}
	}
	actions := p.Actions
	if ch.Approval != nil && len(actions) == 0 {
		actions = ApprovalActions
	}
	muted := ch.Muted(s.now())
	var alert *store.NewAlert
	if p.Priority == PriorityUrgent {
		var err error
		if alert, err = urgentAlert(ch, p, muted || p.NoPush || p.Ephemeral); err != nil {
			return nil, err
		}
		actions = withAckButton(actions)
	}
	actionsJSON := []byte("[]")
	if len(actions) > 0 {
		var err error
		if actionsJSON, err = json.Marshal(actions); err != nil {
			return nil, err
		}
	}
	m := &store.Message{
		ChannelID: ch.ID, Title: strings.TrimSpace(*p.Title), Body: p.Body, Priority: p.Priority,
		Actions: actionsJSON, CallbackURL: p.CallbackURL, Muted: muted, Approval: ch.Approval,
		SequenceID: p.SequenceID, Ephemeral: p.Ephemeral, NoPush: p.NoPush, Alert: alert,
	}
	if p.DeliverAt != nil {
		at := p.DeliverAt.UTC()
		m.DeliverAt = &at
	}
	return m, nil
}

// checkCallbackHost refuses a callback_url that the delivery queue is sure
// never to reach: its host is an address the callback policy blocks, or
// localhost while loopback is blocked. Accepted, it would only be retried
// until it failed. A name that resolves to a blocked address is found out
// at dial time, and the delivery log says why.
func (s *Service) checkCallbackHost(raw string) error {
	return s.checkHost("callback_url", raw)
}

// checkHost is checkCallbackHost for the URL of field: a callback_url, or
// an http action's, which the delivery queue calls under the same policy.
func (s *Service) checkHost(field, raw string) error {
	if s.opts.Callbacks == nil {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil // CheckSend has refused it already
	}
	var be *netguard.BlockedError
	if errors.As(s.opts.Callbacks.CheckHost(u.Hostname()), &be) {
		return invalid("%s is refused: %s", field, be.Explain("callbacks"))
	}
	return nil
}
