package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/signature"
	"github.com/heraldhq/herald/store"
)

var colorRe = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)

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
	CreatedAt       string          `json:"created_at"`
	UpdatedAt       string          `json:"updated_at"`
}

func (s *Server) renderChannel(c *store.Channel) channelJSON {
	return channelJSON{ID: c.ID, Name: c.Name, Icon: c.Icon, Color: c.Color, MutedUntil: tsPtr(c.MutedUntil),
		FolderID: c.FolderID, WebhookToken: c.WebhookToken, WebhookURL: s.baseURL + "/v1/send/" + c.WebhookToken,
		Approval: c.Approval, SourceSecretSet: c.SourceSecret != "", Template: c.Template,
		CreatedAt: ts(c.CreatedAt), UpdatedAt: ts(c.UpdatedAt)}
}

func validName(field, name string) error {
	if strings.TrimSpace(name) == "" {
		return errInvalidPayload("%s is required", field)
	}
	if chars(name) > 100 {
		return errInvalidPayload("%s is longer than 100 characters", field)
	}
	return nil
}

func validIcon(icon string) error {
	if chars(icon) > 100 {
		return errInvalidPayload("icon is longer than 100 characters")
	}
	return nil
}

func validColor(color string) error {
	if color != "" && !colorRe.MatchString(color) {
		return errInvalidPayload("color must be a hex colour like #1E90FF")
	}
	return nil
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
	if err := errors.Join(validName("name", req.Name), validIcon(req.Icon), validColor(req.Color)); err != nil {
		return firstError(err)
	}
	c := &store.Channel{Name: strings.TrimSpace(req.Name), Icon: req.Icon, Color: strings.ToUpper(req.Color)}
	if err := s.svc.CreateChannel(r.Context(), who.user, c); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, s.renderChannel(c))
	return nil
}

// firstError unwraps an errors.Join to its first error, so that the client
// sees one clear message.
func firstError(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()[0]
	}
	return err
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
}

func (s *Server) handleUpdateChannel(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	var req channelPatch
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	var patch store.ChannelPatch
	if req.Name != nil {
		if err := validName("name", *req.Name); err != nil {
			return err
		}
		n := strings.TrimSpace(*req.Name)
		patch.Name = &n
	}
	if req.Icon != nil {
		if err := validIcon(*req.Icon); err != nil {
			return err
		}
		patch.Icon = req.Icon
	}
	if req.Color != nil {
		if err := validColor(*req.Color); err != nil {
			return err
		}
		c := strings.ToUpper(*req.Color)
		patch.Color = &c
	}
	var err error
	if patch.MutedUntil, err = parseOptionalTime("muted_until", req.MutedUntil); err != nil {
		return err
	}
	if patch.FolderID, err = parseOptionalString("folder_id", req.FolderID); err != nil {
		return err
	}
	if patch.Approval, err = parseApproval(req.Approval); err != nil {
		return err
	}
	if patch.SourceSecret, err = parseSourceSecret(req.SourceSecret); err != nil {
		return err
	}
	if patch.Template, err = parseTemplate(req.Template); err != nil {
		return err
	}
	c, err := s.st.UpdateChannel(r.Context(), who.user.ID, p.ByName("id"), patch)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.renderChannel(c))
	return nil
}

func isNull(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }

// The range of times a request may set.
var (
	minTime = time.Unix(0, 0).UTC()
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC)
)

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
	t = t.UTC().Truncate(time.Millisecond)
	// What is stored must come back as a valid RFC 3339 time: an offset
	// can push 9999-12-31 into the year 10000.
	if t.Before(minTime) || t.After(maxTime) {
		return out, errInvalidPayload("%s must be between %s and %s", field, ts(minTime), ts(maxTime))
	}
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

// Bounds of an approval rule. maxApprovers keeps the approver lookup within
// SQLite's limit on query parameters (an unbounded list was a 500), and
// maxApprovalWindow keeps the deadline far from overflowing time.Duration.
const (
	maxApprovers      = 100
	maxApprovalWindow = 365 * 24 * 60 * 60 // one year, in seconds
)

// parseApproval validates an approval rule: distinct, well-formed approvers
// (user ids or email addresses, at most maxApprovers),
// 1 <= required_count <= len(approvers) and
// 0 < window_seconds <= maxApprovalWindow. No account is looked up: each
// approver is an invitation (service.NormalizeApprovers).
func parseApproval(raw json.RawMessage) (store.Optional[store.ApprovalRule], error) {
	var out store.Optional[store.ApprovalRule]
	if raw == nil {
		return out, nil
	}
	out.Set = true
	if isNull(raw) {
		return out, nil
	}
	var rule store.ApprovalRule
	if err := decodeBytes(raw, &rule); err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			return out, errInvalidPayload("approval: %s", ae.message)
		}
		return out, err
	}
	if len(rule.Approvers) == 0 {
		return out, errInvalidPayload("approval.approvers must list at least one user (an id or an email address)")
	}
	if len(rule.Approvers) > maxApprovers {
		return out, errInvalidPayload("approval.approvers lists more than %d users", maxApprovers)
	}
	if rule.RequiredCount < 1 || rule.RequiredCount > len(rule.Approvers) {
		return out, errInvalidPayload("approval.required_count must be between 1 and the number of approvers (%d)", len(rule.Approvers))
	}
	if rule.WindowSeconds <= 0 || rule.WindowSeconds > maxApprovalWindow {
		return out, errInvalidPayload("approval.window_seconds must be between 1 and %d (one year)", maxApprovalWindow)
	}
	entries, err := service.NormalizeApprovers(rule.Approvers)
	if err != nil {
		return out, err
	}
	rule.Approvers = entries
	out.Value = &rule
	return out, nil
}

func (s *Server) handleDeleteChannel(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	if err := s.st.DeleteChannel(r.Context(), who.user.ID, p.ByName("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}

func (s *Server) handleRegenerateToken(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	c, err := s.st.RegenerateToken(r.Context(), who.user.ID, p.ByName("id"))
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
	c, err := s.st.RotateSecret(r.Context(), who.user.ID, p.ByName("id"))
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
	out := make([]approverJSON, len(list))
	for i, a := range list {
		out[i] = approverJSON{Entry: a.Entry, State: a.State}
		if a.State == store.InviteAccepted && a.UserID != "" {
			out[i].ID, out[i].Email, out[i].Name = &a.UserID, &a.Email, &a.Name
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvers": out})
	return nil
}
