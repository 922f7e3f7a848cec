package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Where an approval invitation stands (channel_approvers.state).
const (
	InviteInvited  = "invited"
	InviteAccepted = "accepted"
	InviteDeclined = "declined"
)

// ChannelApprover is one entry of a channel's approval rule as its owner
// sees it: the entry as typed (a user id or a lower-cased email address)
// and its state. UserID, Email and Name are set once the person accepted,
// and only then: before, nothing says whether an account is behind it.
type ChannelApprover struct {
	Entry, State        string
	UserID, Email, Name string
}

// Invitation is an invitation as the person it names sees it:
// the channel, its owner (who revealed themselves by naming them), the
// entry that names them and where it stands.
type Invitation struct {
	ID                    string
	ChannelID, Channel    string
	OwnerName, OwnerEmail string
	Entry, State          string
	CreatedAt, UpdatedAt  time.Time
	Role                  string // RoleApprover or RoleEscalation
}

// Roles of an invitation: which of a channel's lists names the person.
const (
	// RoleApprover: the channel's approval rule; they vote.
	RoleApprover = "approver"
	// RoleEscalation: the escalation list of the channel's urgent policy;
	// an urgent message nobody acknowledges reaches them in turn.
	RoleEscalation = "escalation"
)

// inviteList is a table of invitations, one per entry of a channel's list
// of people: the approval rule's (channel_approvers) or the urgent
// policy's escalation list (channel_escalations). Both work alike, each
// answered on its own: consenting to approve is not consenting to be
// woken.
type inviteList struct {
	table, prefix, role string
}

var (
	approverList   = inviteList{table: "channel_approvers", prefix: "apv_", role: RoleApprover}
	escalationList = inviteList{table: "channel_escalations", prefix: "esc_", role: RoleEscalation}
	inviteLists    = []inviteList{approverList, escalationList}
)

// listOf is the list an invitation id belongs to, by its prefix.
func listOf(id string) (inviteList, bool) {
	for _, l := range inviteLists {
		if strings.HasPrefix(id, l.prefix) {
			return l, true
		}
	}
	return inviteList{}, false
}

// inviteeMatch is the condition that invitation a is addressed to the user
// ?1 whose lower-cased email is ?2: answered by them, or unanswered and
// naming their id or their verified address. Each term has an index (the
// user, the entry), so that a user's invitations are found without reading
// everyone's.
const inviteeMatch = `(a.user_id = ?1 OR (a.entry = ?1 AND a.user_id IS NULL) OR
	(a.entry = ?2 AND a.user_id IS NULL AND EXISTS (SELECT 1 FROM users v WHERE v.id = ?1 AND v.email_verified = 1)))`

// syncApprovers makes channel c's approver invitations follow its rule,
// inside tx (syncInvitations).
func (s *Store) syncApprovers(tx *writeTx, c *Channel, now time.Time) error {
	var entries []string
	if c.Approval != nil {
		entries = c.Approval.Approvers
	}
	return s.syncInvitations(tx, approverList, c, entries, now)
}

// syncEscalations makes channel c's escalation invitations follow its
// urgent policy, inside tx (syncInvitations).
func (s *Store) syncEscalations(tx *writeTx, c *Channel, now time.Time) error {
	var entries []string
	if c.Urgent != nil {
		entries = c.Urgent.Escalation
	}
	return s.syncInvitations(tx, escalationList, c, entries, now)
}

