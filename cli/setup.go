package cli

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/store"
)

// addUserPlan is the plan of a user made with `herald user add` without
// --plan. The operator who types the command trusts that account, and a
// homelab's own scripts should not meet the Free plan's 5 sends a minute by
// surprise; sign-ups through a provider get default_plan, so the Free and
// Pro limits still hold for everyone else.
const addUserPlan = config.PlanPro

// planSummary says what a plan allows, for the log and the CLI.
func planSummary(cfg config.Config, plan string) string {
	l := cfg.Plans.Limits(plan)
	return fmt.Sprintf("%s: %d sends a minute per channel, %d requests a minute per endpoint", plan, l.SendPerMinute, l.APIPerMinute)
}

// logSetup tells the operator, at start, what a newcomer gets wrong most:
// a base_url other hosts cannot use, which plan new users get, that no one
// can sign in until a user exists (the first is the administrator), and a
// server whose users include no administrator.
func (a *app) logSetup(ctx context.Context, log *slog.Logger, cfg config.Config, st *store.Store) {
	if cfg.UnreachableBaseURL() {
		log.Warn("base_url names this machine only, but listen accepts other hosts: webhook_url values will not work from elsewhere; set base_url (HERALD_BASE_URL) to the address they use",
			"base_url", cfg.BaseURL, "listen", cfg.Listen)
	}
	log.Info("plans", "sign-ups get default_plan", planSummary(cfg, cfg.DefaultPlan),
		"herald user add gives", planSummary(cfg, addUserPlan)+" (or --plan)")
	has, err := st.HasUsers(ctx)
	if err != nil {
		log.Error("count users", "err", err)
		return
	}
	if !has {
		log.Warn("no users yet: create the first with `herald user add EMAIL --password-stdin` (reads the password from standard input); the first user is the administrator. Then sign in at " + cfg.BaseURL + "/")
		return
	}
	admins, err := st.HasAdmins(ctx)
	if err != nil {
		log.Error("count administrators", "err", err)
		return
	}
	if !admins {
		log.Warn("no user is an administrator, so nobody sees the admin pages: make one with `herald user set-admin EMAIL`")
	}
}
