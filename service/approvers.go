package service

import (
	"context"
	"strings"

	"github.com/heraldhq/herald/store"
)

// ResolveApprovers turns the approvers of a rule, each a user id or an
// email address, into user ids, in the order given. An entry that names no
// user gets the same refusal whatever the reason (no such address, no such
// id, a malformed entry), so that the answer says no more about other
// accounts than a successful rule would.
func (s *Service) ResolveApprovers(ctx context.Context, entries []string) ([]string, error) {
	var ids, emails []string
	for _, e := range entries {
		if strings.Contains(e, "@") {
			emails = append(emails, e)
		} else {
			ids = append(ids, e)
		}
	}
	byID, err := s.st.UsersByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	byEmail, err := s.st.UsersByEmails(ctx, emails)
	if err != nil {
		return nil, err
	}
	found := map[string]string{}
	for _, u := range byID {
		found[u.ID] = u.ID
	}
	for _, u := range byEmail {
		found[strings.ToLower(u.Email)] = u.ID
	}
	out := make([]string, len(entries))
	seen := map[string]bool{}
	for i, e := range entries {
		key := e
		if strings.Contains(e, "@") {
			key = strings.ToLower(strings.TrimSpace(e))
		}
		id, ok := found[key]
		if !ok {
			return nil, invalid("approval.approvers: %q is not a user who can approve", e)
		}
		if seen[id] {
			return nil, invalid("approval.approvers lists %q twice", e)
		}
		seen[id] = true
		out[i] = id
	}
	return out, nil
}

// Approver is a user named in a channel's approval rule, as its owner sees
// them in the rule editor.
type Approver struct {
	ID, Email, Name string
}

// Approvers returns the approvers of a channel's rule, in the rule's order,
// to the channel's owner only: anyone else gets ErrNotFound. A rule without
// approvers, or a channel without a rule, gives none.
func (s *Service) Approvers(ctx context.Context, userID, channelID string) ([]Approver, error) {
	ch, err := s.st.Channel(ctx, userID, channelID)
	if err != nil {
		return nil, err
	}
	if ch.Approval == nil {
		return []Approver{}, nil
	}
	users, err := s.st.UsersByIDs(ctx, ch.Approval.Approvers)
	if err != nil {
		return nil, err
	}
	byID := map[string]store.User{}
	for _, u := range users {
		byID[u.ID] = u
	}
	out := make([]Approver, 0, len(ch.Approval.Approvers))
	for _, id := range ch.Approval.Approvers {
		if u, ok := byID[id]; ok {
			out = append(out, Approver{ID: u.ID, Email: u.Email, Name: u.Name})
		}
	}
	return out, nil
}
