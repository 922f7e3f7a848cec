package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"
)

type keyJSON struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Prefix     string  `json:"prefix"`
	CreatedAt  string  `json:"created_at"`
	LastUsedAt *string `json:"last_used_at"`
}

func (s *Server) handleCreateKey(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	var req struct {
		Name *string `json:"name"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if req.Name == nil {
		return errInvalidPayload("name is required")
	}
	k, key, err := s.svc.CreateAPIKey(r.Context(), who.user.ID, *req.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]string{"id": k.ID, "name": k.Name, "key": key, "created_at": ts(k.CreatedAt)})
	return nil
}

func (s *Server) handleListKeys(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	page, err := listPage(r, "keys")
	if err != nil {
		return err
	}
	// Write buffered use times first, so the listing is current.
	if err := s.svc.FlushKeyUse(r.Context()); err != nil {
		return err
	}
	keys, next, err := s.st.ListAPIKeysPage(r.Context(), who.user.ID, page)
	if err != nil {
		return err
	}
	out := make([]keyJSON, len(keys))
	for i, k := range keys {
		out[i] = keyJSON{ID: k.ID, Name: k.Name, Prefix: k.Prefix, CreatedAt: ts(k.CreatedAt), LastUsedAt: tsPtr(k.LastUsedAt)}
	}
	writeJSON(w, http.StatusOK, pageBody(map[string]any{"keys": out}, "keys", next))
	return nil
}

func (s *Server) handleRevokeKey(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	if err := s.svc.RevokeAPIKey(r.Context(), who.user.ID, p.ByName("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "message": "API key revoked"})
	return nil
}
