package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/store"
)

// quietHoursJSON is a user's quiet hours on the wire.
type quietHoursJSON struct {
	Enabled  bool   `json:"enabled"`
	Start    string `json:"start"`
	End      string `json:"end"`
	TimeZone string `json:"time_zone"`
	Mode     string `json:"mode"`
}

func renderQuietHours(q store.QuietHours) quietHoursJSON {
	return quietHoursJSON{Enabled: q.Enabled, Start: q.Start, End: q.End, TimeZone: q.TimeZone, Mode: q.Mode}
}

// handleGetQuietHours is GET /v1/account/quiet-hours: the caller's quiet
// hours, the defaults (off) until set.
func (s *Server) handleGetQuietHours(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	q, err := s.svc.QuietHours(r.Context(), who.user.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderQuietHours(q))
	return nil
}

// handlePutQuietHours is PUT /v1/account/quiet-hours: every field, as GET
// shows them; the answer is what is kept.
func (s *Server) handlePutQuietHours(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	var req struct {
		Enabled  *bool   `json:"enabled"`
		Start    *string `json:"start"`
		End      *string `json:"end"`
		TimeZone *string `json:"time_zone"`
		Mode     *string `json:"mode"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	for _, f := range []struct {
		name    string
		missing bool
	}{{"enabled", req.Enabled == nil}, {"start", req.Start == nil}, {"end", req.End == nil},
		{"time_zone", req.TimeZone == nil}, {"mode", req.Mode == nil}} {
		if f.missing {
			return errInvalidPayload("%s is required: send every field of the quiet hours", f.name)
		}
	}
	q, err := s.svc.SetQuietHours(r.Context(), who.user.ID, store.QuietHours{Enabled: *req.Enabled, Start: *req.Start,
		End: *req.End, TimeZone: *req.TimeZone, Mode: *req.Mode})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderQuietHours(q))
	return nil
}
