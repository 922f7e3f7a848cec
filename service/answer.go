package service

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/heraldhq/herald/store"
)

// Vote actions on an approval message.
const (
	ActionApprove = "approve"
	ActionReject  = "reject"
)

// ApprovalActions are the buttons of a message on an approval channel that
// was sent without actions of its own.
var ApprovalActions = []Action{
	{Type: "button", Key: ActionApprove, Label: "Approve", Style: "primary"},
	{Type: "button", Key: ActionReject, Label: "Reject", Style: "destructive"},
}

// MessageFor returns a message and its channel if who may see it: the
// channel's owner, or an approver named by the message's own approval rule
// (the one in force when it was sent), whether or not they accepted the
// channel's invitation, unless they declined it, or on an urgent message,
// a person its alert reached by escalation. Anyone else gets
// ErrNotFound, as for a message that does not exist.
func (s *Service) MessageFor(ctx context.Context, who *store.User, id string) (*store.Message, *store.Channel, error) {
	m, err := s.st.Message(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	ch, err := s.st.ChannelByID(ctx, m.ChannelID)
	if err != nil {
		return nil, nil, err
	}
	if ch.UserID != who.ID {
		ok, err := s.mayApprove(ctx, m, ch.ID, who)
		if err == nil && !ok {
			ok, err = s.mayAnswerAlert(ctx, m, who)
		}
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, nil, ErrNotFound
		}
	}
	return m, ch, nil
}

// Answer is where a message stands after a response or a vote.
type Answer struct {
	Status string // the polling state: submitted, or pending while an approval is open
	// ApprovalStatus is set on approval messages: pending, approved or
	// rejected.
	ApprovalStatus string
	// AlertState is set on urgent messages: where the alert stands after
	// the answer (acknowledged, unless it had ended before).
	AlertState string
}

// Respond records who's answer to a message: the tapped button or the
// submitted form (action is its key), or on an approval message, a vote
// (approve or reject). The answer, its stream event and its callback
// commit together; the first answer stands.
func (s *Service) Respond(ctx context.Context, who *store.User, messageID, action string, responses map[string]json.RawMessage) (Answer, error) {
	return s.RespondVia(ctx, who, Via{}, messageID, action, responses)
}

// RespondVia is Respond for an answer that came through via. On an urgent
// message any answer acknowledges its alert, and the Acknowledge button
// does nothing else.
func (s *Service) RespondVia(ctx context.Context, who *store.User, via Via, messageID, action string,
	responses map[string]json.RawMessage) (Answer, error) {
	if action == "" {
		return Answer{}, invalid("action is required: the key of the tapped button or submitted form")
	}
	if responses == nil {
		responses = map[string]json.RawMessage{}
	}
	// Whoever may not see the message gets not found, approval or not, so
	// that ids of other users' messages are not revealed.
	m, _, err := s.MessageFor(ctx, who, messageID)
	if err != nil {
		return Answer{}, err
	}
	if m.Priority == PriorityUrgent && action == AckKey {
		if len(responses) > 0 {
			return Answer{}, invalid("the Acknowledge button takes no responses")
		}
		return s.acknowledge(ctx, m, who, via)
	}
	if m.Approval != nil {
		// Only approvers vote, not even the owner unless listed: an owner
		// who is not an approver is told so.
		return s.vote(ctx, m, who, via, action, responses)
	}
	var actions []Action
	if err := json.Unmarshal(m.Actions, &actions); err != nil {
		return Answer{}, err
	}
	var act *Action
	for i := range actions {
		if actions[i].Key == action && actions[i].Type != "url" {
			act = &actions[i]
		}
	}
	if act == nil {
		return Answer{}, invalid("action %q is not a button or form of this message", action)
	}
	if (act.Type == "button" || act.Type == "http") && len(responses) > 0 {
		return Answer{}, invalid("a button takes no responses")
	}
	if act.Type == "form" {
		if err := CheckResponses(act.Fields, responses); err != nil {
			return Answer{}, err
		}
	}
	now := s.now().UTC()
	result := CallbackResult{MessageID: m.ID, ChannelID: m.ChannelID, Timestamp: FormatTime(now),
		TriggeredBy: action, Responses: responses}
	stored, err := json.Marshal(result)
	if err != nil {
		return Answer{}, err
	}
	job, err := callbackFor(m, EventResponse, ResponseEvent{Event: EventResponse, CallbackResult: result})
	if err != nil {
		return Answer{}, err
	}
	outcome, err := json.Marshal(Outcome{Action: action, Responses: responses, At: FormatTime(now),
		By: Responder{ID: who.ID, Name: who.Name, Email: who.Email}})
	if err != nil {
		return Answer{}, err
	}
	var request *store.NewDelivery
	if act.Type == "http" {
		if request, err = actionDelivery(m, act); err != nil {
			return Answer{}, err
		}
	}
	err = s.st.RespondWithJobs(ctx, m.ID, stored, outcome, now, job, request, s.acking(m, who, via))
	if errors.Is(err, store.ErrAlreadyResponded) {
		return Answer{}, conflict("already_responded", "this message already has a response; the first one stands")
	}
	if err != nil {
		return Answer{}, err
	}
	return Answer{Status: store.StateSubmitted, AlertState: s.alertState(ctx, m)}, nil
}

// alertState is where urgent message m's alert stands ("" on other
// messages, or when it cannot be read: the answer is committed already).
func (s *Service) alertState(ctx context.Context, m *store.Message) string {
	if m.Priority != PriorityUrgent {
		return ""
	}
	a, err := s.st.Alert(ctx, m.ID)
	if err != nil {
		return ""
	}
	return a.State
}

