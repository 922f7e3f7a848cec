package server

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// Page sizes of GET /v1/messages.
const (
	defaultLimit = 50
	maxLimit     = 200
	maxSearch    = 200 // characters of a search
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
	Outcome     json.RawMessage `json:"outcome"`

	// What a message may carry beside its title and body (service.Extras),
	// each left out when absent.
	Tags       []string `json:"tags,omitempty"`
	Click      string   `json:"click_url,omitempty"`
	Icon       string   `json:"icon_url,omitempty"`
	Attach     string   `json:"attach_url,omitempty"`
	Markdown   bool     `json:"markdown,omitempty"`
	SequenceID string   `json:"sequence_id,omitempty"`
	// DeliverAt is set while the message is scheduled, until it is due.
	DeliverAt string `json:"deliver_at,omitempty"`
	// Alert is an urgent message's alert; null on any other.
	Alert *service.AlertJSON `json:"alert"`
	// Attachment is the file or picture kept with the message, or a link
	// not fetched.
	Attachment *attachmentJSON `json:"attachment,omitempty"`
}

// attachmentJSON is a message's attachment: a stored file, read at its
// url (a relative path, for the signed-in app), or a link not fetched
// (name, url and error).
type attachmentJSON struct {
	ID           string `json:"id,omitempty"`
	Name         string `json:"name"`
	ContentType  string `json:"content_type,omitempty"`
	Size         int64  `json:"size,omitempty"`
	Image        *bool  `json:"image,omitempty"`
	URL          string `json:"url"`
	ThumbnailURL string `json:"thumbnail_url,omitempty"`
	Width        int    `json:"width,omitempty"`
	Height       int    `json:"height,omitempty"`
	Error        string `json:"error,omitempty"`
}

// renderAttachment is a's JSON; nil for none.
func renderAttachment(a *store.AttachmentInfo) *attachmentJSON {
	if a == nil {
		return nil
	}
	if !a.Stored() {
		return &attachmentJSON{Name: a.Name, URL: a.URL, Error: a.Error}
	}
	out := &attachmentJSON{ID: a.ID, Name: a.Name, ContentType: a.ContentType, Size: a.Size, Image: &a.Image,
		URL: service.AttachmentPath(a.ID), Width: a.Width, Height: a.Height}
	if a.Thumbnail {
		out.ThumbnailURL = out.URL + "?thumbnail=1"
	}
	return out
}

// pollStatus is a message's polling state as of now: a submitted response
// that was not read within polling.response_ttl is expired, even before the
// sweeper has cleared it.
func (s *Server) pollStatus(m *store.Message) string {
	if m.State == store.StateSubmitted && m.SubmittedAt != nil && !m.SubmittedAt.After(s.svc.ExpireBefore()) {
		return store.StateExpired
	}
	return m.State
}

// renderMessages renders messages, with where each approval stands
// (service.Tallies, one read for all of them).
// The callback_url is shown to the channel's owner only: it can carry
// credentials, and an approver (viewerID) needs none of it.
func (s *Server) renderMessages(ctx context.Context, viewerID string, msgs []store.Message) ([]messageJSON, error) {
	tallies, err := s.svc.Tallies(ctx, msgs)
	if err != nil {
		return nil, err
	}
	alerts, err := s.svc.Alerts(ctx, msgs)
	if err != nil {
		return nil, err
	}
	out := make([]messageJSON, len(msgs))
	for i := range msgs {
		out[i] = s.renderMessage(&msgs[i], tallies[msgs[i].ID], viewerID)
		if a := alerts[msgs[i].ID]; a != nil {
			j := service.RenderAlert(a)
			out[i].Alert = &j
		}
	}
	return out, nil
}

