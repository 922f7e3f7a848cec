package service

import (
	"context"
	"errors"
	"strings"

	"github.com/heraldhq/herald/store"
)

// ListMessages lists the messages who may read, newest first, as q asks:
// who's own, and those of channels whose approval rule names them. q's
// reader, user and expiry are set here. A channel_id keeps one channel:
// its owner sees all its messages; an approver, those whose rule names
// them (as MessageFor decides for one message); anyone else gets
// ErrNotFound, as for a channel that does not exist.
func (s *Service) ListMessages(ctx context.Context, who *store.User, q store.MessageQuery) (*store.MessagePage, error) {
	q.UserID = who.ID
	q.ReaderEmail = strings.ToLower(strings.TrimSpace(who.Email))
	q.Expired = s.ExpireBefore()
	if q.ChannelID != "" {
		ch, err := s.st.ChannelByID(ctx, q.ChannelID)
		if err != nil {
			return nil, err
		}
		if ch.UserID != who.ID {
			q.Approver = who.ID
			ok, err := s.st.ApproverOf(ctx, who.ID, ch.ID)
			if err != nil {
				return nil, err
			}
			if !ok && !IsApprover(ch.Approval, who) {
				return nil, ErrNotFound
			}
		}
	}
	return s.st.ListMessages(ctx, q)
}

// DeleteMessage deletes message id from one of who's channels. An
// approver who may see it is told that only the owner may delete it;
// anyone else gets ErrNotFound.
func (s *Service) DeleteMessage(ctx context.Context, who *store.User, id string) error {
	err := s.st.DeleteMessage(ctx, who.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		if _, _, aerr := s.MessageFor(ctx, who, id); aerr == nil {
			return forbidden("only the channel's owner can delete its messages")
		}
	}
	return err
}

// ownMessage returns message id when who owns its channel; an approver
// who may see it is refused with "only the channel's owner can " + what.
func (s *Service) ownMessage(ctx context.Context, who *store.User, id, what string) (*store.Message, error) {
	m, ch, err := s.MessageFor(ctx, who, id)
	if err != nil {
		return nil, err
	}
	if ch.UserID != who.ID {
		return nil, forbidden("only the channel's owner can %s", what)
	}
	return m, nil
}

// DeliveryLog returns the callback delivery of message id and every
// attempt, oldest first, to the owner of its channel.
func (s *Service) DeliveryLog(ctx context.Context, who *store.User, id string) (*store.DeliveryStatus, []store.Attempt, error) {
	m, err := s.ownMessage(ctx, who, id, "read its delivery log")
	if err != nil {
		return nil, nil, err
	}
	return s.st.DeliveryLog(ctx, m.ID)
}

// Redeliver queues the callback of message id again with a fresh set of
// attempts, for the owner of its channel, once it is dead-lettered or
// delivered; it returns the delivery as it now stands.
func (s *Service) Redeliver(ctx context.Context, who *store.User, id string) (*store.DeliveryStatus, error) {
	m, err := s.ownMessage(ctx, who, id, "redeliver its callbacks")
	if err != nil {
		return nil, err
	}
	err = s.st.Redeliver(ctx, m.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, notFound("message %s has no callback delivery", m.ID)
	case errors.Is(err, store.ErrDeliveryPending):
		return nil, invalid("the delivery is still pending; it will be retried on its schedule")
	case err != nil:
		return nil, err
	}
	m, err = s.st.Message(ctx, m.ID)
	if err != nil {
		return nil, err
	}
	return m.Delivery, nil
}
