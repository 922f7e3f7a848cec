package service

import (
	"errors"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/store"
)

// Limits returns what a user on plan may do and have: its rate limits and
// caps, with the built-in cap wherever the configuration says 0.
func (s *Service) Limits(plan string) config.Plan { return s.opts.Plans.Limits(plan) }

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
