package server

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

var fldIDRe = regexp.MustCompile(`^fld_[0-9A-Za-z]{20,}$`)

// fldList returns token's user's folders, read over HTTP.
func fldList(e *testEnv, token string) []map[string]any {
	e.t.Helper()
	return chItems(e.t, e.do(200, "GET", "/v1/folders", nil, token), "folders")
}

// fldCreate creates a folder and returns its id.
func fldCreate(e *testEnv, token, name string) string {
	e.t.Helper()
	return e.do(201, "POST", "/v1/folders", map[string]string{"name": name}, token).Str("id")
}

// fldOrder is "id@position" of each folder, for comparing orders in one line.
func fldOrder(items []map[string]any) string {
	parts := make([]string, len(items))
	for i, m := range items {
		parts[i] = fmt.Sprintf("%v@%v", m["id"], m["position"])
	}
	return strings.Join(parts, ",")
}

// fldWant builds the fldOrder string of ids at positions 0..n-1.
func fldWant(ids ...string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%s@%d", id, i)
	}
	return strings.Join(parts, ",")
}

func TestFolderCreateAndList(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	other := env.newUser("bob@example.com")
	if got := fldList(env, u.Token); len(got) != 0 {
		t.Fatalf("new user has folders %v", got)
	}
	fldCreate(env, other.Token, "not mine")

	var ids []string
	for i, name := range []string{"Work", "Home", "Ops"} {
		r := env.do(201, "POST", "/v1/folders", map[string]string{"name": name}, u.Token)
		if !fldIDRe.MatchString(r.Str("id")) {
			t.Fatalf("id = %q, want fld_ + 20+ base62", r.Str("id"))
		}
		if r.Str("name") != name {
			t.Errorf("name = %q, want %q", r.Str("name"), name)
		}
		if pos, ok := r.Body["position"].(float64); !ok || int(pos) != i {
			t.Errorf("folder %d: position = %v, want %d", i, r.Body["position"], i)
		}
		if got := chTime(t, r.Body, "created_at"); !got.Equal(env.clock.Now()) {
			t.Errorf("created_at = %v, want %v", got, env.clock.Now())
		}
		ids = append(ids, r.Str("id"))
		env.clock.Advance(time.Second)
	}

	list := fldList(env, u.Token)
	if got, want := fldOrder(list), fldWant(ids...); got != want {
		t.Fatalf("list = %s, want %s", got, want)
	}
	if list[1]["name"] != "Home" {
		t.Errorf("list[1] = %v, want Home", list[1])
	}
	if len(fldList(env, other.Token)) != 1 {
		t.Errorf("the other user's folders changed")
	}
}

func TestFolderNameValidation(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	id := fldCreate(env, u.Token, "Original")

	cases := []struct {
		name string
		body any
		code string
	}{
		{"missing name", map[string]any{}, "invalid_payload"},
		{"blank name", map[string]any{"name": "  \t "}, "invalid_payload"},
		{"name of 101 characters", map[string]any{"name": strings.Repeat("é", 101)}, "invalid_payload"},
		{"name is a number", map[string]any{"name": 3}, "invalid_payload"},
		{"unknown field", map[string]any{"name": "ok", "position": 4}, "invalid_payload"},
		{"invalid JSON", `{"name"`, "invalid_json"},
	}
	for _, tc := range cases {
		t.Run("create "+tc.name, func(t *testing.T) {
			e := chSub(env, t)
			wantError(t, e.request("POST", "/v1/folders", tc.body, u.Token), 400, tc.code)
			if got := fldList(e, u.Token); len(got) != 1 {
				t.Errorf("folders after rejected create: %v, want 1", got)
			}
		})
		t.Run("rename "+tc.name, func(t *testing.T) {
			e := chSub(env, t)
			wantError(t, e.request("PATCH", "/v1/folders/"+id, tc.body, u.Token), 400, tc.code)
			if got := fldList(e, u.Token); len(got) != 1 || got[0]["name"] != "Original" {
				t.Errorf("folders after rejected rename: %v", got)
			}
		})
	}
	t.Run("100 two-byte characters are accepted", func(t *testing.T) {
		e := chSub(env, t)
		name := strings.Repeat("é", 100)
		if got := e.do(201, "POST", "/v1/folders", map[string]string{"name": name}, u.Token).Str("name"); got != name {
			t.Errorf("name = %q", got)
		}
	})
}

