package service

import (
	"context"
	"errors"
	"time"

	"github.com/heraldhq/herald/store"
)

// ChannelsToRead returns the channels whose webhook tokens an ntfy client
// subscribes to (ntfy's topics), in the order given, each once, when who
// may read every one of them: its owner, or an approver who accepted the
// channel's invitation (who then reads the messages that list them, as
// their live stream does). A token of no channel, or of a channel who may
// not read, is ErrNotFound, as if it did not exist.
func (s *Service) ChannelsToRead(ctx context.Context, who *store.User, tokens []string) ([]*store.Channel, error) {
	out := make([]*store.Channel, 0, len(tokens))
	seen := map[string]bool{}
	for _, token := range tokens {
		ch, _, err := s.st.ChannelByToken(ctx, token)
		if err != nil {
			return nil, err
		}
		if seen[ch.ID] {
			continue
		}
		ok, err := s.mayRead(ctx, ch, who)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, ErrNotFound
		}
		seen[ch.ID] = true
		out = append(out, ch)
	}
	return out, nil
}

// mayRead reports whether who reads ch's messages: its owner, or an
// approver who accepted its invitation.
func (s *Service) mayRead(ctx context.Context, ch *store.Channel, who *store.User) (bool, error) {
	if ch.UserID == who.ID {
		return true, nil
	}
	approvers, err := s.st.ChannelApprovers(ctx, ch.ID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, a := range approvers {
		if a.UserID == who.ID && a.State == store.InviteAccepted {
			return true, nil
		}
	}
	return false, nil
}

// ScheduledCreation returns when message id was sent, when it is one of
// who's messages still waiting for its time: an ntfy subscription shows it
// under its own id before it goes out, and since= that id asks for what
// followed its creation. ok is false for any other message.
func (s *Service) ScheduledCreation(ctx context.Context, who *store.User, id string) (created time.Time, ok bool, err error) {
	m, _, err := s.MessageFor(ctx, who, id)
	if errors.Is(err, ErrNotFound) {
		return time.Time{}, false, nil
	}
	if err != nil || m.DeliverAt == nil {
		return time.Time{}, false, err
	}
	return m.CreatedAt, true, nil
}