// syncInvitations makes channel c's invitations of list follow entries,
// inside tx: an entry no longer named loses its invitation, a new entry is
// invited, and an entry kept keeps its state. The owner naming themselves
// consents by doing so.
func (s *Store) syncInvitations(tx *writeTx, list inviteList, c *Channel, entries []string, now time.Time) error {
	rows, err := tx.Query("SELECT entry FROM "+list.table+" WHERE channel_id = ?", c.ID)
	if err != nil {
		return err
	}
	var gone []string
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			rows.Close()
			return err
		}
		if !slices.Contains(entries, e) {
			gone = append(gone, e)
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, e := range gone {
		if _, err := tx.Exec("DELETE FROM "+list.table+" WHERE channel_id = ? AND entry = ?", c.ID, e); err != nil {
			return err
		}
	}
	for i, e := range entries {
		if _, err := tx.Exec(`INSERT INTO `+list.table+` (id, channel_id, position, entry, user_id, state, created_at, updated_at)
			VALUES (?, ?, CAST(? AS BIGINT), ?, NULL, 'invited', CAST(? AS BIGINT), CAST(? AS BIGINT))
			ON CONFLICT (channel_id, entry) DO UPDATE SET position = excluded.position`,
			NewID(list.prefix), c.ID, i, e, ms(now), ms(now)); err != nil {
			return err
		}
	}
	if len(entries) == 0 {
		return nil
	}
	var email string
	if err := tx.QueryRow("SELECT email FROM users WHERE id = ?", c.UserID).Scan(&email); err != nil {
		return err
	}
	_, err = tx.Exec(`UPDATE `+list.table+` SET state = 'accepted', user_id = ?1, updated_at = CAST(?2 AS BIGINT)
		WHERE channel_id = ?3 AND user_id IS NULL AND (entry = ?1 OR entry = ?4)`,
		c.UserID, ms(now), c.ID, strings.ToLower(email))
	return err
}

// ChannelApprovers returns the invitations of a channel's rule in the
// rule's order. The caller has checked that the channel is the user's.
func (s *Store) ChannelApprovers(ctx context.Context, channelID string) ([]ChannelApprover, error) {
	return s.channelInvitees(ctx, approverList, channelID)
}

// ChannelEscalations returns the invitations of a channel's escalation
// list in the list's order. The caller has checked that the channel is
// the user's.
func (s *Store) ChannelEscalations(ctx context.Context, channelID string) ([]ChannelApprover, error) {
	return s.channelInvitees(ctx, escalationList, channelID)
}

