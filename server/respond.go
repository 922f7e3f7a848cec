package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/store"
)

// callbackResult is SPEC.md's callback result: what polling returns and what
// the response.received event carries.
type callbackResult struct {
	MessageID   string                     `json:"message_id"`
	ChannelID   string                     `json:"channel_id"`
	Timestamp   string                     `json:"timestamp"`
	TriggeredBy string                     `json:"triggered_by"`
	Responses   map[string]json.RawMessage `json:"responses"`
}

type respondRequest struct {
	Action    string                     `json:"action"`
	Responses map[string]json.RawMessage `json:"responses"`
}

// handleRespond is what the app calls when a person taps a button or submits
// a form: POST /v1/messages/:id/respond.
func (s *Server) handleRespond(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	var req respondRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if req.Action == "" {
		return errInvalidPayload("action is required: the key of the tapped button or submitted form")
	}
	if req.Responses == nil {
		req.Responses = map[string]json.RawMessage{}
	}
	// Whoever may not see the message gets not found, approval or not, so
	// that ids of other users' messages are not revealed.
	m, _, err := s.messageAccess(r, p.ByName("id"), who)
	if err != nil {
		return err
	}
	if m.Approval != nil {
		// Only approvers vote, not even the owner unless listed: an owner
		// who is not an approver is told so (403).
		return s.vote(w, r, m, who, req)
	}
	var actions []action
	if err := json.Unmarshal(m.Actions, &actions); err != nil {
		return err
	}
	var act *action
	for i := range actions {
		if actions[i].Key == req.Action && actions[i].Type != "url" {
			act = &actions[i]
		}
	}
	if act == nil {
		return errInvalidPayload("action %q is not a button or form of this message", req.Action)
	}
	if act.Type == "button" && len(req.Responses) > 0 {
		return errInvalidPayload("a button takes no responses")
	}
	if act.Type == "form" {
		if err := checkResponses(act.Fields, req.Responses); err != nil {
			return err
		}
	}
	now := s.now().UTC()
	result, err := json.Marshal(callbackResult{MessageID: m.ID, ChannelID: m.ChannelID, Timestamp: ts(now),
		TriggeredBy: req.Action, Responses: req.Responses})
	if err != nil {
		return err
	}
	job, err := callbackFor(m, eventResponse, responseEvent{Event: eventResponse, MessageID: m.ID, ChannelID: m.ChannelID,
		Timestamp: ts(now), TriggeredBy: req.Action, Responses: req.Responses})
	if err != nil {
		return err
	}
	err = s.st.Respond(r.Context(), m.ID, result, now, job)
	if errors.Is(err, store.ErrAlreadyResponded) {
		return newError(http.StatusConflict, "already_responded", "this message already has a response; the first one stands")
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "status": store.StateSubmitted})
	return nil
}
