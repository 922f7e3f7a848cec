package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// writeJSON writes v with status. Encoding errors can only come from a broken
// connection, which nobody is left to tell.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decodeJSON reads the request body into dst strictly: it must be one JSON
// value, with no fields dst does not know. Syntax errors are invalid_json;
// unknown fields and wrong types are invalid_payload naming the field.
func decodeJSON(r *http.Request, dst any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return errInvalidJSON("could not read request body: %v", err)
	}
	return decodeBytes(body, dst)
}

// decodeBytes is decodeJSON for a body already read.
func decodeBytes(body []byte, dst any) error {
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