// vote records an approver's vote; the vote that decides resolves the
// approval in the same transaction.
func (s *Service) vote(ctx context.Context, m *store.Message, who *store.User, via Via, action string, responses map[string]json.RawMessage) (Answer, error) {
	ok, err := s.mayApprove(ctx, m, m.ChannelID, who)
	if err != nil {
		return Answer{}, err
	}
	if !ok {
		return Answer{}, forbidden("you are not an approver of this message")
	}
	if action != ActionApprove && action != ActionReject {
		return Answer{}, invalid("on an approval channel, action must be approve or reject")
	}
	if err := checkVoteResponses(responses); err != nil {
		return Answer{}, err
	}
	data, err := json.Marshal(responses)
	if err != nil {
		return Answer{}, err
	}
	v := store.Vote{UserID: who.ID, UserName: who.Name, Action: action, ResponseData: data,
		RespondedAt: s.now().UTC().Truncate(time.Millisecond)}
	if v.UserName == "" {
		v.UserName = who.Email
	}
	res, err := s.st.CastVoteAcking(ctx, m.ID, v, resolveApproval, s.acking(m, who, via))
	switch {
	case errors.Is(err, store.ErrAlreadyVoted):
		return Answer{}, conflict("already_voted", "you have already voted on this message")
	case errors.Is(err, store.ErrApprovalClosed):
		return Answer{}, conflict("already_responded", "this approval is already resolved; votes are closed")
	case err != nil:
		return Answer{}, err
	}
	if res != nil {
		return Answer{Status: store.StateSubmitted, ApprovalStatus: res.Status, AlertState: s.alertState(ctx, m)}, nil
	}
	return Answer{Status: store.StatePending, ApprovalStatus: "pending", AlertState: s.alertState(ctx, m)}, nil
}

// resolveApproval builds what a resolution stores and sends: the polling
// answer (none when it expired without a rejection) and the callback.
func resolveApproval(r store.Resolution) (json.RawMessage, *store.NewDelivery, error) {
	tally := ApprovalTally{ApprovalsReceived: r.Approvals, RejectionsReceived: r.Rejections,
		RequiredCount: r.Required, Votes: Votes(r.Votes)}
	var answer json.RawMessage
	if r.Status != store.ApprovalExpired {
		triggered := r.TriggeredBy
		if triggered == "" { // an expiry reported as rejected
			triggered = ActionReject
		}
		var responses map[string]json.RawMessage
		if err := json.Unmarshal(r.Responses, &responses); err != nil || responses == nil {
			responses = map[string]json.RawMessage{}
		}
		b, err := json.Marshal(storedApproval{
			Result: CallbackResult{MessageID: r.MessageID, ChannelID: r.ChannelID, Timestamp: FormatTime(r.At),
				TriggeredBy: triggered, Responses: responses},
			ApprovalStatus: r.Status,
			Approval:       tally,
		})
		if err != nil {
			return nil, nil, err
		}
		answer = b
	}
	m := &store.Message{ID: r.MessageID, ChannelID: r.ChannelID, CallbackURL: r.CallbackURL}
	job, err := callbackFor(m, EventApproval, ApprovalEvent{Event: EventApproval, MessageID: r.MessageID,
		ChannelID: r.ChannelID, Status: r.Status, ApprovalTally: tally, Timestamp: FormatTime(r.At)})
	return answer, job, err
}

// ExpireApprovals resolves the approvals whose window has passed.
func (s *Service) ExpireApprovals(ctx context.Context) ([]store.Resolution, error) {
	return s.st.ExpireApprovals(ctx, s.now(), resolveApproval)
}

// Tally is where a message's approval stands, from its votes.
func Tally(m *store.Message, votes []store.Vote) ApprovalTally {
	approvals, rejections := store.CountVotes(votes)
	return ApprovalTally{ApprovalsReceived: approvals, RejectionsReceived: rejections,
		RequiredCount: m.Approval.RequiredCount, Votes: Votes(votes)}
}

// Tallies returns where each approval among msgs stands, by message id,
// reading the votes of all of them at once; messages without an approval
// have none.
func (s *Service) Tallies(ctx context.Context, msgs []store.Message) (map[string]ApprovalTally, error) {
	var ids []string
	for _, m := range msgs {
		if m.Approval != nil {
			ids = append(ids, m.ID)
		}
	}
	out := make(map[string]ApprovalTally, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	votes, err := s.st.Votes(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range msgs {
		if m := &msgs[i]; m.Approval != nil {
			out[m.ID] = Tally(m, votes[m.ID])
		}
	}
	return out, nil
}

// EventActionHTTP names an http action's request in the delivery log.
const EventActionHTTP = "action.http"

// actionDelivery is the request a tapped http action makes, queued with
// the answer: the delivery queue sends it through the callback guard,
// retried, in the message's delivery log.
func actionDelivery(m *store.Message, act *Action) (*store.NewDelivery, error) {
	d := &store.NewDelivery{ChannelID: m.ChannelID, Event: EventActionHTTP, URL: act.Value, Kind: store.KindAction,
		Method: "POST", Body: []byte{}}
	if rq := act.Request; rq != nil {
		if rq.Method != "" {
			d.Method = rq.Method
		}
		d.Body = []byte(rq.Body)
		if len(rq.Headers) > 0 {
			h, err := json.Marshal(rq.Headers)
			if err != nil {
				return nil, err
			}
			d.Headers = h
		}
	}
	return d, nil
}
