package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/heraldhq/herald/store"
)

// apiError is an error a client is meant to see: an HTTP status and one of
// SPEC.md's codes, written as {"error": code, "message": message}.
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
// that is not an *apiError or a known store error is logged with the request
// id and shown only as internal_error.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &mbe):
		ae = errInvalidPayload("request body is larger than %d bytes", mbe.Limit)
	case errors.Is(err, store.ErrNotFound):
		ae = errNotFound("not found")
	case errors.Is(err, store.ErrInvalidOrder):
		ae = errInvalidPayload("the list must name each of your items exactly once")
	case errors.Is(err, store.ErrInvalidFolder):
		ae = errInvalidPayload("folder_id: no such folder")
	default:
		s.log.ErrorContext(r.Context(), "internal error", "request_id", requestID(r.Context()),
			"method", r.Method, "path", redactPath(r.URL.Path), "err", err)
		ae = newError(http.StatusInternalServerError, "internal_error", "internal error")
	}
	writeJSON(w, ae.status, map[string]string{"error": ae.code, "message": ae.message})
}
