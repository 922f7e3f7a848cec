package service

import (
	"context"
	"errors"

	"github.com/heraldhq/herald/store"
)

// DeleteSequence deletes every message of ch's sequence seq: each is
// removed from lists and streams (a message.deleted event). It returns how
// many there were; none is no error, as ntfy answers alike.
func (s *Service) DeleteSequence(ctx context.Context, ch *store.Channel, seq string) (int, error) {
	if !ValidSequenceID(seq) {
		return 0, invalid("sequence id must be 1 to %d letters, digits, - or _", MaxSequenceID)
	}
	return s.st.DeleteSequence(ctx, ch.ID, seq)
}

// ClearSequence marks ch's sequence seq read and dismissed: a
// message.cleared event for its newest delivered message, which the web app
// and ntfy subscribers take to close its notification. A sequence with no
// delivered message has nothing to clear, and is no error.
func (s *Service) ClearSequence(ctx context.Context, ch *store.Channel, seq string) error {
	if !ValidSequenceID(seq) {
		return invalid("sequence id must be 1 to %d letters, digits, - or _", MaxSequenceID)
	}
	_, err := s.st.ClearSequence(ctx, ch.ID, seq)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}
