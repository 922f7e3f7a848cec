package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/store"
)

type deviceJSON struct {
	ID        string `json:"id"`
	Platform  string `json:"platform"`
	Name      string `json:"name"`
	Active    bool   `json:"active"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// registeredDeviceJSON is a registration's answer: a web device registered
// by a browser session also gets the token its service worker keeps to
// hand in a rotated subscription (POST /v1/devices/:id/subscription).
type registeredDeviceJSON struct {
	deviceJSON
	WorkerToken string `json:"worker_token,omitempty"`
}

func renderDevice(d *store.Device) deviceJSON {
	return deviceJSON{ID: d.ID, Platform: d.Platform, Name: d.Name, Active: d.Active, CreatedAt: ts(d.CreatedAt), UpdatedAt: ts(d.UpdatedAt)}
}

func (s *Server) handleRegisterDevice(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	var req struct {
		Platform  string `json:"platform"`
		PushToken string `json:"push_token"`
		Name      string `json:"name"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	d := &store.Device{Platform: req.Platform, Name: req.Name, PushToken: req.PushToken}
	token, err := s.svc.RegisterDevice(r.Context(), who.user, who.sessionID, d)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, registeredDeviceJSON{deviceJSON: renderDevice(d), WorkerToken: token})
	return nil
}

func (s *Server) handleUpdateDevice(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	var req struct {
		PushToken *string `json:"push_token"`
		Name      *string `json:"name"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	d, err := s.svc.UpdateDevice(r.Context(), who.user.ID, p.ByName("id"), store.DevicePatch{PushToken: req.PushToken, Name: req.Name})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderDevice(d))
	return nil
}

func (s *Server) handleListDevices(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	page, err := listPage(r, "devices")
	if err != nil {
		return err
	}
	devs, next, err := s.st.ListDevicesPage(r.Context(), who.user.ID, page)
	if err != nil {
		return err
	}
	out := make([]deviceJSON, len(devs))
	for i := range devs {
		out[i] = renderDevice(&devs[i])
	}
	writeJSON(w, http.StatusOK, pageBody(map[string]any{"devices": out}, "devices", next))
	return nil
}

func (s *Server) handleDeleteDevice(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	if err := s.svc.DeleteDevice(r.Context(), who.user.ID, p.ByName("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}
