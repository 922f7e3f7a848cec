package service

import (
	"context"

	"github.com/heraldhq/herald/store"
)

// PinChannel pins one of owner's channels, placed last; created is false
// when it already was pinned, which works whatever the count. A new pin
// is refused when owner already has as many as their plan allows.
func (s *Service) PinChannel(ctx context.Context, owner *store.User, channelID string) (p store.Pin, created bool, err error) {
	if channelID == "" {
		return p, false, invalid("channel_id is required")
	}
	max := s.Limits(owner.Plan).MaxPins
	p, created, err = s.st.PinChannelCapped(ctx, owner.ID, channelID, max)
	return p, created, overCap(err, owner.Plan, "pins", "unpin one to pin another")
}

// UnpinChannel unpins userID's channel channelID.
func (s *Service) UnpinChannel(ctx context.Context, userID, channelID string) error {
	return s.st.UnpinChannel(ctx, userID, channelID)
}

// ReorderPins puts userID's pins in the order of channelIDs, which must
// name each pinned channel exactly once (store.ErrInvalidOrder).
func (s *Service) ReorderPins(ctx context.Context, userID string, channelIDs []string) ([]store.Pin, error) {
	return s.st.ReorderPins(ctx, userID, channelIDs)
}
