package service

import (
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/heraldhq/herald/store"
)

// Approvers by consent. A rule names its approvers by user id or email
// address; each entry is an invitation that the person it names accepts or
// declines. Nothing is looked up when a rule is set: the answer is the same
// whatever account is, or is not, behind an entry, so that a rule tells its
// owner nothing about other accounts. Until an approver accepts, nothing of
// the channel is pushed to them, put on their live stream or listed for
// them; they may still open a message of it by its id and vote.

// userIDLen is the length of a user id: "usr_" and 24 base62 characters
// (store.NewID).
const userIDLen = 4 + 24

// NormalizeApprovers checks the entries of a rule and returns them as the
// rule keeps them: a user id as given, an email address trimmed and
// lower-cased. A malformed or repeated entry is refused with words that do
// not depend on any account.
func NormalizeApprovers(entries []string) ([]string, error) {
	return normalizeEntries("approval.approvers", entries)
}

// normalizeEntries is NormalizeApprovers for the list of people field
// (approvers, an escalation list): each entry an invitation.
func normalizeEntries(field string, entries []string) ([]string, error) {
	out := make([]string, len(entries))
	for i, e := range entries {
		n, ok := normalizeEntry(e)
		if !ok {
			return nil, invalid("%s: %q is neither a user id (usr_...) nor an email address", field, e)
		}
		if slices.Contains(out[:i], n) {
			return nil, invalid("%s lists %q twice", field, e)
		}
		out[i] = n
	}
	return out, nil
}

func normalizeEntry(e string) (string, bool) {
	e = strings.TrimSpace(e)
	if e == "" || utf8.RuneCountInString(e) > 254 || strings.IndexFunc(e, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}) >= 0 {
		return "", false
	}
	if at := strings.LastIndex(e, "@"); at >= 0 {
		if at == 0 || at == len(e)-1 {
			return "", false
		}
		return strings.ToLower(e), true
	}
	if len(e) != userIDLen || !strings.HasPrefix(e, "usr_") || strings.IndexFunc(e[4:], func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z')
	}) >= 0 {
		return "", false
	}
	return e, true
}

// IsApprover reports whether rule names the user, by id or by email
// address. Whether they may act on it also depends on their invitation
// (see MessageFor).
func IsApprover(rule *store.ApprovalRule, u *store.User) bool {
	return rule != nil && (slices.Contains(rule.Approvers, u.ID) ||
		slices.Contains(rule.Approvers, strings.ToLower(strings.TrimSpace(u.Email))))
}

// mayApprove reports whether who approves message m of channel channelID:
// its own rule names them, by id or by a verified address, and they have
// not declined the channel's invitation.
func (s *Service) mayApprove(ctx context.Context, m *store.Message, channelID string, who *store.User) (bool, error) {
	if m.Approval == nil {
		return false, nil
	}
	byID := slices.Contains(m.Approval.Approvers, who.ID)
	if !byID && !IsApprover(m.Approval, who) {
		return false, nil
	}
	st, err := s.st.ApproverStanding(ctx, channelID, who.ID)
	if err != nil {
		return false, err
	}
	return !st.Declined && (byID || st.EmailVerified), nil
}

// Approvers returns the invitations of a channel's rule, in the rule's
// order, to the channel's owner only: anyone else gets ErrNotFound. An
// entry shows who is behind it only once they accepted.
func (s *Service) Approvers(ctx context.Context, userID, channelID string) ([]store.ChannelApprover, error) {
	if _, err := s.st.Channel(ctx, userID, channelID); err != nil {
		return nil, err
	}
	return s.st.ChannelApprovers(ctx, channelID)
}

// Invitations returns the approval invitations addressed to who, newest
// first.
func (s *Service) Invitations(ctx context.Context, who *store.User) ([]store.Invitation, error) {
	return s.st.Invitations(ctx, who.ID, who.Email)
}

// AnswerInvitation accepts or declines an invitation addressed to who (and
// any other of the same channel addressed to them). Someone else's
// invitation is ErrNotFound. Accepting or declining again is allowed: a
// decline withdraws an earlier consent.
func (s *Service) AnswerInvitation(ctx context.Context, who *store.User, id string, accept bool) (*store.Invitation, error) {
	return s.st.AnswerInvitation(ctx, who.ID, who.Email, id, accept)
}
