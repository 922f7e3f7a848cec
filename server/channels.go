package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/signature"
	"github.com/heraldhq/herald/store"
)

type channelJSON struct {
	ID           string              `json:"id"`
	Name         string              `json:"name"`
	Icon         string              `json:"icon"`
	Color        string              `json:"color"`
	MutedUntil   *string             `json:"muted_until"`
	FolderID     *string             `json:"folder_id"`
	WebhookToken string              `json:"webhook_token"`
	WebhookURL   string              `json:"webhook_url"`
	Approval     *store.ApprovalRule `json:"approval"`
	// SourceSecretSet tells whether incoming alert and forge webhooks must
	// present the channel's source secret (which is never shown).
	SourceSecretSet bool            `json:"source_secret_set"`
	Template        *store.Template `json:"template"`
	// Urgent is the channel's urgent policy; null: it refuses urgent
	// messages.
	Urgent    *store.UrgentPolicy `json:"urgent"`
	CreatedAt string              `json:"created_at"`
	UpdatedAt string              `json:"updated_at"`
}

func (s *Server) renderChannel(c *store.Channel) channelJSON {
	return channelJSON{ID: c.ID, Name: c.Name, Icon: c.Icon, Color: c.Color, MutedUntil: tsPtr(c.MutedUntil),
		FolderID: c.FolderID, WebhookToken: c.WebhookToken, WebhookURL: s.baseURL + "/v1/send/" + c.WebhookToken,
		Approval: c.Approval, SourceSecretSet: c.SourceSecret != "", Template: c.Template, Urgent: c.Urgent,
		CreatedAt: ts(c.CreatedAt), UpdatedAt: ts(c.UpdatedAt)}
}

func (s *Server) handleListChannels(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	page, err := listPage(r, "channels")
	if err != nil {
		return err
	}
	chs, next, err := s.st.ListChannelsPage(r.Context(), who.user.ID, page)
	if err != nil {
		return err
	}
	out := make([]channelJSON, len(chs))
	for i := range chs {
		out[i] = s.renderChannel(&chs[i])
	}
	writeJSON(w, http.StatusOK, pageBody(map[string]any{"channels": out}, "channels", next))
	return nil
}

