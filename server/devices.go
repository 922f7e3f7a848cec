package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/service"
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
	switch req.Platform {
	case "ios", "android", "web":
	case "":
		return errInvalidPayload("platform is required: ios, android or web")
	default:
		return errInvalidPayload("platform must be ios, android or web")
	}
	if err := service.CheckPushToken(req.Platform, req.PushToken); err != nil {
		return err
	}
	if chars(req.Name) > 100 {
		return errInvalidPayload("name is longer than 100 characters")
	}
	d := &store.Device{Platform: req.Platform, Name: req.Name, PushToken: req.PushToken}
	if req.Platform == "web" {
		// Answers from this browser's notifications must come from the
		// session that registers it (see the notification endpoints).
		d.SessionID = who.sessionID
	}
	if err := s.svc.RegisterDevice(r.Context(), who.user, d); err != nil {
		return err
	}
	token, err := s.svc.ResubscribeToken(r.Context(), d)
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
	if req.PushToken == nil && req.Name == nil {
		return errInvalidPayload("send push_token and/or name")
	}
	if req.Name != nil && chars(*req.Name) > 100 {
		return errInvalidPayload("name is longer than 100 characters")
	}
	ctx := r.Context()
	if req.PushToken != nil {
		// The token format depends on the device's platform.
		d, err := s.st.Device(ctx, who.user.ID, p.ByName("id"))
		if err != nil {
			return err
		}
		if err := service.CheckPushToken(d.Platform, *req.PushToken); err != nil {
			return err
		}
	}
	d, err := s.st.UpdateDevice(ctx, who.user.ID, p.ByName("id"), store.DevicePatch{PushToken: req.PushToken, Name: req.Name})
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
	if err := s.st.DeleteDevice(r.Context(), who.user.ID, p.ByName("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}
