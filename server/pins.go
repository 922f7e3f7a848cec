package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/store"
)

type pinJSON struct {
	ChannelID string `json:"channel_id"`
	Position  int    `json:"position"`
}

func renderPins(ps []store.Pin) map[string]any {
	out := make([]pinJSON, len(ps))
	for i, p := range ps {
		out[i] = pinJSON{ChannelID: p.ChannelID, Position: p.Position}
	}
	return map[string]any{"pins": out}
}

func (s *Server) handleListPins(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	page, err := listPage(r, "pins")
	if err != nil {
		return err
	}
	ps, next, err := s.st.ListPinsPage(r.Context(), who.user.ID, page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, pageBody(renderPins(ps), "pins", next))
	return nil
}

type pinRequest struct {
	ChannelID string `json:"channel_id"`
}

// handlePin pins a channel: 201 when new, 200 when it already was pinned.
func (s *Server) handlePin(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	var req pinRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	p, created, err := s.svc.PinChannel(r.Context(), who.user, req.ChannelID)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, pinJSON{ChannelID: p.ChannelID, Position: p.Position})
	return nil
}

// handleUnpin takes the channel from ?channel_id= or a {channel_id} body.
func (s *Server) handleUnpin(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	id := r.URL.Query().Get("channel_id")
	// No query parameter and no body at all is a missing channel_id, not bad JSON.
	if id == "" && r.ContentLength != 0 {
		var req pinRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		id = req.ChannelID
	}
	if id == "" {
		return errInvalidPayload("channel_id is required (query parameter or JSON body)")
	}
	if err := s.svc.UnpinChannel(r.Context(), who.user.ID, id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}

func (s *Server) handleReorderPins(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	ids, err := idList(r, "channel_ids")
	if err != nil {
		return err
	}
	ps, err := s.svc.ReorderPins(r.Context(), who.user.ID, ids)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderPins(ps))
	return nil
}
