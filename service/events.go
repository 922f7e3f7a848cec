package service

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/heraldhq/herald/store"
)

// Callback event names.
const (
	EventResponse = "response.received"
	EventApproval = "approval.resolved"
)

// TimeFormat is how every time Herald shows is written: RFC 3339 in UTC
// with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// FormatTime writes t in TimeFormat.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// CallbackResult is the answer to a message: what polling returns as
// "result" and what a response.received callback carries (docs/answers.md).
type CallbackResult struct {
	MessageID   string                     `json:"message_id"`
	ChannelID   string                     `json:"channel_id"`
	Timestamp   string                     `json:"timestamp"`
	TriggeredBy string                     `json:"triggered_by"`
	Responses   map[string]json.RawMessage `json:"responses"`
}

// ResponseEvent is the body of a response.received callback.
type ResponseEvent struct {
	Event string `json:"event"`
	CallbackResult
	Metadata *struct{} `json:"metadata"` // reserved; always null
}

// Vote is one approver's vote, as callbacks, polling and the message
// resource show it.
type Vote struct {
	UserID       string          `json:"user_id"`
	UserName     string          `json:"user_name"`
	Action       string          `json:"action"`
	ResponseData json.RawMessage `json:"response_data"`
	RespondedAt  string          `json:"responded_at"`
}

// Votes renders stored votes.
func Votes(votes []store.Vote) []Vote {
	out := make([]Vote, len(votes))
	for i, v := range votes {
		out[i] = Vote{UserID: v.UserID, UserName: v.UserName, Action: v.Action, ResponseData: v.ResponseData,
			RespondedAt: FormatTime(v.RespondedAt)}
	}
	return out
}

// ApprovalTally is where an approval stands: its counts and votes. It is
// the "approval" object of a polling result, and part of the callback and
// of the message resource.
type ApprovalTally struct {
	ApprovalsReceived  int    `json:"approvals_received"`
	RejectionsReceived int    `json:"rejections_received"`
	RequiredCount      int    `json:"required_count"`
	Votes              []Vote `json:"votes"`
}

// ApprovalEvent is the body of an approval.resolved callback.
type ApprovalEvent struct {
	Event     string `json:"event"`
	MessageID string `json:"message_id"`
	ChannelID string `json:"channel_id"`
	Status    string `json:"status"`
	ApprovalTally
	Timestamp string    `json:"timestamp"`
	Metadata  *struct{} `json:"metadata"` // reserved; always null
}

// storedApproval is the answer kept for a resolved approval, so that
// polling shows the outcome beside the result.
type storedApproval struct {
	Result         CallbackResult `json:"result"`
	ApprovalStatus string         `json:"approval_status"`
	Approval       ApprovalTally  `json:"approval"`
}

// StoredResponse is a message's stored answer, decoded. Two shapes are
// stored. A plain response is the CallbackResult object itself. A resolved
// approval stores {"result": <CallbackResult>, "approval_status": ...,
// "approval": <ApprovalTally>}. A CallbackResult has no "result" member, so
// that member tells the shapes apart.
type StoredResponse struct {
	// Result is the callback result, as stored.
	Result json.RawMessage
	// Approval is what a resolved approval keeps beside its result; nil for
	// a plain response.
	Approval *StoredOutcome
}

// StoredOutcome is the approval part of a stored approval answer. The
// tally stays raw: polling returns it as stored.
type StoredOutcome struct {
	Status string          // approval_status: approved or rejected
	Tally  json.RawMessage // approval: the ApprovalTally
}

// DecodeStoredResponse decodes a stored answer of either shape. It fails on
// anything that is not a JSON object (or null, which is a plain response of
// null).
func DecodeStoredResponse(raw []byte) (StoredResponse, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return StoredResponse{}, fmt.Errorf("service: stored response: %w", err)
	}
	result, ok := members["result"]
	if !ok {
		return StoredResponse{Result: raw}, nil
	}
	out := StoredResponse{Result: result}
	status, tally := members["approval_status"], members["approval"]
	if status == nil && tally == nil {
		return out, nil
	}
	out.Approval = &StoredOutcome{Tally: tally}
	if status != nil {
		if err := json.Unmarshal(status, &out.Approval.Status); err != nil {
			return StoredResponse{}, fmt.Errorf("service: stored response: approval_status: %w", err)
		}
	}
	return out, nil
}

// callbackFor returns the delivery job for event with body, or nil when the
// message has no callback_url. The store commits it with the answer (an
// outbox), and the delivery queue sends it.
func callbackFor(m *store.Message, event string, body any) (*store.NewDelivery, error) {
	if m.CallbackURL == nil {
		return nil, nil
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return &store.NewDelivery{ChannelID: m.ChannelID, Event: event, URL: *m.CallbackURL, Body: b}, nil
}

// Outcome is what answered a message, as kept for its owner: the key of
// the button or form, the form's values, who answered and when.
type Outcome struct {
	Action    string                     `json:"action"`
	Responses map[string]json.RawMessage `json:"responses"`
	By        Responder                  `json:"by"`
	At        string                     `json:"at"`
}

// Responder is who answered a message.
type Responder struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}
