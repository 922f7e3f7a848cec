package service

import (
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/heraldhq/herald/store"
)

// A channel's rules: what its name, icon and colour may be, the times it
// may be muted until, and what an approval rule must say. The owner's
// changes to a channel go through here.

// maxName bounds a channel's or folder's name and a channel's icon, in
// characters.
const maxName = 100

// Bounds of an approval rule. MaxApprovers keeps the approver lookup
// within SQLite's limit on query parameters (an unbounded list was a
// 500), and MaxApprovalWindow keeps the deadline far from overflowing
// time.Duration.
const (
	MaxApprovers      = 100
	MaxApprovalWindow = 365 * 24 * 60 * 60 // one year, in seconds
)

// The range of times a channel may be muted until: what is stored must
// come back as a valid RFC 3339 time, and an offset can push 9999-12-31
// into the year 10000.
var (
	minTime = time.Unix(0, 0).UTC()
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC)
)

var colorRe = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)

// checkName checks a required name (of a channel, a folder): not blank,
// at most maxName characters.
func checkName(field, name string) error {
	if strings.TrimSpace(name) == "" {
		return invalid("%s is required", field)
	}
	if chars(name) > maxName {
		return invalid("%s is longer than %d characters", field, maxName)
	}
	return nil
}

func checkIcon(icon string) error {
	if chars(icon) > maxName {
		return invalid("icon is longer than %d characters", maxName)
	}
	return nil
}

func checkColor(color string) error {
	if color != "" && !colorRe.MatchString(color) {
		return invalid("color must be a hex colour like #1E90FF")
	}
	return nil
}

// checkTime checks that t, a time a request sets, is one Herald can store
// and show again.
func checkTime(field string, t time.Time) error {
	if t.Before(minTime) || t.After(maxTime) {
		return invalid("%s must be between %s and %s", field, FormatTime(minTime), FormatTime(maxTime))
	}
	return nil
}

// checkApproval checks an approval rule and puts its approvers in the form
// the rule keeps: distinct, well-formed approvers (user ids or email
// addresses, at most MaxApprovers), 1 <= required_count <= len(approvers)
// and 0 < window_seconds <= MaxApprovalWindow. No account is looked up:
// each approver is an invitation (NormalizeApprovers).
func checkApproval(rule *store.ApprovalRule) error {
	if len(rule.Approvers) == 0 {
		return invalid("approval.approvers must list at least one user (an id or an email address)")
	}
	if len(rule.Approvers) > MaxApprovers {
		return invalid("approval.approvers lists more than %d users", MaxApprovers)
	}
	if rule.RequiredCount < 1 || rule.RequiredCount > len(rule.Approvers) {
		return invalid("approval.required_count must be between 1 and the number of approvers (%d)", len(rule.Approvers))
	}
	if rule.WindowSeconds <= 0 || rule.WindowSeconds > MaxApprovalWindow {
		return invalid("approval.window_seconds must be between 1 and %d (one year)", MaxApprovalWindow)
	}
	entries, err := NormalizeApprovers(rule.Approvers)
	if err != nil {
		return err
	}
	rule.Approvers = entries
	return nil
}

// CreateChannel checks c's name, icon and colour and stores c as a new
// channel of owner (its name trimmed, its colour in capitals), unless
// owner already has as many channels as their plan allows.
func (s *Service) CreateChannel(ctx context.Context, owner *store.User, c *store.Channel) error {
	for _, err := range []error{checkName("name", c.Name), checkIcon(c.Icon), checkColor(c.Color)} {
		if err != nil {
			return err
		}
	}
	c.Name, c.Color = strings.TrimSpace(c.Name), strings.ToUpper(c.Color)
	c.UserID = owner.ID
	max := s.Limits(owner.Plan).MaxChannels
	return overCap(s.st.CreateChannelCapped(ctx, c, max), owner.Plan, "channels", "delete one to create another")
}

// UpdateChannel checks p and applies it to userID's channel id: a name is
// trimmed, a colour put in capitals, an approval rule's approvers
// normalized. The first field that breaks a rule is refused, and nothing
// changes.
func (s *Service) UpdateChannel(ctx context.Context, userID, id string, p store.ChannelPatch) (*store.Channel, error) {
	if err := checkPatch(&p); err != nil {
		return nil, err
	}
	return s.st.UpdateChannel(ctx, userID, id, p)
}

// checkPatch checks a channel patch field by field, in the order of the
// PATCH body's fields, and normalizes what it keeps.
func checkPatch(p *store.ChannelPatch) error {
	if p.Name != nil {
		if err := checkName("name", *p.Name); err != nil {
			return err
		}
		n := strings.TrimSpace(*p.Name)
		p.Name = &n
	}
	if p.Icon != nil {
		if err := checkIcon(*p.Icon); err != nil {
			return err
		}
	}
	if p.Color != nil {
		if err := checkColor(*p.Color); err != nil {
			return err
		}
		c := strings.ToUpper(*p.Color)
		p.Color = &c
	}
	if t := p.MutedUntil.Value; t != nil {
		if err := checkTime("muted_until", *t); err != nil {
			return err
		}
	}
	if rule := p.Approval.Value; rule != nil {
		// A copy: the caller's rule keeps its entries as they were typed.
		r := *rule
		if err := checkApproval(&r); err != nil {
			return err
		}
		p.Approval.Value = &r
	}
	if p.SourceSecret != nil {
		if err := CheckSourceSecret(*p.SourceSecret); err != nil {
			return err
		}
	}
	if p.Template.Value != nil {
		if err := CheckTemplate(p.Template.Value); err != nil {
			return err
		}
	}
	if pol := p.Urgent.Value; pol != nil {
		// A copy, as for the approval rule.
		c := *pol
		if err := checkUrgentPolicy(&c); err != nil {
			return err
		}
		p.Urgent.Value = &c
	}
	return nil
}

// DeleteChannel deletes userID's channel id with its messages, pins and
// queued deliveries.
func (s *Service) DeleteChannel(ctx context.Context, userID, id string) error {
	return s.st.DeleteChannel(ctx, userID, id)
}

// RegenerateToken gives userID's channel id a new webhook token; the old
// one stops working at once.
func (s *Service) RegenerateToken(ctx context.Context, userID, id string) (*store.Channel, error) {
	return s.st.RegenerateToken(ctx, userID, id)
}

// RotateSecret gives userID's channel id a new callback signing secret, in
// force at once.
func (s *Service) RotateSecret(ctx context.Context, userID, id string) (*store.Channel, error) {
	return s.st.RotateSecret(ctx, userID, id)
}
