package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Approval outcomes.
const (
	ApprovalApproved = "approved"
	ApprovalRejected = "rejected"
	ApprovalExpired  = "expired"
)

// TopicApprovals is woken when a message with an approval window is stored.
const TopicApprovals = "approvals"

// Approval errors.
var (
	ErrAlreadyVoted   = errors.New("store: this approver has already voted")
	ErrApprovalClosed = errors.New("store: the approval is already resolved")
)

// Vote is one approver's recorded vote.
type Vote struct {
	UserID       string          `json:"user_id"`
	UserName     string          `json:"user_name"`
	Action       string          `json:"action"`
	ResponseData json.RawMessage `json:"response_data"`
	RespondedAt  time.Time       `json:"-"`
}

// Resolution is how an approval ended, with every vote oldest first.
type Resolution struct {
	MessageID   string
	ChannelID   string
	Status      string
	Approvals   int
	Rejections  int
	Required    int
	Votes       []Vote
	At          time.Time
	TriggeredBy string          // approve or reject; empty when expired
	Responses   json.RawMessage // the deciding vote's response data
	CallbackURL *string
}

// Resolver turns a resolution into the stored polling response (nil for an
// expiry, which has none) and the callback to queue (nil without a
// callback_url). It runs inside the resolving transaction and must only
// compute.
type Resolver func(Resolution) (response json.RawMessage, callback *NewDelivery, err error)

type approvalRow struct {
	channelID string
	rule      ApprovalRule
	status    sql.NullString
	deadline  int64
	callback  sql.NullString
}

func loadApproval(tx *writeTx, id string) (*approvalRow, error) {
	var a approvalRow
	var rule sql.NullString
	var deadline sql.NullInt64
	err := tx.QueryRow(`SELECT channel_id, approval, approval_status, approval_deadline, callback_url
		FROM messages WHERE id = ?`, id).Scan(&a.channelID, &rule, &a.status, &deadline, &a.callback)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if !rule.Valid || !deadline.Valid {
		return nil, fmt.Errorf("message %s has no approval rule", id)
	}
	if err := json.Unmarshal([]byte(rule.String), &a.rule); err != nil {
		return nil, err
	}
	a.deadline = deadline.Int64
	return &a, nil
}

// CastVote records v on message id and resolves the approval when this vote
// decides it: any rejection rejects, approvals reaching the required count
// approve. Everything happens in one writer transaction, so whatever the
// concurrency an approval resolves exactly once. It returns the resolution
// when this vote made one. A vote after the window has passed resolves the
// approval as expired and is ErrApprovalClosed, like any vote after
// resolution; a second vote by the same user is ErrAlreadyVoted.
func (s *Store) CastVote(ctx context.Context, id string, v Vote, resolve Resolver) (*Resolution, error) {
	return s.CastVoteAcking(ctx, id, v, resolve, nil)
}