func (s *Store) channelInvitees(ctx context.Context, list inviteList, channelID string) ([]ChannelApprover, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT a.entry, a.state, COALESCE(u.id, ''), COALESCE(u.email, ''), COALESCE(u.name, '')
		FROM `+list.table+` a LEFT JOIN users u ON u.id = a.user_id AND a.state = 'accepted'
		WHERE a.channel_id = ? ORDER BY a.position`, channelID)
	if err != nil {
		return nil, fmt.Errorf("store: %s of %s: %w", list.role, channelID, err)
	}
	defer rows.Close()
	out := []ChannelApprover{}
	for rows.Next() {
		var a ChannelApprover
		if err := rows.Scan(&a.Entry, &a.State, &a.UserID, &a.Email, &a.Name); err != nil {
			return nil, fmt.Errorf("store: %s of %s: %w", list.role, channelID, err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// invitationCols reads an invitation of list (a) with its channel (c) and
// the channel's owner (o).
func invitationCols(list inviteList) string {
	return `a.id, a.channel_id, c.name, o.name, o.email, a.entry, a.state, a.created_at, a.updated_at, '` + list.role + `'
	FROM ` + list.table + ` a JOIN channels c ON c.id = a.channel_id JOIN users o ON o.id = c.user_id`
}

func scanInvitation(row scanner) (*Invitation, error) {
	var in Invitation
	var created, updated int64
	if err := row.Scan(&in.ID, &in.ChannelID, &in.Channel, &in.OwnerName, &in.OwnerEmail, &in.Entry, &in.State,
		&created, &updated, &in.Role); err != nil {
		return nil, err
	}
	in.CreatedAt, in.UpdatedAt = fromMS(created), fromMS(updated)
	return &in, nil
}

// Invitations returns the invitations addressed to the user userID whose
// email is email, in other users' channels, of every role, newest first.
func (s *Store) Invitations(ctx context.Context, userID, email string) ([]Invitation, error) {
	var q strings.Builder
	for i, l := range inviteLists {
		if i > 0 {
			q.WriteString(" UNION ALL ")
		}
		q.WriteString("SELECT " + invitationCols(l) + " WHERE " + inviteeMatch + " AND c.user_id <> ?1")
	}
	rows, err := s.read.QueryContext(ctx, q.String()+" ORDER BY 8 DESC, 1",
		userID, strings.ToLower(email))
	if err != nil {
		return nil, fmt.Errorf("store: invitations: %w", err)
	}
	defer rows.Close()
	out := []Invitation{}
	for rows.Next() {
		in, err := scanInvitation(rows)
		if err != nil {
			return nil, fmt.Errorf("store: invitations: %w", err)
		}
		out = append(out, *in)
	}
	return out, rows.Err()
}

// AnswerInvitation accepts or declines invitation id for the user userID
// whose email is email, with every other invitation of the same channel
// and role addressed to them; someone else's invitation is ErrNotFound.
// Accepting to approve lists for them the channel's messages whose own
// rule names them; declining takes the channel's messages off their list
// (for an escalation contact: those that reached them by escalation).
func (s *Store) AnswerInvitation(ctx context.Context, userID, email, id string, accept bool) (*Invitation, error) {
	state := InviteDeclined
	if accept {
		state = InviteAccepted
	}
	list, ok := listOf(id)
	if !ok {
		return nil, fmt.Errorf("store: answer invitation %s: %w", id, ErrNotFound)
	}
	var out *Invitation
	err := s.update(ctx, func(tx *writeTx) error {
		var channelID string
		err := tx.QueryRow(`SELECT a.channel_id FROM `+list.table+` a JOIN channels c ON c.id = a.channel_id
			WHERE a.id = ?3 AND c.user_id <> ?1 AND `+inviteeMatch, userID, strings.ToLower(email), id).Scan(&channelID)
		if err != nil {
			return notFound(err)
		}
		if _, err := tx.Exec(`UPDATE `+list.table+` AS a SET state = ?3, user_id = ?1, updated_at = CAST(?4 AS BIGINT)
			WHERE a.channel_id = ?5 AND `+inviteeMatch, userID, strings.ToLower(email), state, ms(s.now()), channelID); err != nil {
			return err
		}
		switch {
		case list == escalationList && !accept:
			err = s.forgetEscalated(tx, userID, channelID)
		case list == escalationList:
			// Alerts already running reach them at their next level.
		case accept:
			_, err = tx.Exec(`INSERT INTO message_approvers (user_id, channel_id, position, message_id)
				SELECT DISTINCT CAST(?1 AS TEXT), m.channel_id, m.rowid, m.id FROM messages m, `+s.dialect.approvers("m")+`
				WHERE m.channel_id = ?2 AND m.approval IS NOT NULL AND j.value IN (
					SELECT entry FROM channel_approvers WHERE channel_id = ?2 AND user_id = ?1 AND state = 'accepted')
				ON CONFLICT DO NOTHING`, userID, channelID)
		default:
			_, err = tx.Exec("DELETE FROM message_approvers WHERE user_id = ? AND channel_id = ?", userID, channelID)
		}
		if err != nil {
			return err
		}
		out, err = scanInvitation(tx.QueryRow("SELECT "+invitationCols(list)+" WHERE a.id = ?", id))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: answer invitation %s: %w", id, err)
	}
	return out, nil
}

// Standing is how a user stands on a channel's approval rule.
type Standing struct {
	// EmailVerified: the user's address was vouched for, so that a rule
	// naming it names them.
	EmailVerified bool
	// Declined: they declined the channel's invitation (and accepted none).
	Declined bool
}

// ApproverStanding returns how userID stands on channelID's rule.
func (s *Store) ApproverStanding(ctx context.Context, channelID, userID string) (Standing, error) {
	var st Standing
	var accepted bool
	err := s.read.QueryRowContext(ctx, `SELECT u.email_verified = 1,
			EXISTS (SELECT 1 FROM channel_approvers a WHERE a.channel_id = ?1 AND a.user_id = u.id AND a.state = 'accepted'),
			EXISTS (SELECT 1 FROM channel_approvers a WHERE a.channel_id = ?1 AND a.user_id = u.id AND a.state = 'declined')
		FROM users u WHERE u.id = ?2`, channelID, userID).Scan(&st.EmailVerified, &accepted, &st.Declined)
	if err != nil {
		return st, fmt.Errorf("store: standing on %s: %w", channelID, notFound(err))
	}
	st.Declined = st.Declined && !accepted
	return st, nil
}

// notFound turns "no row" into ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}
