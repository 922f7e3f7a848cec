package server

import (
	"fmt"
	"strings"
	"testing"
)

// pinOrder is "channel_id@position" of each pin of token's user, read over HTTP.
func pinOrder(e *testEnv, token string) string {
	e.t.Helper()
	items := chItems(e.t, e.do(200, "GET", "/v1/pins", nil, token), "pins")
	parts := make([]string, len(items))
	for i, m := range items {
		parts[i] = fmt.Sprintf("%v@%v", m["channel_id"], m["position"])
	}
	return strings.Join(parts, ",")
}

// pinIDs is the channel ids of token's user's pins in list order; positions
// may have gaps after an unpin, so only the order is compared.
func pinIDs(e *testEnv, token string) string {
	e.t.Helper()
	return strings.Join(chIDs(chItems(e.t, e.do(200, "GET", "/v1/pins", nil, token), "pins"), "channel_id"), ",")
}

// pinWant builds the pinOrder string of channel ids at positions 0..n-1.
func pinWant(ids ...string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%s@%d", id, i)
	}
	return strings.Join(parts, ",")
}

// pinChannels creates n channels for u and returns their ids.
func pinChannels(e *testEnv, u *testUser, n int) []string {
	e.t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = e.newChannel(u, fmt.Sprintf("channel %d", i))["id"].(string)
	}
	return ids
}

func TestPinCreateAndList(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	ch := pinChannels(env, u, 3)
	if got := pinOrder(env, u.Token); got != "" {
		t.Fatalf("new user has pins %s", got)
	}

	for i, id := range []string{ch[2], ch[0]} {
		r := env.do(201, "POST", "/v1/pins", map[string]string{"channel_id": id}, u.Token)
		if r.Str("channel_id") != id || r.Body["position"] != float64(i) {
			t.Fatalf("pin %s = %s, want {channel_id %s, position %d}", id, r.Raw, id, i)
		}
	}
	r := env.do(200, "POST", "/v1/pins", map[string]string{"channel_id": ch[2]}, u.Token)
	if r.Str("channel_id") != ch[2] || r.Body["position"] != 0.0 {
		t.Fatalf("pinning again = %s, want the existing pin at position 0", r.Raw)
	}
	if got, want := pinOrder(env, u.Token), pinWant(ch[2], ch[0]); got != want {
		t.Fatalf("pins = %s, want %s", got, want)
	}

	// Works with an API key too.
	key := env.apiKey(u)
	env.do(201, "POST", "/v1/pins", map[string]string{"channel_id": ch[1]}, key)
	if got, want := pinOrder(env, key), pinWant(ch[2], ch[0], ch[1]); got != want {
		t.Fatalf("pins = %s, want %s", got, want)
	}
}

func TestPinValidation(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	other := env.newUser("bob@example.com")
	mine := pinChannels(env, u, 1)[0]
	theirs := pinChannels(env, other, 1)[0]
	env.do(201, "POST", "/v1/pins", map[string]string{"channel_id": mine}, u.Token)
	want := pinWant(mine)

	cases := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"another user's channel", map[string]any{"channel_id": theirs}, 404, "not_found"},
		{"unknown channel", map[string]any{"channel_id": "ch_doesnotexist000000000000"}, 404, "not_found"},
		{"missing channel_id", map[string]any{}, 400, "invalid_payload"},
		{"channel_id a number", map[string]any{"channel_id": 1}, 400, "invalid_payload"},
		{"unknown field", map[string]any{"channel_id": mine, "position": 0}, 400, "invalid_payload"},
		{"invalid JSON", `{"channel_id":`, 400, "invalid_json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := chSub(env, t)
			wantError(t, e.request("POST", "/v1/pins", tc.body, u.Token), tc.status, tc.code)
			if got := pinOrder(e, u.Token); got != want {
				t.Errorf("pins after rejected pin = %s, want %s", got, want)
			}
		})
	}
	if got := pinOrder(env, other.Token); got != "" {
		t.Errorf("the other user has pins %s, want none", got)
	}
}

func TestPinUnpin(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	other := env.newUser("bob@example.com")
	ch := pinChannels(env, u, 3)
	theirs := pinChannels(env, other, 1)[0]
	for _, id := range ch {
		env.do(201, "POST", "/v1/pins", map[string]string{"channel_id": id}, u.Token)
	}
	env.do(201, "POST", "/v1/pins", map[string]string{"channel_id": theirs}, other.Token)

	r := env.do(200, "DELETE", "/v1/pins", map[string]string{"channel_id": ch[1]}, u.Token)
	if ok, _ := r.Body["ok"].(bool); !ok {
		t.Fatalf("unpin = %s, want {ok:true}", r.Raw)
	}
	if got, want := pinIDs(env, u.Token), ch[0]+","+ch[2]; got != want {
		t.Fatalf("pins after body unpin = %s, want %s", got, want)
	}
	r = env.do(200, "DELETE", "/v1/pins?channel_id="+ch[0], nil, u.Token)
	if ok, _ := r.Body["ok"].(bool); !ok {
		t.Fatalf("unpin = %s, want {ok:true}", r.Raw)
	}
	if got, want := pinIDs(env, u.Token), ch[2]; got != want {
		t.Fatalf("pins after query unpin = %s, want %s", got, want)
	}
	if chStored(env, u.ID, ch[0]).Name == "" {
		t.Fatalf("unpinning deleted the channel")
	}

	cases := []struct {
		name   string
		path   string
		body   any
		status int
		code   string
	}{
		{"not pinned (body)", "/v1/pins", map[string]string{"channel_id": ch[1]}, 404, "not_found"},
		{"not pinned (query)", "/v1/pins?channel_id=" + ch[0], nil, 404, "not_found"},
		{"unknown channel", "/v1/pins?channel_id=ch_doesnotexist000000000000", nil, 404, "not_found"},
		{"another user's pin", "/v1/pins", map[string]string{"channel_id": theirs}, 404, "not_found"},
		{"missing channel_id", "/v1/pins", map[string]string{}, 400, "invalid_payload"},
		{"neither query nor body", "/v1/pins", nil, 400, "invalid_payload"},
		{"empty query value", "/v1/pins?channel_id=", nil, 400, "invalid_payload"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := chSub(env, t)
			wantError(t, e.request("DELETE", tc.path, tc.body, u.Token), tc.status, tc.code)
			if got, want := pinIDs(e, u.Token), ch[2]; got != want {
				t.Errorf("pins = %s, want %s", got, want)
			}
		})
	}
	if got, want := pinOrder(env, other.Token), pinWant(theirs); got != want {
		t.Errorf("the other user's pins = %s, want %s", got, want)
	}
}