func (s *Server) renderMessage(m *store.Message, tally service.ApprovalTally, viewerID string) messageJSON {
	out := messageJSON{ID: m.ID, ChannelID: m.ChannelID, Title: m.Title, Body: m.Body, Priority: m.Priority,
		Actions: m.Actions, Muted: m.Muted, Status: s.pollStatus(m), CreatedAt: ts(m.CreatedAt)}
	if m.OwnerID == viewerID {
		out.CallbackURL = m.CallbackURL
	}
	if len(m.Extras) > 0 {
		// A stored document the service wrote: one that no longer reads
		// shows no extras rather than failing the whole list.
		if e, err := store.DecodeExtras(m.Extras); err == nil {
			out.Tags, out.Click, out.Icon, out.Attach, out.Markdown = e.Tags, e.Click, e.Icon, e.Attach, e.Markdown
			out.Attachment = renderAttachment(e.Attachment)
		}
	}
	out.SequenceID = m.SequenceID
	if m.DeliverAt != nil {
		out.DeliverAt = ts(*m.DeliverAt)
	}
	if out.Status == store.StateSubmitted && len(m.Response) > 0 {
		out.Response = m.Response
		// A resolved approval stores its outcome beside the callback result
		// for polling; the resource shows the callback result itself, as for
		// any message (the approval object carries the rest).
		if stored, err := service.DecodeStoredResponse(m.Response); err == nil {
			out.Response = stored.Result
		}
	}
	if out.Response == nil {
		out.Response = json.RawMessage("null")
	}
	out.Outcome = json.RawMessage("null")
	if m.OwnerID == viewerID && len(m.Outcome) > 0 {
		out.Outcome = m.Outcome
	}
	if d := renderDelivery(m.Delivery); d != nil {
		out.Delivery = d
	}
	if a := renderApproval(m, tally); a != nil {
		out.Approval = a
	}
	return out
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

// handleListMessages is GET /v1/messages: newest first, a page at a time.
// Paging goes by cursor (before=<next_before of the last page>), which
// costs one page however deep; offset still works, at the cost of walking
// what it skips. q searches titles and bodies, state keeps one status, and
// approver=me lists the messages whose approval rule names the caller.
func (s *Server) handleListMessages(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	limit, err := queryInt(r, "limit", defaultLimit)
	if err != nil {
		return err
	}
	offset, err := queryInt(r, "offset", 0)
	if err != nil {
		return err
	}
	query := r.URL.Query()
	q := store.MessageQuery{ChannelID: query.Get("channel_id"), Search: query.Get("q"),
		State: query.Get("state"), Limit: min(limit, maxLimit), Offset: offset}
	if query.Has("state") && !slices.Contains(store.ListStates, q.State) {
		return errInvalidPayload("state must be one of %s", strings.Join(store.ListStates, ", "))
	}
	if query.Has("approver") {
		if query.Get("approver") != "me" {
			return errInvalidPayload("approver must be me")
		}
		q.Approver = who.user.ID
	}
	if v := query.Get("before"); v != "" {
		if q.Before, err = strconv.ParseInt(v, 10, 64); err != nil || q.Before <= 0 {
			return errInvalidPayload("before must be the next_before of an earlier page")
		}
	}
	if query.Has("q") && strings.TrimSpace(q.Search) == "" {
		return errInvalidPayload("q must have at least one word")
	}
	if chars(q.Search) > maxSearch {
		return errInvalidPayload("q is longer than %d characters", maxSearch)
	}
	page, err := s.svc.ListMessages(r.Context(), who.user, q)
	if err != nil {
		return err
	}
	out, err := s.renderMessages(r.Context(), who.user.ID, page.Messages)
	if err != nil {
		return err
	}
	var next *string
	if page.Next != 0 {
		v := strconv.FormatInt(page.Next, 10)
		next = &v
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": out, "total": page.Total, "total_exact": page.TotalExact,
		"limit": q.Limit, "offset": q.Offset, "next_before": next})
	return nil
}

func (s *Server) handleGetMessage(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	m, _, err := s.svc.MessageFor(r.Context(), who.user, p.ByName("id"))
	if err != nil {
		return err
	}
	out, err := s.renderMessages(r.Context(), who.user.ID, []store.Message{*m})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out[0])
	return nil
}

func (s *Server) handleDeleteMessage(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	if err := s.svc.DeleteMessage(r.Context(), who.user, p.ByName("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}
