package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// apiError is an error a client is meant to see: an HTTP status and one of
// the API's error codes (docs/api.md), written as {"error": code, "message":
// message}.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func newError(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

func errInvalidJSON(format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, "invalid_json", format, args...)
}

func errInvalidPayload(format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, "invalid_payload", format, args...)
}

func errInvalidToken(format string, args ...any) *apiError {
	return newError(http.StatusUnauthorized, "invalid_token", format, args...)
}

func errForbidden(format string, args ...any) *apiError {
	return newError(http.StatusForbidden, "forbidden", format, args...)
}

func errNotFound(format string, args ...any) *apiError {
	return newError(http.StatusNotFound, "not_found", format, args...)
}

// writeError is the one place where an error becomes a response. Anything
// that is not a client's error (asAPIError) is logged with the request id
// and shown only as internal_error.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := s.shownError(r, err)
	writeJSON(w, ae.status, map[string]string{"error": ae.code, "message": ae.message})
}

// shownError is err as the client is shown it; an internal error is
// logged here and shown as internal_error.
func (s *Server) shownError(r *http.Request, err error) *apiError {
	ae, ok := asAPIError(err)
	if !ok {
		s.log.ErrorContext(r.Context(), "internal error", "request_id", requestID(r.Context()),
			"method", r.Method, "path", redactPath(r.URL.Path), "err", err)
		ae = newError(http.StatusInternalServerError, "internal_error", "internal error")
	}
	if len(ae.message) > maxErrorMessage {
		// A message that quotes what was sent (an unknown action, a
		// value) says enough in its first kilobytes: an answer never
		// echoes a large body back.
		cut := *ae
		cut.message = strings.ToValidUTF8(ae.message[:maxErrorMessage], "") + "…"
		ae = &cut
	}
	return ae
}

// maxErrorMessage is the longest error message shown, in bytes.
const maxErrorMessage = 2000

// asAPIError is how err is shown to the client: an *apiError, a rule's
// refusal, a known store error, or a body over the limit. It reports false
// for anything else, an internal failure.
func asAPIError(err error) (*apiError, bool) {
	var ae *apiError
	var mbe *http.MaxBytesError
	var se *service.Error
	switch {
	case errors.As(err, &ae):
		return ae, true
	case errors.As(err, &se):
		return serviceError(se), true
	case errors.As(err, &mbe) && mbe.Limit != maxBody:
		return newError(http.StatusRequestEntityTooLarge, "payload_too_large",
			"the request body is larger than %d bytes, the limit of a send with a file (attachments.max_file_size and 64 KiB)",
			mbe.Limit), true
	case errors.As(err, &mbe):
		return newError(http.StatusRequestEntityTooLarge, "payload_too_large",
			"the request body is larger than %d bytes (1 MiB), the limit of every endpoint", mbe.Limit), true
	case errors.Is(err, store.ErrNotFound):
		return errNotFound("not found"), true
	case errors.Is(err, store.ErrInvalidOrder):
		return errInvalidPayload("the list must name each of your items exactly once"), true
	case errors.Is(err, store.ErrInvalidFolder):
		return errInvalidPayload("folder_id: no such folder"), true
	}
	return nil, false
}

// serviceError is the API error of a rule's refusal.
func serviceError(e *service.Error) *apiError {
	switch e.Kind {
	case service.Forbidden:
		return errForbidden("%s", e.Message)
	case service.Conflict:
		return newError(http.StatusConflict, e.Code, "%s", e.Message)
	case service.NotFound:
		return errNotFound("%s", e.Message)
	case service.Unavailable:
		return newError(http.StatusServiceUnavailable, e.Code, "%s", e.Message)
	case service.Unauthenticated:
		return errInvalidToken("%s", e.Message)
	case service.TooLarge:
		return newError(http.StatusRequestEntityTooLarge, e.Code, "%s", e.Message)
	default:
		return errInvalidPayload("%s", e.Message)
	}
}
