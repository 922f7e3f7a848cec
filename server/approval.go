package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/heraldhq/herald/store"
)

type voteJSON struct {
	UserID       string          `json:"user_id"`
	UserName     string          `json:"user_name"`
	Action       string          `json:"action"`
	ResponseData json.RawMessage `json:"response_data"`
	RespondedAt  string          `json:"responded_at"`
}

func renderVotes(votes []store.Vote) []voteJSON {
	out := make([]voteJSON, len(votes))
	for i, v := range votes {
		out[i] = voteJSON{UserID: v.UserID, UserName: v.UserName, Action: v.Action, ResponseData: v.ResponseData, RespondedAt: ts(v.RespondedAt)}
	}
	return out
}

// approvalEvent is the body of an approval.resolved callback (SPEC.md "Events").
type approvalEvent struct {
	Event              string     `json:"event"`
	MessageID          string     `json:"message_id"`
	ChannelID          string     `json:"channel_id"`
	Status             string     `json:"status"`
	ApprovalsReceived  int        `json:"approvals_received"`
	RejectionsReceived int        `json:"rejections_received"`
	RequiredCount      int        `json:"required_count"`
	Votes              []voteJSON `json:"votes"`
	Timestamp          string     `json:"timestamp"`
	Metadata           *struct{}  `json:"metadata"` // reserved; always null
}

// approvalSummary is the "approval" object of a polling result.
type approvalSummary struct {
	ApprovalsReceived  int        `json:"approvals_received"`
	RejectionsReceived int        `json:"rejections_received"`
	RequiredCount      int        `json:"required_count"`
	Votes              []voteJSON `json:"votes"`
}

// storedApproval is the polling response kept for a resolved approval.
type storedApproval struct {
	Result         callbackResult  `json:"result"`
	ApprovalStatus string          `json:"approval_status"`
	Approval       approvalSummary `json:"approval"`
}

// resolveApproval builds what a resolution stores and sends: the polling
// response (none when it expired without a rejection) and the callback.
func resolveApproval(r store.Resolution) (json.RawMessage, *store.NewDelivery, error) {
	votes := renderVotes(r.Votes)
	var response json.RawMessage
	if r.Status != store.ApprovalExpired {
		triggered := r.TriggeredBy
		if triggered == "" { // an expiry reported as rejected
			triggered = "reject"
		}
		var responses map[string]json.RawMessage
		if err := json.Unmarshal(r.Responses, &responses); err != nil || responses == nil {
			responses = map[string]json.RawMessage{}
		}
		b, err := json.Marshal(storedApproval{
			Result: callbackResult{MessageID: r.MessageID, ChannelID: r.ChannelID, Timestamp: ts(r.At),
				TriggeredBy: triggered, Responses: responses},
			ApprovalStatus: r.Status,
			Approval: approvalSummary{ApprovalsReceived: r.Approvals, RejectionsReceived: r.Rejections,
				RequiredCount: r.Required, Votes: votes},
		})
		if err != nil {
			return nil, nil, err
		}
		response = b
	}
	m := &store.Message{ID: r.MessageID, ChannelID: r.ChannelID, CallbackURL: r.CallbackURL}
	job, err := callbackFor(m, eventApproval, approvalEvent{Event: eventApproval, MessageID: r.MessageID, ChannelID: r.ChannelID,
		Status: r.Status, ApprovalsReceived: r.Approvals, RejectionsReceived: r.Rejections, RequiredCount: r.Required,
		Votes: votes, Timestamp: ts(r.At)})
	return response, job, err
}

// vote records an approver's vote on a message of an approval channel.
func (s *Server) vote(w http.ResponseWriter, r *http.Request, m *store.Message, who *principal, req respondRequest) error {
	if !isApprover(m.Approval, who.user.ID) {
		return errForbidden("you are not an approver of this message")
	}
	if req.Action != "approve" && req.Action != "reject" {
		return errInvalidPayload("on an approval channel, action must be approve or reject")
	}
	if err := checkVoteResponses(req.Responses); err != nil {
		return err
	}
	data, err := json.Marshal(req.Responses)
	if err != nil {
		return err
	}
	v := store.Vote{UserID: who.user.ID, UserName: who.user.Name, Action: req.Action, ResponseData: data,
		RespondedAt: s.now().UTC().Truncate(time.Millisecond)}
	if v.UserName == "" {
		v.UserName = who.user.Email
	}
	res, err := s.st.CastVote(r.Context(), m.ID, v, resolveApproval)
	switch {
	case errors.Is(err, store.ErrAlreadyVoted):
		return newError(http.StatusConflict, "already_voted", "you have already voted on this message")
	case errors.Is(err, store.ErrApprovalClosed):
		return newError(http.StatusConflict, "already_responded", "this approval is already resolved; votes are closed")
	case err != nil:
		return err
	}
	out := map[string]any{"ok": true, "status": store.StatePending, "approval_status": "pending"}
	if res != nil {
		out["status"], out["approval_status"] = store.StateSubmitted, res.Status
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// runApprovals resolves approvals whose window has passed, at their
// deadline: it sleeps until the earliest open deadline or until a new
// approval message is stored. Deadlines are in the database, so a restart
// picks up where it left.
func (s *Server) runApprovals(ctx context.Context) {
	wake := s.st.Wakeup(store.TopicApprovals)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-timer.C:
		}
		s.expireApprovals(ctx)
		wait := time.Minute
		if next, ok, err := s.st.NextApprovalDeadline(ctx); err == nil && ok {
			wait = min(max(next.Sub(s.now()), 10*time.Millisecond), time.Minute)
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
	}
}

func (s *Server) expireApprovals(ctx context.Context) {
	res, err := s.st.ExpireApprovals(ctx, s.now(), resolveApproval)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("approvals: expire", "err", err)
		}
		return
	}
	for _, r := range res {
		s.log.Info("approval window closed", "message", r.MessageID, "status", r.Status, "approvals", r.Approvals)
	}
}

type approvalJSON struct {
	Status             string     `json:"status"` // pending, approved, rejected, expired
	RequiredCount      int        `json:"required_count"`
	Approvers          []string   `json:"approvers"`
	WindowSeconds      int        `json:"window_seconds"`
	Deadline           *string    `json:"deadline"`
	ApprovalsReceived  int        `json:"approvals_received"`
	RejectionsReceived int        `json:"rejections_received"`
	Votes              []voteJSON `json:"votes"`
}

func renderApproval(m *store.Message, votes []store.Vote) *approvalJSON {
	if m.Approval == nil {
		return nil
	}
	status := m.ApprovalStatus
	if status == "" {
		status = "pending"
	}
	a := &approvalJSON{Status: status, RequiredCount: m.Approval.RequiredCount, Approvers: m.Approval.Approvers,
		WindowSeconds: m.Approval.WindowSeconds, Deadline: tsPtr(m.ApprovalDeadline), Votes: renderVotes(votes)}
	for _, v := range votes {
		switch v.Action {
		case "approve":
			a.ApprovalsReceived++
		case "reject":
			a.RejectionsReceived++
		}
	}
	return a
}
