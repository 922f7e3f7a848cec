package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"
)

// handleChangePassword is POST /v1/account/password: {current_password,
// new_password}. This session stays signed in; the others end.
func (s *Server) handleChangePassword(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	var req struct {
		Current string `json:"current_password"`
		New     string `json:"new_password"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if err := s.svc.ChangePassword(r.Context(), who.user, who.sessionID, req.Current, req.New); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}

type identityJSON struct {
	Provider  string `json:"provider"`
	Email     string `json:"email"`
	CreatedAt string `json:"created_at"`
}

// handleAccount is GET /v1/account: the signed-in user, whether they have
// a local password, and their linked OIDC identities, in one answer.
func (s *Server) handleAccount(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	ids, err := s.st.Identities(r.Context(), who.user.ID)
	if err != nil {
		return err
	}
	out := make([]identityJSON, len(ids))
	for i, id := range ids {
		out[i] = identityJSON{Provider: id.Provider, Email: id.Email, CreatedAt: ts(id.CreatedAt)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"user": renderUser(who.user), "has_password": who.user.PasswordHash != "",
		"identities": out})
	return nil
}
