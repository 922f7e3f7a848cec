package service

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/heraldhq/herald/store"
)

// Send stores a message, validated by CheckSend, in ch: with its stream
// event and push job, in one commit. A message to an approval channel sent
// without actions gets the Approve and Reject buttons. It returns once the
// message is durable; a channel deleted meanwhile is ErrNotFound.
func (s *Service) Send(ctx context.Context, ch *store.Channel, p *SendPayload) (*store.Message, error) {
	actions := p.Actions
	if ch.Approval != nil && len(actions) == 0 {
		actions = ApprovalActions
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
		Actions: actionsJSON, CallbackURL: p.CallbackURL, Muted: ch.Muted(s.now()), Approval: ch.Approval,
	}
	if err := s.st.CreateMessage(ctx, m); err != nil {
		return nil, err
	}
	return m, nil
}
