package server

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/store"
)

// The page size of the lists that page by cursor: channels, devices,
// folders, pins, API keys and the admin's users. The default is the
// largest page, which holds the whole list of a user within the built-in
// caps, so a client that never pages sees every row as before.
const (
	listPageDefault = 500
	listPageMax     = 500
)

// listPage reads the page a list request asks for: ?limit= (1 to
// listPageMax) and ?cursor=, the next_cursor of an earlier page of the
// same list. Empty parameters count as absent, as on GET /v1/messages.
func listPage(r *http.Request, list string) (store.Page, error) {
	q := r.URL.Query()
	p := store.Page{Limit: listPageDefault}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > listPageMax {
			return p, errInvalidPayload("limit must be an integer from 1 to %d", listPageMax)
		}
		p.Limit = n
	}
	if v := q.Get("cursor"); v != "" {
		c, ok := decodeCursor(list, v)
		if !ok {
			return p, errInvalidPayload("cursor must be the next_cursor of an earlier page of this list")
		}
		p.After = c
	}
	return p, nil
}

// pageBody is the answer of a list: body (its rows, as {list: [...]})
// with next_cursor when another page follows. The last page, which is the
// only one of a list that fits in one, has no next_cursor: its answer is
// what lists answered before they paged.
func pageBody(body map[string]any, list string, next store.Cursor) map[string]any {
	if !next.IsZero() {
		body["next_cursor"] = encodeCursor(list, next)
	}
	return body
}

// encodeCursor is the opaque form of c, which names its list so that it
// is refused by any other.
func encodeCursor(list string, c store.Cursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(list + ":" + strconv.FormatInt(c.Key, 10) + ":" + c.ID))
}

func decodeCursor(list, v string) (store.Cursor, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return store.Cursor{}, false
	}
	parts := strings.SplitN(string(raw), ":", 3)
	if len(parts) != 3 || parts[0] != list || parts[2] == "" {
		return store.Cursor{}, false
	}
	key, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return store.Cursor{}, false
	}
	return store.Cursor{Key: key, ID: parts[2]}, true
}
