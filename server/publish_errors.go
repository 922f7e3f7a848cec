package server

import (
	"errors"
	"net/http"

	"github.com/heraldhq/herald/ntfy"
)

// The ntfy and Gotify front doors answer errors in their protocol's shape,
// which their senders parse; what they say is what Herald's own API says.

// writeNtfyError answers err as ntfy does: {"code","http","error"}, code
// being ntfy's five-digit code for it (the status and two digits).
func (s *Server) writeNtfyError(w http.ResponseWriter, r *http.Request, err error) {
	var pe *ntfy.ParamError
	if errors.As(err, &pe) {
		writeJSON(w, pe.Status(), ntfy.Error{Code: pe.Code, HTTP: pe.Status(), Error: pe.Msg})
		return
	}
	ae := s.shownError(r, err)
	if ae.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", ntfyRealm) // ntfy's clients then ask for credentials
	}
	writeJSON(w, ae.status, ntfy.Error{Code: ntfyCode(ae.status), HTTP: ae.status, Error: ae.message})
}

// ntfyCode is ntfy's code for a refusal with this status that ntfy has no
// more precise code for.
func ntfyCode(status int) int {
	switch status {
	case http.StatusBadRequest:
		return ntfy.CodeBadRequest
	case http.StatusUnauthorized:
		return ntfy.CodeUnauthorized
	case http.StatusNotFound:
		return ntfy.CodeNotFound
	case http.StatusRequestEntityTooLarge:
		return ntfy.CodeTooLarge
	case http.StatusTooManyRequests:
		return ntfy.CodeTooManyRequests
	case http.StatusInternalServerError:
		return ntfy.CodeInternalError
	}
	return status*100 + 1
}

// gotifyError is Gotify's error answer.
type gotifyError struct {
	Error       string `json:"error"`            // the status text
	Code        int    `json:"errorCode"`        // the HTTP status
	Description string `json:"errorDescription"` // what went wrong
}

// writeGotifyError answers err as Gotify does.
func (s *Server) writeGotifyError(w http.ResponseWriter, r *http.Request, err error) {
	var pe *ntfy.ParamError
	ae := &apiError{}
	if errors.As(err, &pe) {
		ae.status, ae.message = pe.Status(), pe.Msg
	} else {
		ae = s.shownError(r, err)
	}
	writeJSON(w, ae.status, gotifyError{Error: http.StatusText(ae.status), Code: ae.status, Description: ae.message})
}
