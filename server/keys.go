package server

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/store"
)

// maxActiveKeys is SPEC.md's limit of active API keys per user.
const maxActiveKeys = 10

// NewAPIKey returns a fresh key: "pk_live_" and 32 base62 characters.
func NewAPIKey() string { return apiKeyPrefix + store.NewToken(32) }

type keyJSON struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Prefix     string  `json:"prefix"`
	CreatedAt  string  `json:"created_at"`
	LastUsedAt *string `json:"last_used_at"`
}

// CreateAPIKey makes and stores a key for userID and returns the key itself,
// which is never shown again. Shared by the API and `herald key create`.
func CreateAPIKey(ctx context.Context, st *store.Store, userID, name string) (*store.APIKey, string, error) {
	key := NewAPIKey()
	k := &store.APIKey{UserID: userID, Name: name, Prefix: key[:12]}
	if err := st.CreateAPIKey(ctx, k, store.HashToken(key), maxActiveKeys); err != nil {
		if errors.Is(err, store.ErrLimit) {
			return nil, "", errInvalidPayload("a user can have at most %d active API keys; revoke one first", maxActiveKeys)
		}
		return nil, "", err
	}
	return k, key, nil
}

func (s *Server) handleCreateKey(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	var req struct {
		Name *string `json:"name"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if req.Name == nil || strings.TrimSpace(*req.Name) == "" {
		return errInvalidPayload("name is required")
	}
	if chars(*req.Name) > 100 {
		return errInvalidPayload("name is longer than 100 characters")
	}
	k, key, err := CreateAPIKey(r.Context(), s.st, who.user.ID, strings.TrimSpace(*req.Name))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]string{"id": k.ID, "name": k.Name, "key": key, "created_at": ts(k.CreatedAt)})
	return nil
}

func (s *Server) handleListKeys(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	// Write buffered use times first, so the listing is current.
	if err := s.flushKeyUse(r.Context()); err != nil {
		return err
	}
	keys, err := s.st.ListAPIKeys(r.Context(), who.user.ID)
	if err != nil {
		return err
	}
	out := make([]keyJSON, len(keys))
	for i, k := range keys {
		out[i] = keyJSON{ID: k.ID, Name: k.Name, Prefix: k.Prefix, CreatedAt: ts(k.CreatedAt), LastUsedAt: tsPtr(k.LastUsedAt)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": out})
	return nil
}

func (s *Server) handleRevokeKey(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	if err := s.st.RevokeAPIKey(r.Context(), who.user.ID, p.ByName("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "message": "API key revoked"})
	return nil
}
