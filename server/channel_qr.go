package server

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"
	"github.com/skip2/go-qrcode"

	"github.com/heraldhq/herald/ntfy"
)

// qrSize is the QR code's width and height in pixels: big enough to scan
// from a laptop screen, small enough to fit a phone's.
const qrSize = 256

// handleChannelQR answers GET /v1/channels/:id/qr.png?for=ntfy: a PNG QR
// code of the link that subscribes the ntfy Android app to the channel.
// The link holds the channel's webhook token, so only its owner gets it,
// and never from a cache (every API answer is no-store).
func (s *Server) handleChannelQR(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	if f := r.URL.Query().Get("for"); f != "ntfy" {
		return errInvalidPayload("for must be ntfy (the QR code of the ntfy app's subscribe link), not %q", f)
	}
	c, err := s.st.Channel(r.Context(), who.user.ID, p.ByName("id"))
	if err != nil {
		return err
	}
	link, err := ntfy.SubscribeLink(s.baseURL, c.WebhookToken, c.Name)
	if errors.Is(err, ntfy.ErrLinkPath) {
		return errNotFound("no ntfy subscribe link: base_url %s has a path, and the app's link names only a host; add the server in the app by hand", s.baseURL)
	}
	if err != nil {
		return err
	}
	png, err := qrcode.Encode(link, qrcode.Medium, qrSize)
	if err != nil {
		return fmt.Errorf("server: channel QR code: %w", err)
	}
	h := w.Header()
	h.Set("Content-Type", "image/png")
	h.Set("Content-Length", strconv.Itoa(len(png)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(png)
	return err
}
