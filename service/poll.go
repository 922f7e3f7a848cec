package service

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/heraldhq/herald/store"
)

// PollAnswer is what a sender's poll of a message reads.
type PollAnswer struct {
	// State is the message's polling state: pending, submitted,
	// already_read or expired.
	State string
	// Unanswerable: the message is pending and nothing can answer it (it
	// has only links), so a sender waiting for it should stop.
	Unanswerable bool
	// SubmittedAt and Result are the answer, with StateSubmitted only.
	SubmittedAt time.Time
	Result      json.RawMessage
	// Approval is a resolved approval's outcome beside its result; nil
	// for a plain answer.
	Approval *StoredOutcome
	// Alert is an urgent message's alert; nil on any other.
	Alert *store.Alert
}

// Poll reads the answer to message messageID of channel ch, with nothing
// but the channel's webhook token. An answer is read once: the first poll
// gets it, later ones read already_read, and one not polled within the
// response TTL reads expired.
func (s *Service) Poll(ctx context.Context, ch *store.Channel, messageID string) (PollAnswer, error) {
	p, err := s.st.ReadResponse(ctx, ch.ID, messageID, s.ExpireBefore())
	if errors.Is(err, store.ErrNotFound) {
		return PollAnswer{}, notFound("no message %q in this channel", messageID)
	}
	if err != nil {
		return PollAnswer{}, err
	}
	out, err := pollAnswer(p)
	if err != nil || p.Priority != PriorityUrgent {
		return out, err
	}
	out.Alert, err = s.st.Alert(ctx, messageID)
	if errors.Is(err, store.ErrNotFound) {
		return out, nil // sent to a muted channel: no alert
	}
	return out, err
}

// pollAnswer is what the store's read of a poll says to the sender.
func pollAnswer(p store.Poll) (PollAnswer, error) {
	out := PollAnswer{State: p.State}
	switch p.State {
	case store.StatePending:
		out.Unanswerable = !store.Answerable(p.Actions, p.Approval)
	case store.StateSubmitted:
		stored, err := DecodeStoredResponse(p.Response)
		if err != nil {
			return PollAnswer{}, err
		}
		out.SubmittedAt, out.Result, out.Approval = p.SubmittedAt, stored.Result, stored.Approval
	}
	return out, nil
}