func TestFolderRename(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	first := fldCreate(env, u.Token, "First")
	created := env.do(201, "POST", "/v1/folders", map[string]string{"name": "Second"}, u.Token).Body
	id := created["id"].(string)
	env.clock.Advance(time.Minute)

	r := env.do(200, "PATCH", "/v1/folders/"+id, map[string]string{"name": "  Renamed "}, u.Token)
	if r.Str("id") != id || r.Str("name") != "Renamed" || r.Body["position"] != 1.0 || r.Body["created_at"] != created["created_at"] {
		t.Fatalf("PATCH = %s, want the same folder renamed to Renamed at position 1", r.Raw)
	}
	list := fldList(env, u.Token)
	if got, want := fldOrder(list), fldWant(first, id); got != want || list[1]["name"] != "Renamed" || list[0]["name"] != "First" {
		t.Fatalf("list after rename = %v", list)
	}
	wantError(t, env.request("PATCH", "/v1/folders/fld_doesnotexist00000000000", map[string]string{"name": "x"}, u.Token), 404, "not_found")
}

func TestFolderDeleteReleasesChannels(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	doomed := fldCreate(env, u.Token, "Doomed")
	kept := fldCreate(env, u.Token, "Kept")
	inDoomed := env.newChannel(u, "in doomed")["id"].(string)
	inKept := env.newChannel(u, "in kept")["id"].(string)
	env.do(200, "PATCH", "/v1/channels/"+inDoomed, map[string]any{"folder_id": doomed}, u.Token)
	env.do(200, "PATCH", "/v1/channels/"+inKept, map[string]any{"folder_id": kept}, u.Token)

	r := env.do(200, "DELETE", "/v1/folders/"+doomed, nil, u.Token)
	if ok, _ := r.Body["ok"].(bool); !ok {
		t.Fatalf("DELETE = %s, want {ok:true}", r.Raw)
	}
	if got := fldList(env, u.Token); len(got) != 1 || got[0]["id"] != kept {
		t.Fatalf("folders after delete = %v, want only %s", got, kept)
	}
	c := env.do(200, "GET", "/v1/channels/"+inDoomed, nil, u.Token)
	if v, ok := c.Body["folder_id"]; !ok || v != nil {
		t.Fatalf("channel of a deleted folder has folder_id %v, want null", v)
	}
	if st := chStored(env, u.ID, inDoomed); st.FolderID != nil {
		t.Fatalf("stored folder_id = %s, want nil", *st.FolderID)
	}
	if got := env.do(200, "GET", "/v1/channels/"+inKept, nil, u.Token).Str("folder_id"); got != kept {
		t.Fatalf("channel in another folder: folder_id %q, want %q", got, kept)
	}
	wantError(t, env.request("DELETE", "/v1/folders/"+doomed, nil, u.Token), 404, "not_found")
	wantError(t, env.request("PATCH", "/v1/channels/"+inDoomed, map[string]any{"folder_id": doomed}, u.Token), 400, "invalid_payload")
}

func TestFolderOfAnotherUserIsNotFound(t *testing.T) {
	env := newTestEnv(t)
	owner := env.newUser("ann@example.com")
	intruder := env.newUser("eve@example.com")
	id := fldCreate(env, owner.Token, "Private")
	fldCreate(env, intruder.Token, "Eve's")

	wantError(t, env.request("PATCH", "/v1/folders/"+id, map[string]string{"name": "Taken"}, intruder.Token), 404, "not_found")
	wantError(t, env.request("DELETE", "/v1/folders/"+id, nil, intruder.Token), 404, "not_found")
	if got := fldList(env, owner.Token); len(got) != 1 || got[0]["id"] != id || got[0]["name"] != "Private" {
		t.Fatalf("owner's folders = %v, want Private unchanged", got)
	}
	for _, f := range fldList(env, intruder.Token) {
		if f["id"] == id {
			t.Fatalf("intruder lists the owner's folder")
		}
	}
}

