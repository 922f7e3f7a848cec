package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/store"
)

type folderJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Position  int    `json:"position"`
	CreatedAt string `json:"created_at"`
}

func renderFolders(fs []store.Folder) map[string]any {
	out := make([]folderJSON, len(fs))
	for i, f := range fs {
		out[i] = folderJSON{ID: f.ID, Name: f.Name, Position: f.Position, CreatedAt: ts(f.CreatedAt)}
	}
	return map[string]any{"folders": out}
}

func (s *Server) handleListFolders(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	page, err := listPage(r, "folders")
	if err != nil {
		return err
	}
	fs, next, err := s.st.ListFoldersPage(r.Context(), who.user.ID, page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, pageBody(renderFolders(fs), "folders", next))
	return nil
}

// folderName reads the {name} body of create and rename.
func folderName(r *http.Request) (string, error) {
	var req struct {
		Name string `json:"name"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return "", err
	}
	return req.Name, nil
}

func (s *Server) handleCreateFolder(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	name, err := folderName(r)
	if err != nil {
		return err
	}
	f := &store.Folder{Name: name}
	if err := s.svc.CreateFolder(r.Context(), who.user, f); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, folderJSON{ID: f.ID, Name: f.Name, Position: f.Position, CreatedAt: ts(f.CreatedAt)})
	return nil
}

func (s *Server) handleRenameFolder(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	name, err := folderName(r)
	if err != nil {
		return err
	}
	f, err := s.svc.RenameFolder(r.Context(), who.user.ID, p.ByName("id"), name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, folderJSON{ID: f.ID, Name: f.Name, Position: f.Position, CreatedAt: ts(f.CreatedAt)})
	return nil
}

func (s *Server) handleDeleteFolder(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	if err := s.svc.DeleteFolder(r.Context(), who.user.ID, p.ByName("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}

// idList reads a reorder body {field: [ids...]}.
func idList(r *http.Request, field string) ([]string, error) {
	var req map[string]*[]string
	if err := decodeJSON(r, &req); err != nil {
		return nil, err
	}
	for k := range req {
		if k != field {
			return nil, errInvalidPayload("unknown field %q", k)
		}
	}
	ids := req[field]
	if ids == nil {
		return nil, errInvalidPayload("%s is required: every item, once, in the new order", field)
	}
	return *ids, nil
}

func (s *Server) handleReorderFolders(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	ids, err := idList(r, "ids")
	if err != nil {
		return err
	}
	fs, err := s.svc.ReorderFolders(r.Context(), who.user.ID, ids)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderFolders(fs))
	return nil
}
