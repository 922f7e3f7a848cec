package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/store"
)

// Page sizes of GET /v1/messages.
const (
	defaultLimit = 50
	maxLimit     = 200
)

type messageJSON struct {
	ID          string          `json:"id"`
	ChannelID   string          `json:"channel_id"`
	Title       string          `json:"title"`
	Body        string          `json:"body"`
	Priority    string          `json:"priority"`
	Actions     json.RawMessage `json:"actions"`
	CallbackURL *string         `json:"callback_url"`
	Muted       bool            `json:"muted"`
	Status      string          `json:"status"`
	CreatedAt   string          `json:"created_at"`
	Response    json.RawMessage `json:"response"`
	Approval    any             `json:"approval"`
	Delivery    any             `json:"delivery"`
}

// pollStatus is a message's polling state as of now: a submitted response
// that was not read within polling.response_ttl is expired, even before the
// sweeper has cleared it.
func (s *Server) pollStatus(m *store.Message) string {
	if m.State == store.StateSubmitted && m.SubmittedAt != nil && !m.SubmittedAt.After(s.expireBefore()) {
		return store.StateExpired
	}
	return m.State
}

// expireBefore is the submission time at or before which a stored response
// has expired.
func (s *Server) expireBefore() time.Time { return s.now().Add(-s.cfg.Polling.ResponseTTL.Duration) }

// renderMessages renders messages, reading the votes of approval messages
// in one query.
func (s *Server) renderMessages(ctx context.Context, msgs []store.Message) ([]messageJSON, error) {
	var ids []string
	for _, m := range msgs {
		if m.Approval != nil {
			ids = append(ids, m.ID)
		}
	}
	votes, err := s.st.Votes(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]messageJSON, len(msgs))
	for i := range msgs {
		out[i] = s.renderMessage(&msgs[i], votes[msgs[i].ID])
	}
	return out, nil
}

func (s *Server) renderMessage(m *store.Message, votes []store.Vote) messageJSON {
	out := messageJSON{ID: m.ID, ChannelID: m.ChannelID, Title: m.Title, Body: m.Body, Priority: m.Priority,
		Actions: m.Actions, CallbackURL: m.CallbackURL, Muted: m.Muted, Status: s.pollStatus(m), CreatedAt: ts(m.CreatedAt)}
	if out.Status == store.StateSubmitted && len(m.Response) > 0 {
		out.Response = m.Response
		// A resolved approval stores its outcome beside the callback result
		// for polling; the resource shows the callback result itself, as for
		// any message (the approval object carries the rest).
		if stored, err := decodeStoredResponse(m.Response); err == nil {
			out.Response = stored.Result
		}
	}
	if out.Response == nil {
		out.Response = json.RawMessage("null")
	}
	if d := renderDelivery(m.Delivery); d != nil {
		out.Delivery = d
	}
	if a := renderApproval(m, votes); a != nil {
		out.Approval = a
	}
	return out
}

// messageAccess returns a message and its channel if who may see it: the
// channel's owner, or an approver of the message's approval rule. Anyone
// else gets not found.
func (s *Server) messageAccess(r *http.Request, id string, who *principal) (*store.Message, *store.Channel, error) {
	m, err := s.st.Message(r.Context(), id)
	if err != nil {
		return nil, nil, err
	}
	ch, err := s.st.ChannelByID(r.Context(), m.ChannelID)
	if err != nil {
		return nil, nil, err
	}
	if ch.UserID != who.user.ID && !isApprover(m.Approval, who.user.ID) {
		return nil, nil, store.ErrNotFound
	}
	return m, ch, nil
}

func isApprover(rule *store.ApprovalRule, userID string) bool {
	if rule == nil {
		return false
	}
	for _, id := range rule.Approvers {
		if id == userID {
			return true
		}
	}
	return false
}

// queryInt reads a non-negative integer query parameter.
func queryInt(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, errInvalidPayload("%s must be a non-negative integer", name)
	}
	return n, nil
}

func (s *Server) handleListMessages(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	limit, err := queryInt(r, "limit", defaultLimit)
	if err != nil {
		return err
	}
	offset, err := queryInt(r, "offset", 0)
	if err != nil {
		return err
	}
	q := store.MessageQuery{UserID: who.user.ID, ChannelID: r.URL.Query().Get("channel_id"), Limit: min(limit, maxLimit), Offset: offset}
	var ch *store.Channel
	if q.ChannelID != "" {
		var err error
		if ch, err = s.st.ChannelByID(r.Context(), q.ChannelID); err != nil {
			return err
		}
		if ch.UserID != who.user.ID {
			// An approver sees the messages whose rule names them, as GET
			// and voting decide by the message's own rule.
			q.Approver = who.user.ID
		}
	}
	msgs, total, err := s.st.ListMessages(r.Context(), q)
	if err != nil {
		return err
	}
	if q.Approver != "" && total == 0 && !isApprover(ch.Approval, who.user.ID) {
		return store.ErrNotFound // neither owner nor approver: the channel stays unseen
	}
	out, err := s.renderMessages(r.Context(), msgs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": out, "total": total, "limit": q.Limit, "offset": q.Offset})
	return nil
}

func (s *Server) handleGetMessage(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	m, _, err := s.messageAccess(r, p.ByName("id"), who)
	if err != nil {
		return err
	}
	out, err := s.renderMessages(r.Context(), []store.Message{*m})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out[0])
	return nil
}

func (s *Server) handleDeleteMessage(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	err := s.st.DeleteMessage(r.Context(), who.user.ID, p.ByName("id"))
	if errors.Is(err, store.ErrNotFound) {
		// An approver may see the message but not delete it.
		if _, _, aerr := s.messageAccess(r, p.ByName("id"), who); aerr == nil {
			return errForbidden("only the channel's owner can delete its messages")
		}
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}