func (s *Server) handleCreateChannel(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	var req struct {
		Name  string `json:"name"`
		Icon  string `json:"icon"`
		Color string `json:"color"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	c := &store.Channel{Name: req.Name, Icon: req.Icon, Color: req.Color}
	if err := s.svc.CreateChannel(r.Context(), who.user, c); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, s.renderChannel(c))
	return nil
}

func (s *Server) handleGetChannel(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	c, err := s.st.Channel(r.Context(), who.user.ID, p.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.renderChannel(c))
	return nil
}

// channelPatch is the PATCH body. Raw fields tell "absent" from "null".
type channelPatch struct {
	Name       *string         `json:"name"`
	Icon       *string         `json:"icon"`
	Color      *string         `json:"color"`
	MutedUntil json.RawMessage `json:"muted_until"`
	FolderID   json.RawMessage `json:"folder_id"`
	Approval   json.RawMessage `json:"approval"`
	// SourceSecret: a string sets it, "" or null removes it.
	SourceSecret json.RawMessage `json:"source_secret"`
	Template     json.RawMessage `json:"template"`
	Urgent       json.RawMessage `json:"urgent"`
}

func (s *Server) handleUpdateChannel(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	var req channelPatch
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	patch := store.ChannelPatch{Name: req.Name, Icon: req.Icon, Color: req.Color}
	var err error
	if patch.MutedUntil, err = parseOptionalTime("muted_until", req.MutedUntil); err != nil {
		return err
	}
	if patch.FolderID, err = parseOptionalString("folder_id", req.FolderID); err != nil {
		return err
	}
	if patch.Approval, err = parseObject[store.ApprovalRule]("approval", req.Approval); err != nil {
		return err
	}
	if patch.Urgent, err = parseObject[store.UrgentPolicy]("urgent", req.Urgent); err != nil {
		return err
	}
	if patch.SourceSecret, err = parseSourceSecret(req.SourceSecret); err != nil {
		return err
	}
	if patch.Template, err = parseTemplate(req.Template); err != nil {
		return err
	}
	c, err := s.svc.UpdateChannel(r.Context(), who.user.ID, p.ByName("id"), patch)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.renderChannel(c))
	return nil
}

func isNull(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }

func parseOptionalTime(field string, raw json.RawMessage) (store.Optional[time.Time], error) {
	var out store.Optional[time.Time]
	if raw == nil {
		return out, nil
	}
	out.Set = true
	if isNull(raw) {
		return out, nil
	}
	var str string
	if err := json.Unmarshal(raw, &str); err != nil {
		return out, errInvalidPayload("%s must be an RFC 3339 timestamp string or null", field)
	}
	t, err := time.Parse(time.RFC3339, str)
	if err != nil {
		return out, errInvalidPayload("%s must be an RFC 3339 timestamp like 2026-01-02T15:04:05Z", field)
	}
	// service checks the range a stored time must be in.
	t = t.UTC().Truncate(time.Millisecond)
	out.Value = &t
	return out, nil
}

func parseOptionalString(field string, raw json.RawMessage) (store.Optional[string], error) {
	var out store.Optional[string]
	if raw == nil {
		return out, nil
	}
	out.Set = true
	if isNull(raw) {
		return out, nil
	}
	var str string
	if err := json.Unmarshal(raw, &str); err != nil || str == "" {
		return out, errInvalidPayload("%s must be a non-empty string or null", field)
	}
	out.Value = &str
	return out, nil
}

// parseObject reads an optional object field of a PATCH strictly: an
// object is a T with no unknown member (an approval rule or an urgent
// policy, which service.UpdateChannel checks), null removes it, absent
// leaves it.
func parseObject[T any](field string, raw json.RawMessage) (store.Optional[T], error) {
	var out store.Optional[T]
	if raw == nil {
		return out, nil
	}
	out.Set = true
	if isNull(raw) {
		return out, nil
	}
	var v T
	if err := decodeBytes(raw, &v); err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			return out, errInvalidPayload("%s: %s", field, ae.message)
		}
		return out, err
	}
	out.Value = &v
	return out, nil
}

func (s *Server) handleDeleteChannel(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	if err := s.svc.DeleteChannel(r.Context(), who.user.ID, p.ByName("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}

func (s *Server) handleRegenerateToken(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	c, err := s.svc.RegenerateToken(r.Context(), who.user.ID, p.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.renderChannel(c))
	return nil
}

type secretJSON struct {
	WebhookSecret string `json:"webhook_secret"`
	Algorithm     string `json:"algorithm"`
	HeaderName    string `json:"header_name"`
}

func renderSecret(c *store.Channel) secretJSON {
	return secretJSON{WebhookSecret: c.WebhookSecret, Algorithm: signature.Algorithm, HeaderName: signature.Header}
}

func (s *Server) handleGetSecret(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	c, err := s.st.Channel(r.Context(), who.user.ID, p.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderSecret(c))
	return nil
}

func (s *Server) handleRotateSecret(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	c, err := s.svc.RotateSecret(r.Context(), who.user.ID, p.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderSecret(c))
	return nil
}

// approverJSON is an entry of a channel's rule as its owner sees it: as
// typed, with its invitation's state, and who accepted it once they did.
type approverJSON struct {
	Entry string  `json:"entry"`
	State string  `json:"state"`
	ID    *string `json:"id,omitempty"`
	Email *string `json:"email,omitempty"`
	Name  *string `json:"name,omitempty"`
}

// handleChannelApprovers is GET /v1/channels/:id/approvers: the rule's
// entries and where each invitation stands, for the channel's owner. Who is
// behind an entry shows only once they accepted: before, nothing tells
// whether an account exists.
func (s *Server) handleChannelApprovers(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	list, err := s.svc.Approvers(r.Context(), who.user.ID, p.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvers": renderInvitees(list)})
	return nil
}

// renderInvitees renders a channel's list of invitations (its approvers,
// its escalation list) for its owner.
func renderInvitees(list []store.ChannelApprover) []approverJSON {
	out := make([]approverJSON, len(list))
	for i, a := range list {
		out[i] = approverJSON{Entry: a.Entry, State: a.State}
		if a.State == store.InviteAccepted && a.UserID != "" {
			out[i].ID, out[i].Email, out[i].Name = &a.UserID, &a.Email, &a.Name
		}
	}
	return out
}