func TestFolderReorder(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	a := fldCreate(env, u.Token, "A")
	b := fldCreate(env, u.Token, "B")
	c := fldCreate(env, u.Token, "C")

	r := env.do(200, "POST", "/v1/folders/reorder", map[string]any{"ids": []string{c, a, b}}, u.Token)
	if got, want := fldOrder(chItems(t, r, "folders")), fldWant(c, a, b); got != want {
		t.Fatalf("reorder result = %s, want %s", got, want)
	}
	if got, want := fldOrder(fldList(env, u.Token)), fldWant(c, a, b); got != want {
		t.Fatalf("list after reorder = %s, want %s", got, want)
	}
	if names := chIDs(fldList(env, u.Token), "name"); strings.Join(names, "") != "CAB" {
		t.Fatalf("names after reorder = %v, want C A B", names)
	}
	// A folder created after a reorder goes to the end.
	d := fldCreate(env, u.Token, "D")
	if got, want := fldOrder(fldList(env, u.Token)), fldWant(c, a, b, d); got != want {
		t.Fatalf("list after create = %s, want %s", got, want)
	}
}

func TestFolderReorderValidation(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	other := env.newUser("bob@example.com")
	a := fldCreate(env, u.Token, "A")
	b := fldCreate(env, u.Token, "B")
	c := fldCreate(env, u.Token, "C")
	theirs := fldCreate(env, other.Token, "Bob's")
	want := fldWant(a, b, c)

	cases := []struct {
		name string
		body any
		code string
	}{
		{"omits one", map[string]any{"ids": []string{c, a}}, "invalid_payload"},
		{"repeats one in place of another", map[string]any{"ids": []string{c, a, a}}, "invalid_payload"},
		{"repeats one besides all", map[string]any{"ids": []string{c, a, b, a}}, "invalid_payload"},
		{"includes another user's folder", map[string]any{"ids": []string{c, a, theirs}}, "invalid_payload"},
		{"adds another user's folder", map[string]any{"ids": []string{c, a, b, theirs}}, "invalid_payload"},
		{"includes an unknown id", map[string]any{"ids": []string{c, a, "fld_doesnotexist00000000000"}}, "invalid_payload"},
		{"empty list", map[string]any{"ids": []string{}}, "invalid_payload"},
		{"missing ids", map[string]any{}, "invalid_payload"},
		{"ids null", map[string]any{"ids": nil}, "invalid_payload"},
		{"ids not an array", map[string]any{"ids": c}, "invalid_payload"},
		{"unknown field", map[string]any{"ids": []string{c, a, b}, "channel_ids": []string{}}, "invalid_payload"},
		{"invalid JSON", `{"ids": [`, "invalid_json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := chSub(env, t)
			wantError(t, e.request("POST", "/v1/folders/reorder", tc.body, u.Token), 400, tc.code)
			if got := fldOrder(fldList(e, u.Token)); got != want {
				t.Errorf("order after rejected reorder = %s, want %s", got, want)
			}
		})
	}
	if got := fldList(env, other.Token); len(got) != 1 || got[0]["position"] != 0.0 {
		t.Errorf("the other user's folders changed: %v", got)
	}
}

func TestFolderConcurrentCreateGetsDistinctPositions(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	const n = 20
	statuses := chParallel(env, u.Token, n, func(i int) (string, string, string) {
		return "POST", "/v1/folders", fmt.Sprintf(`{"name":"F%d"}`, i)
	})
	for i, s := range statuses {
		if s != 201 {
			t.Fatalf("create %d: status %d, want 201", i, s)
		}
	}
	list := fldList(env, u.Token)
	if len(list) != n {
		t.Fatalf("%d folders, want %d", len(list), n)
	}
	for i, f := range list {
		if f["position"] != float64(i) {
			t.Fatalf("folder %d has position %v, want %d (positions must be distinct, 0..n-1)", i, f["position"], i)
		}
	}
}