// CastVoteAcking is CastVote that also acknowledges the message's alert
// with ack, when not nil and the vote counts: in the same transaction.
func (s *Store) CastVoteAcking(ctx context.Context, id string, v Vote, resolve Resolver, ack *AlertAcking) (*Resolution, error) {
	var res *Resolution
	closed := false
	err := s.update(ctx, func(tx *writeTx) error {
		res, closed = nil, false
		a, err := loadApproval(tx, id)
		if err != nil {
			return err
		}
		if a.status.Valid {
			closed = true
			return nil
		}
		if !v.RespondedAt.Before(fromMS(a.deadline)) {
			// The window passed first; the vote is not counted.
			res, err = s.resolve(tx, id, a, ApprovalExpired, nil, resolve)
			closed = true
			return err
		}
		if len(v.ResponseData) == 0 {
			v.ResponseData = json.RawMessage("{}")
		}
		if _, err := tx.Exec(`INSERT INTO votes (message_id, user_id, user_name, action, response_data, responded_at)
			VALUES (?, ?, ?, ?, ?, ?)`, id, v.UserID, v.UserName, v.Action, string(v.ResponseData), ms(v.RespondedAt)); err != nil {
			if isUnique(err) {
				return ErrAlreadyVoted
			}
			return err
		}
		if err := s.insertEvent(tx, EventUpdated, id); err != nil {
			return err
		}
		if ack != nil {
			if _, err := s.ackAlert(tx, id, ack.Ack, ack.Notice); err != nil {
				return err
			}
		}
		votes, err := listVotes(tx.Query, id)
		if err != nil {
			return err
		}
		approvals, rejections := CountVotes(votes)
		switch {
		case rejections > 0:
			res, err = s.resolve(tx, id, a, ApprovalRejected, &v, resolve)
		case approvals >= a.rule.RequiredCount:
			res, err = s.resolve(tx, id, a, ApprovalApproved, &v, resolve)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: vote on %s: %w", id, err)
	}
	if closed {
		return res, fmt.Errorf("store: vote on %s: %w", id, ErrApprovalClosed)
	}
	return res, nil
}

// CountVotes counts the approvals and rejections among votes.
func CountVotes(votes []Vote) (approvals, rejections int) {
	for _, v := range votes {
		switch v.Action {
		case "approve":
			approvals++
		case "reject":
			rejections++
		}
	}
	return approvals, rejections
}

// resolve closes an approval: it stores the outcome, the polling response
// (or the expired state) and queues the callback, inside tx.
func (s *Store) resolve(tx *writeTx, id string, a *approvalRow, status string, deciding *Vote, resolve Resolver) (*Resolution, error) {
	votes, err := listVotes(tx.Query, id)
	if err != nil {
		return nil, err
	}
	at := s.now().UTC().Truncate(time.Millisecond)
	deadline := fromMS(a.deadline)
	if status == ApprovalExpired {
		at = deadline
		// Only votes before the deadline count; a rejection among them
		// reports the expiry as rejected.
		kept := votes[:0]
		for _, v := range votes {
			if v.RespondedAt.Before(deadline) {
				kept = append(kept, v)
			}
		}
		votes = kept
	}
	res := &Resolution{MessageID: id, ChannelID: a.channelID, Status: status, Required: a.rule.RequiredCount,
		Votes: votes, At: at, Responses: json.RawMessage("{}")}
	res.Approvals, res.Rejections = CountVotes(votes)
	if status == ApprovalExpired && res.Rejections > 0 {
		res.Status = ApprovalRejected
	}
	if deciding != nil {
		res.TriggeredBy, res.Responses = deciding.Action, deciding.ResponseData
	}
	if a.callback.Valid {
		res.CallbackURL = &a.callback.String
	}
	response, callback, err := resolve(*res)
	if err != nil {
		return nil, err
	}
	state, resp, submitted := StateSubmitted, any(string(response)), any(ms(at))
	if response == nil {
		state, resp, submitted = StateExpired, nil, nil
	}
	if _, err := tx.Exec(`UPDATE messages SET approval_status = ?, state = ?, response = ?, submitted_at = ? WHERE id = ?`,
		res.Status, state, resp, submitted, id); err != nil {
		return nil, err
	}
	if err := s.insertEvent(tx, EventUpdated, id); err != nil {
		return nil, err
	}
	if err := s.queueUpdatePush(tx, id); err != nil {
		return nil, err
	}
	if callback != nil {
		if err := s.insertDelivery(tx, id, callback, at); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func listVotes(query queryFunc, id string) ([]Vote, error) {
	rows, err := query(`SELECT user_id, user_name, action, response_data, responded_at
		FROM votes WHERE message_id = ? ORDER BY responded_at, seq`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Vote{}
	for rows.Next() {
		var v Vote
		var data string
		var at int64
		if err := rows.Scan(&v.UserID, &v.UserName, &v.Action, &data, &at); err != nil {
			return nil, err
		}
		v.ResponseData, v.RespondedAt = json.RawMessage(data), fromMS(at)
		out = append(out, v)
	}
	return out, rows.Err()
}

// Votes returns the votes on the given messages, oldest first per message.
func (s *Store) Votes(ctx context.Context, ids []string) (map[string][]Vote, error) {
	out := map[string][]Vote{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.read.QueryContext(ctx, `SELECT message_id, user_id, user_name, action, response_data, responded_at
		FROM votes WHERE message_id IN (?`+strings.Repeat(",?", len(ids)-1)+`) ORDER BY responded_at, seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: votes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, data string
		var v Vote
		var at int64
		if err := rows.Scan(&id, &v.UserID, &v.UserName, &v.Action, &data, &at); err != nil {
			return nil, fmt.Errorf("store: votes: %w", err)
		}
		v.ResponseData, v.RespondedAt = json.RawMessage(data), fromMS(at)
		out[id] = append(out[id], v)
	}
	return out, rows.Err()
}

// NextApprovalDeadline returns the earliest deadline of an open approval.
func (s *Store) NextApprovalDeadline(ctx context.Context) (time.Time, bool, error) {
	var next sql.NullInt64
	err := s.read.QueryRowContext(ctx, `SELECT MIN(approval_deadline) FROM messages
		WHERE approval_deadline IS NOT NULL AND approval_status IS NULL`).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: next approval deadline: %w", err)
	}
	if !next.Valid {
		return time.Time{}, false, nil
	}
	return fromMS(next.Int64), true, nil
}

// ExpireApprovals resolves every open approval whose deadline is at or
// before now, each exactly once, and returns the resolutions.
func (s *Store) ExpireApprovals(ctx context.Context, now time.Time, resolve Resolver) ([]Resolution, error) {
	var out []Resolution
	err := s.update(ctx, func(tx *writeTx) error {
		out = out[:0]
		rows, err := tx.Query(`SELECT id FROM messages
			WHERE approval_deadline IS NOT NULL AND approval_status IS NULL AND approval_deadline <= ? LIMIT 500`, ms(now))
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		for _, id := range ids {
			a, err := loadApproval(tx, id)
			if err != nil {
				return err
			}
			res, err := s.resolve(tx, id, a, ApprovalExpired, nil, resolve)
			if err != nil {
				return err
			}
			out = append(out, *res)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: expire approvals: %w", err)
	}
	return out, nil
}
