package server

import (
	"reflect"
	"strings"
	"testing"
)

// TestQuietHoursAPI: GET shows the defaults until set; PUT (with a session
// or an API key) keeps every field and answers what is kept; each user has
// their own; a refusal names the field and changes nothing.
func TestQuietHoursAPI(t *testing.T) {
	e := newTestEnv(t)
	ann, bob := e.newUser("ann@example.com"), e.newUser("bob@example.com")
	defaults := map[string]any{"enabled": false, "start": "22:00", "end": "07:00", "time_zone": "UTC", "mode": "hold"}
	if got := e.do(200, "GET", "/v1/account/quiet-hours", nil, ann.Token).Body; !reflect.DeepEqual(got, defaults) {
		t.Fatalf("quiet hours before any = %v, want %v", got, defaults)
	}
	wantError(t, e.request("GET", "/v1/account/quiet-hours", nil, ""), 401, "invalid_token")

	set := map[string]any{"enabled": true, "start": "22:30", "end": "06:45", "time_zone": "Europe/Berlin", "mode": "silent"}
	if got := e.do(200, "PUT", "/v1/account/quiet-hours", set, e.apiKey(ann)).Body; !reflect.DeepEqual(got, set) {
		t.Fatalf("PUT answered %v, want %v", got, set)
	}
	if got := e.do(200, "GET", "/v1/account/quiet-hours", nil, ann.Token).Body; !reflect.DeepEqual(got, set) {
		t.Errorf("quiet hours once set = %v, want %v", got, set)
	}
	if got := e.do(200, "GET", "/v1/account/quiet-hours", nil, bob.Token).Body; !reflect.DeepEqual(got, defaults) {
		t.Errorf("another user's quiet hours = %v, want the defaults %v", got, defaults)
	}

	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for k, v := range set {
			m[k] = v
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, tt := range []struct {
		name string
		body any
		code string
		says string
	}{
		{"missing mode", with("mode", nil), "invalid_payload", "mode is required"},
		{"missing enabled", with("enabled", nil), "invalid_payload", "enabled is required"},
		{"unknown field", with("days", []string{"mon"}), "invalid_payload", "days"},
		{"bad start", with("start", "10pm"), "invalid_payload", "start must be a time of day as HH:MM"},
		{"bad zone", with("time_zone", "Europe/Atlantis"), "invalid_payload", `time_zone must be an IANA time zone`},
		{"bad mode", with("mode", "loud"), "invalid_payload", `mode must be "hold"`},
		{"enabled as a string", with("enabled", "yes"), "invalid_payload", `"enabled" must be of type boolean`},
		{"not JSON", "{", "invalid_json", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.request("PUT", "/v1/account/quiet-hours", tt.body, ann.Token)
			wantError(t, r, 400, tt.code)
			if !strings.Contains(r.Str("message"), tt.says) {
				t.Errorf("message %q does not say %q", r.Str("message"), tt.says)
			}
			if got := e.do(200, "GET", "/v1/account/quiet-hours", nil, ann.Token).Body; !reflect.DeepEqual(got, set) {
				t.Errorf("after a refusal the quiet hours are %v, want unchanged %v", got, set)
			}
		})
	}
}
