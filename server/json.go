package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// Header values shared by every JSON response. Assigned straight into the
// header map (their keys are already canonical), which saves Header.Set's
// key canonicalisation and slice on the hot path; net/http copies the map
// before it writes, and a later Add would append to a full slice, that is
// to a copy, so sharing them is safe.
var (
	jsonContentType = []string{"application/json; charset=utf-8"}
	noSniff         = []string{"nosniff"}
)

// writeJSON writes v with status. Encoding errors can only come from a broken
// connection, which nobody is left to tell.
func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["X-Content-Type-Options"] = noSniff
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeRawJSON is writeJSON for a body already encoded.
func writeRawJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["X-Content-Type-Options"] = noSniff
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// readBody reads a request body whole, into a buffer of the announced size
// when there is one (the body limit still applies: r.Body is a
// MaxBytesReader).
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= maxBody {
		buf := make([]byte, n)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			return nil, err // a short body is io.ErrUnexpectedEOF, as from io.ReadAll
		}
		return buf, nil
	}
	return io.ReadAll(r.Body)
}

// decodeJSON reads the request body into dst strictly: it must be one JSON
// value, with no fields dst does not know. Syntax errors are invalid_json;
// unknown fields and wrong types are invalid_payload naming the field, and
// so is a NUL in a string (checkNUL).
func decodeJSON(r *http.Request, dst any) error {
	body, err := readJSONBody(r)
	if err != nil {
		return err
	}
	return decodeBytes(body, dst)
}

// decodeJSONWithNUL is decodeJSON for a body whose strings may hold a NUL:
// one that never reaches the database.
func decodeJSONWithNUL(r *http.Request, dst any) error {
	body, err := readJSONBody(r)
	if err != nil {
		return err
	}
	return decodeStrict(body, dst)
}

func readJSONBody(r *http.Request) ([]byte, error) {
	body, err := readBody(r)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, err
		}
		return nil, errInvalidJSON("could not read request body: %v", err)
	}
	return body, nil
}

// decodeBytes is decodeJSON for a body already read.
func decodeBytes(body []byte, dst any) error {
	if err := decodeStrict(body, dst); err != nil {
		return err
	}
	return checkNUL(body)
}

func decodeStrict(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return errInvalidJSON("request body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return errInvalidJSON("request body has data after the JSON value")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return errInvalidJSON("request body has data after the JSON value")
	}
	return nil
}

func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return errInvalidJSON("invalid JSON at byte %d: %v", syn.Offset, syn)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errInvalidJSON("invalid JSON: unexpected end of input")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return errInvalidPayload("request body must be a JSON object")
		}
		return errInvalidPayload("field %q must be of type %s", typ.Field, jsonType(typ.Type.Kind().String()))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return errInvalidPayload("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	default:
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return errInvalidJSON("invalid JSON: %v", err)
	}
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct", "ptr":
		return "object"
	default:
		return "number"
	}
}
