package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"
)

// Text that reaches the database must be text: PostgreSQL refuses a NUL
// or invalid UTF-8 in any text value, and SQLite's full-text search
// refuses a NUL in a search. Both would be an internal error; they are the
// client's, so they are refused here as bad input naming the parameter.

// cleanText reports whether v is valid UTF-8 without control characters.
func cleanText(v string) bool {
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(v[i:])
		if r == utf8.RuneError && n == 1 || unicode.IsControl(r) {
			return false
		}
		i += n
	}
	return true
}

// checkParams refuses a path or query parameter that is not clean text.
// Every id, token and filter Herald reads from a URL is plain text, so none
// of them needs a control character.
func checkParams(r *http.Request, p httprouter.Params) error {
	for _, param := range p {
		if !cleanText(param.Value) {
			return errInvalidPayload("%s in the path must be UTF-8 text without control characters", param.Key)
		}
	}
	if r.URL.RawQuery == "" {
		return nil
	}
	query := r.URL.Query()
	names := make([]string, 0, len(query))
	for name := range query {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !cleanText(name) {
			return errInvalidPayload("a query parameter's name must be UTF-8 text without control characters")
		}
		for _, v := range query[name] {
			if !cleanText(v) {
				return errInvalidPayload("%s must be UTF-8 text without control characters", name)
			}
		}
	}
	return nil
}

// checkNUL refuses a JSON body with a NUL (\u0000) in one of its strings,
// naming where. A body without the escape costs one scan.
func checkNUL(body []byte) error {
	if !bytes.Contains(body, []byte(`\u0000`)) {
		return nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil // the strict decode has accepted it; nothing to name
	}
	if where, ok := findNUL(v, ""); ok {
		if where == "" {
			return errInvalidPayload("the request body must not contain a NUL character (\\u0000)")
		}
		return errInvalidPayload("%s must not contain a NUL character (\\u0000)", where)
	}
	return nil // an escaped backslash before "u0000": no NUL
}

// findNUL returns the path of the first string in v (a decoded JSON value)
// that holds a NUL: a field name, or a value.
func findNUL(v any, at string) (string, bool) {
	switch v := v.(type) {
	case string:
		return at, strings.IndexByte(v, 0) >= 0
	case []any:
		for i, e := range v {
			if where, ok := findNUL(e, at+"["+strconv.Itoa(i)+"]"); ok {
				return where, true
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			field := k
			if at != "" {
				field = at + "." + k
			}
			if strings.IndexByte(k, 0) >= 0 {
				return "the field name " + strconv.Quote(field), true
			}
			if where, ok := findNUL(v[k], field); ok {
				return where, true
			}
		}
	}
	return "", false
}
