package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/store"
)

// handleSend is POST /v1/send/{token}: the whole path a script's curl takes.
// It answers 200 only after the message is committed.
func (s *Server) handleSend(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	ctx := r.Context()
	ch, plan, err := s.st.ChannelByToken(ctx, p.ByName("token"))
	if errors.Is(err, store.ErrNotFound) {
		return errInvalidToken("no channel has this webhook token")
	}
	if err != nil {
		return err
	}
	if err := s.rateLimit(w, "send|"+ch.ID, s.cfg.Plans.Limits(plan).SendPerMinute); err != nil {
		return err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return jsonError(err)
	}
	pl, err := parseSend(body)
	if err != nil {
		return err
	}
	actions := pl.Actions
	if ch.Approval != nil && len(actions) == 0 {
		actions = approvalActions
	}
	if actions == nil {
		actions = []action{}
	}
	actionsJSON, err := json.Marshal(actions)
	if err != nil {
		return err
	}
	m := &store.Message{
		ChannelID: ch.ID, Title: strings.TrimSpace(*pl.Title), Body: pl.Body, Priority: pl.Priority,
		Actions: actionsJSON, CallbackURL: pl.CallbackURL, Muted: ch.Muted(s.now()), Approval: ch.Approval,
	}
	if err := s.st.CreateMessage(ctx, m); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "id": m.ID, "muted": m.Muted})
	return nil
}
