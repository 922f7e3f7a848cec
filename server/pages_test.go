package server

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// pagedList is one of the lists that page by cursor, as a test reads it.
type pagedList struct {
	path, key, id string // the endpoint, its array field, the field that identifies a row
	token         string
}

// whole reads the list without parameters: one answer, exactly as lists
// answered before they paged ({key: [...]}, nothing more), for a user
// within the caps.
func (l pagedList) whole(t *testing.T, env *testEnv) []string {
	t.Helper()
	r := env.do(200, "GET", l.path, nil, l.token)
	authWantKeys(t, l.path+" without parameters", r.Body, l.key)
	return chIDs(chItems(t, r, l.key), l.id)
}

// paged reads the list limit rows at a time, following next_cursor, and
// checks that every page but the last has one and the last has none.
func (l pagedList) paged(t *testing.T, env *testEnv, limit int) (ids []string, pages int) {
	t.Helper()
	cursor := ""
	for {
		q := url.Values{"limit": {fmt.Sprint(limit)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		r := env.do(200, "GET", l.path+"?"+q.Encode(), nil, l.token)
		rows := chIDs(chItems(t, r, l.key), l.id)
		if len(rows) > limit {
			t.Fatalf("%s page %d: %d rows, more than limit %d", l.path, pages, len(rows), limit)
		}
		ids = append(ids, rows...)
		pages++
		next, has := r.Body["next_cursor"]
		if !has {
			return ids, pages
		}
		if cursor, _ = next.(string); cursor == "" || len(rows) != limit {
			t.Fatalf("%s page %d: next_cursor %v after %d of %d rows", l.path, pages, next, len(rows), limit)
		}
		if pages > 50 {
			t.Fatalf("%s: the pages do not end", l.path)
		}
	}
}

// TestListsPage: every list that pages answers its whole list, as before,
// when asked without parameters; read a page at a time it gives the same
// rows in the same order, each once, and its last page has no
// next_cursor. A bad limit or cursor is 400 invalid_payload naming it.
func TestListsPage(t *testing.T) {
	env := newTestEnv(t)
	admin := env.newAdmin("root@example.com")
	u := env.newUser("ann@example.com")
	const n = 5
	var chans []string
	for i := range n {
		chans = append(chans, env.newChannel(u, fmt.Sprint("c", i))["id"].(string))
		env.do(201, "POST", "/v1/folders", map[string]string{"name": fmt.Sprint("f", i)}, u.Token)
		devRegister(env, u.Token, "android", fmt.Sprint("token-", i), "")
		env.do(201, "POST", "/v1/keys", map[string]string{"name": fmt.Sprint("k", i)}, u.Token)
		if i > 1 {
			env.newUser(fmt.Sprint("u", i, "@example.com"))
		}
	}
	// Pins and folders in an order of the user's, not of creation.
	for _, i := range []int{3, 0, 4, 1, 2} {
		env.do(201, "POST", "/v1/pins", map[string]string{"channel_id": chans[i]}, u.Token)
	}
	folders := chIDs(chItems(t, env.do(200, "GET", "/v1/folders", nil, u.Token), "folders"), "id")
	slices.Reverse(folders)
	env.do(200, "POST", "/v1/folders/reorder", map[string]any{"ids": folders}, u.Token)

	lists := []pagedList{
		{"/v1/channels", "channels", "id", u.Token},
		{"/v1/folders", "folders", "id", u.Token},
		{"/v1/pins", "pins", "channel_id", u.Token},
		{"/v1/devices", "devices", "id", u.Token},
		{"/v1/keys", "keys", "id", u.Token},
		{"/v1/admin/users", "users", "id", admin.Token},
	}
	for _, l := range lists {
		t.Run(l.key, func(t *testing.T) {
			env := chSub(env, t)
			whole := l.whole(t, env)
			if len(whole) != n {
				t.Fatalf("%s lists %d rows, want %d", l.path, len(whole), n)
			}
			switch l.key {
			case "pins":
				if want := []string{chans[3], chans[0], chans[4], chans[1], chans[2]}; !slices.Equal(whole, want) {
					t.Fatalf("pins %v, want the pinned order %v", whole, want)
				}
			case "folders":
				if !slices.Equal(whole, folders) {
					t.Fatalf("folders %v, want the new order %v", whole, folders)
				}
			}
			for _, limit := range []int{1, 2, n, n + 1, 500} {
				got, pages := l.paged(t, env, limit)
				if !slices.Equal(got, whole) || pages != (n+limit-1)/limit {
					t.Fatalf("limit %d: %d pages of %v, want %d pages of %v", limit, pages, got, (n+limit-1)/limit, whole)
				}
			}

			// A cursor of this list, and one of another.
			first := env.do(200, "GET", l.path+"?limit=1", nil, l.token)
			cursor := first.Str("next_cursor")
			other := "/v1/channels"
			if l.path == other {
				other = "/v1/devices"
			}
			foreign := env.do(200, "GET", other+"?limit=1", nil, u.Token).Str("next_cursor")
			if cursor == "" || foreign == "" {
				t.Fatalf("no next_cursor after the first of %d rows", n)
			}
			for _, bad := range []struct{ query, names string }{
				{"limit=0", "limit"}, {"limit=501", "limit"}, {"limit=-1", "limit"}, {"limit=two", "limit"},
				{"cursor=" + url.QueryEscape("not a cursor!"), "cursor"},
				{"cursor=" + base64.RawURLEncoding.EncodeToString([]byte(l.key+":x:"+whole[0])), "cursor"},
				{"cursor=" + foreign, "cursor"},
				{"limit=0&cursor=" + cursor, "limit"},
			} {
				r := env.request("GET", l.path+"?"+bad.query, nil, l.token)
				wantError(t, r, 400, "invalid_payload")
				if !strings.Contains(r.Str("message"), bad.names) {
					t.Errorf("?%s: message %q does not name %s", bad.query, r.Str("message"), bad.names)
				}
			}
		})
	}
}
