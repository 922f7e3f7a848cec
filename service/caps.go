package service

import (
	"context"
	"errors"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/store"
)

// Limits returns what a user on plan may do and have: its rate limits and
// caps, with the built-in cap wherever the configuration says 0.
func (s *Service) Limits(plan string) config.Plan { return s.opts.Plans.Limits(plan) }

// CreateChannel stores c as a new channel of owner, unless owner already
// has as many channels as their plan allows.
func (s *Service) CreateChannel(ctx context.Context, owner *store.User, c *store.Channel) error {
	c.UserID = owner.ID
	max := s.Limits(owner.Plan).MaxChannels
	return overCap(s.st.CreateChannelCapped(ctx, c, max), owner.Plan, "channels", "delete one to create another")
}

// CreateFolder stores f as a new folder of owner, placed last, unless
// owner already has as many folders as their plan allows.
func (s *Service) CreateFolder(ctx context.Context, owner *store.User, f *store.Folder) error {
	f.UserID = owner.ID
	max := s.Limits(owner.Plan).MaxFolders
	return overCap(s.st.CreateFolderCapped(ctx, f, max), owner.Plan, "folders", "delete one to create another")
}

// PinChannel pins one of owner's channels, placed last; created is false
// when it already was pinned, which works whatever the count. A new pin
// is refused when owner already has as many as their plan allows.
func (s *Service) PinChannel(ctx context.Context, owner *store.User, channelID string) (p store.Pin, created bool, err error) {
	max := s.Limits(owner.Plan).MaxPins
	p, created, err = s.st.PinChannelCapped(ctx, owner.ID, channelID, max)
	return p, created, overCap(err, owner.Plan, "pins", "unpin one to pin another")
}

// RegisterDevice registers d for owner's pushes. A push token owner
// already registered updates its device, whatever the count; a new device
// is refused when owner already has as many as their plan allows.
func (s *Service) RegisterDevice(ctx context.Context, owner *store.User, d *store.Device) error {
	d.UserID = owner.ID
	max := s.Limits(owner.Plan).MaxDevices
	return overCap(s.st.RegisterDeviceCapped(ctx, d, max), owner.Plan, "devices", "remove one to register another")
}

// overCap turns the store's refusal of a create over a cap into the
// user's terms: how many they have, that it is their plan's limit, and
// what to do. Any other error passes as it is.
func overCap(err error, plan, things, todo string) error {
	var le *store.LimitError
	if !errors.As(err, &le) {
		return err
	}
	return invalid("you have %d %s, the limit of your plan (%s) is %d; %s",
		le.Have, things, config.EffectivePlan(plan), le.Max, todo)
}