func TestPinReorder(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	other := env.newUser("bob@example.com")
	ch := pinChannels(env, u, 4) // ch[3] stays unpinned
	theirs := pinChannels(env, other, 1)[0]
	for _, id := range ch[:3] {
		env.do(201, "POST", "/v1/pins", map[string]string{"channel_id": id}, u.Token)
	}
	env.do(201, "POST", "/v1/pins", map[string]string{"channel_id": theirs}, other.Token)

	r := env.do(200, "POST", "/v1/pins/reorder", map[string]any{"channel_ids": []string{ch[2], ch[0], ch[1]}}, u.Token)
	want := pinWant(ch[2], ch[0], ch[1])
	items := chItems(t, r, "pins")
	parts := make([]string, len(items))
	for i, m := range items {
		parts[i] = fmt.Sprintf("%v@%v", m["channel_id"], m["position"])
	}
	if got := strings.Join(parts, ","); got != want {
		t.Fatalf("reorder result = %s, want %s", got, want)
	}
	if got := pinOrder(env, u.Token); got != want {
		t.Fatalf("pins after reorder = %s, want %s", got, want)
	}

	cases := []struct {
		name string
		body any
		code string
	}{
		{"omits one", map[string]any{"channel_ids": []string{ch[2], ch[0]}}, "invalid_payload"},
		{"repeats one", map[string]any{"channel_ids": []string{ch[2], ch[0], ch[0]}}, "invalid_payload"},
		{"names an unpinned channel of mine", map[string]any{"channel_ids": []string{ch[2], ch[0], ch[3]}}, "invalid_payload"},
		{"adds an unpinned channel of mine", map[string]any{"channel_ids": []string{ch[2], ch[0], ch[1], ch[3]}}, "invalid_payload"},
		{"names another user's pin", map[string]any{"channel_ids": []string{ch[2], ch[0], theirs}}, "invalid_payload"},
		{"names an unknown id", map[string]any{"channel_ids": []string{ch[2], ch[0], "ch_doesnotexist000000000000"}}, "invalid_payload"},
		{"missing channel_ids", map[string]any{}, "invalid_payload"},
		{"uses the folder field name", map[string]any{"ids": []string{ch[1], ch[0], ch[2]}}, "invalid_payload"},
		{"invalid JSON", `{"channel_ids": [`, "invalid_json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := chSub(env, t)
			wantError(t, e.request("POST", "/v1/pins/reorder", tc.body, u.Token), 400, tc.code)
			if got := pinOrder(e, u.Token); got != want {
				t.Errorf("pins after rejected reorder = %s, want %s", got, want)
			}
		})
	}
	if got, want := pinOrder(env, other.Token), pinWant(theirs); got != want {
		t.Errorf("the other user's pins = %s, want %s", got, want)
	}
}

func TestPinRemovedWithItsChannel(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	ch := pinChannels(env, u, 2)
	for _, id := range ch {
		env.do(201, "POST", "/v1/pins", map[string]string{"channel_id": id}, u.Token)
	}
	env.do(200, "DELETE", "/v1/channels/"+ch[0], nil, u.Token)
	if got, want := pinIDs(env, u.Token), ch[1]; got != want {
		t.Fatalf("pins after deleting a pinned channel = %s, want %s", got, want)
	}
	wantError(t, env.request("DELETE", "/v1/pins?channel_id="+ch[0], nil, u.Token), 404, "not_found")
	// The remaining pin can still be reordered on its own.
	r := env.do(200, "POST", "/v1/pins/reorder", map[string]any{"channel_ids": []string{ch[1]}}, u.Token)
	if items := chItems(t, r, "pins"); len(items) != 1 || items[0]["channel_id"] != ch[1] || items[0]["position"] != 0.0 {
		t.Fatalf("reorder after delete = %s", r.Raw)
	}
}

func TestPinConcurrentPinsOfOneChannel(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	ch := pinChannels(env, u, 1)[0]
	statuses := chParallel(env, u.Token, 10, func(int) (string, string, string) {
		return "POST", "/v1/pins", `{"channel_id":"` + ch + `"}`
	})
	created := 0
	for _, s := range statuses {
		switch s {
		case 201:
			created++
		case 200:
		default:
			t.Fatalf("statuses %v, want one 201 and the rest 200", statuses)
		}
	}
	if created != 1 {
		t.Fatalf("statuses %v: %d created, want exactly 1", statuses, created)
	}
	if got, want := pinOrder(env, u.Token), pinWant(ch); got != want {
		t.Fatalf("pins = %s, want %s", got, want)
	}
}
