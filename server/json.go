package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"
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
// object, with no fields dst does not know. A body that is not JSON is
// invalid_json, with a message that says what was sent instead; unknown
// fields and wrong types are invalid_payload naming the field, and so is a
// NUL in a string (checkNUL).
func decodeJSON(r *http.Request, dst any) error {
	body, err := readBody(r)
	if err != nil {
		return bodyError(err)
	}
	return decodeBytes(body, dst)
}

// decodeJSONWithNUL is decodeJSON for a body whose strings may hold a NUL:
// one that never reaches the database.
func decodeJSONWithNUL(r *http.Request, dst any) error {
	body, err := readBody(r)
	if err != nil {
		return bodyError(err)
	}
	return decodeStrict(body, dst, "")
}

// bodyError is the error of a body that could not be read: over the limit
// (413, see asAPIError), or cut short by the client.
func bodyError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	return errInvalidJSON("the request body could not be read in full; send it again")
}

// decodeBytes is decodeJSON for a body already read.
func decodeBytes(body []byte, dst any) error {
	return decodeExample(body, dst, "")
}

// decodeExample is decodeBytes for an endpoint whose messages quote an
// example of what it takes (example: a JSON object).
func decodeExample(body []byte, dst any, example string) error {
	if err := decodeStrict(body, dst, example); err != nil {
		return err
	}
	return checkNUL(body)
}

// decodeStrict decodes one JSON object with no unknown fields, as
// decodeExample without the check for NULs.
func decodeStrict(body []byte, dst any, example string) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return errInvalidJSON("the request body is empty; it must be %s", wanted(example))
	}
	if !startsLikeJSON(trimmed[0]) && !json.Valid(trimmed) {
		return errInvalidJSON("the request body must be %s; got %s", wanted(example), describeBody(trimmed))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err, body, wanted(example))
	}
	var extra json.RawMessage
	if dec.More() || dec.Decode(&extra) != io.EOF {
		return errInvalidJSON("the request body has more after its JSON value; it must be one JSON object")
	}
	return nil
}

// wanted says what a body must be, for a message: built only when one is
// written, since every request passes by.
func wanted(example string) string {
	if example == "" {
		return "a JSON object"
	}
	return "a JSON object such as " + example
}

// startsLikeJSON reports whether c can begin a JSON value a client meant to
// send: an object, an array, a string or a number. A body that starts
// otherwise and is not a JSON literal (true, false, null) is text that was
// never meant as JSON.
func startsLikeJSON(c byte) bool {
	switch {
	case c == '{', c == '[', c == '"', c == '-', c >= '0' && c <= '9':
		return true
	}
	return false
}

// formData matches a body of key=value pairs, as curl -d 'a=b&c=d' or an
// HTML form sends.
var formData = regexp.MustCompile(`^[A-Za-z0-9_.\-\[\]%+]+=[^&]*(&[A-Za-z0-9_.\-\[\]%+]+=[^&]*)*$`)

// describeBody names what a body that is not JSON looks like.
func describeBody(body []byte) string {
	switch {
	case formData.Match(body):
		return "form data (key=value pairs)"
	case bytes.HasPrefix(body, []byte("<")):
		return "markup (HTML or XML)"
	}
	return "plain text"
}

// jsonError is the API's error for a body that could not be read or
// decoded, when the body itself is not at hand.
func jsonError(err error) error {
	return decodeError(err, nil, "a JSON object")
}

// decodeError turns a decoding error of body into the API's error. Its
// messages say where the JSON went wrong in the client's terms (line and
// column, what is there), never in the decoder's own words.
func decodeError(err error, body []byte, want string) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return errInvalidJSON("the request body is not valid JSON: %s; it must be %s", syntaxPlace(body, syn.Offset), want)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errInvalidJSON("the request body is not valid JSON: it ends before its value does (a missing } ] or \"); it must be %s", want)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return errInvalidPayload("the request body must be a JSON object, not %s", jsonValueName(typ.Value))
		}
		return errInvalidPayload("field %q must be of type %s", jsonPath(typ.Field), jsonType(typ.Type.Kind().String()))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return errInvalidPayload("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	default:
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return errInvalidJSON("the request body is not valid JSON; it must be %s", want)
	}
}

// jsonPath is a decoding error's field path without the names of the Go
// structs embedded in the request's type (respondRequest.action is
// action): the decoder names them, though the JSON has no such level.
// Herald's JSON names are lower case; an embedded struct's is camelCase.
func jsonPath(field string) string {
	parts := strings.Split(field, ".")
	kept := parts[:0]
	for i, p := range parts {
		if i < len(parts)-1 && embeddedName.MatchString(p) { // a key (bigImageUrl) ends the path
			continue
		}
		kept = append(kept, p)
	}
	return strings.Join(kept, ".")
}

var embeddedName = regexp.MustCompile(`^[a-z]+(?:[A-Z][a-z0-9]*)+$`)

// syntaxPlace says where a syntax error is, for a person: the line and
// column of the byte the decoder stopped at, and what is there.
func syntaxPlace(body []byte, offset int64) string {
	at := int(offset) - 1 // the decoder counts the offending byte as read
	if at < 0 {
		at = 0
	}
	if at >= len(body) {
		return fmt.Sprintf("something is wrong at byte %d", offset)
	}
	line := 1 + bytes.Count(body[:at], []byte("\n"))
	col := 1 + utf8.RuneCount(body[bytes.LastIndexByte(body[:at], '\n')+1:at])
	near := body[at:min(len(body), at+12)]
	if i := bytes.IndexByte(near, '\n'); i >= 0 {
		near = near[:i]
	}
	where := fmt.Sprintf("unexpected %q at line %d, column %d", near, line, col)
	if body[at] == '\'' {
		where += " (JSON strings take double quotes)"
	}
	return where
}

// jsonValueName names the kind of a JSON value as the decoder reports it.
func jsonValueName(v string) string {
	switch v {
	case "array":
		return "an array"
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "true or false"
	}
	return v
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
	case "float32", "float64":
		return "number"
	default:
		return "whole number" // 1.5 is a number, and still refused
	}
}
