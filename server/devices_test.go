package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
)

var devIDRe = regexp.MustCompile(`^dev_[0-9A-Za-z]{20,}$`)

// devWebToken is a browser PushSubscription, as the web app sends it.
const devWebToken = `{"endpoint":"https://push.example.com/abc","keys":` + devWebKeys + `}`

// devWebKeys are a browser's subscription keys: a P-256 point and a
// 16-byte auth secret, base64url.
const devWebKeys = `{"p256dh":"BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM","auth":"tBHItJI5svbpez7KI4CCXg"}`

// devRegister registers a device and returns its JSON.
func devRegister(e *testEnv, token, platform, pushToken, name string) map[string]any {
	e.t.Helper()
	return e.do(201, "POST", "/v1/devices", map[string]string{"platform": platform, "push_token": pushToken, "name": name}, token).Body
}

// devList returns the ids of token's user's devices, read over HTTP.
func devList(e *testEnv, token string) []string {
	e.t.Helper()
	r := e.do(200, "GET", "/v1/devices", nil, token)
	if strings.Contains(string(r.Raw), "push_token") {
		e.t.Fatalf("device list shows push tokens: %s", r.Raw)
	}
	return chIDs(chItems(e.t, r, "devices"), "id")
}

// devStored reads a device straight from the store.
func devStored(e *testEnv, userID, id string) *store.Device {
	e.t.Helper()
	d, err := e.st.Device(context.Background(), userID, id)
	if err != nil {
		e.t.Fatalf("store: device %s: %v", id, err)
	}
	return d
}

func TestDeviceRegister(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	const apns = "a3f1c2d4e5b6978812345678901234567890abcdefabcdefabcdefabcdef0123"

	r := env.do(201, "POST", "/v1/devices", map[string]string{"platform": "ios", "push_token": apns, "name": "Ann's iPhone"}, u.Token)
	id := r.Str("id")
	if !devIDRe.MatchString(id) {
		t.Fatalf("id = %q, want dev_ + 20+ base62", id)
	}
	if r.Str("platform") != "ios" || r.Str("name") != "Ann's iPhone" {
		t.Errorf("device = %s", r.Raw)
	}
	now := env.clock.Now()
	if !chTime(t, r.Body, "created_at").Equal(now) || !chTime(t, r.Body, "updated_at").Equal(now) {
		t.Errorf("created_at %s, updated_at %s, want %v", r.Str("created_at"), r.Str("updated_at"), now)
	}
	if _, ok := r.Body["push_token"]; ok || strings.Contains(string(r.Raw), apns) {
		t.Fatalf("response shows the push token: %s", r.Raw)
	}
	if d := devStored(env, u.ID, id); d.PushToken != apns || d.Platform != "ios" || d.UserID != u.ID {
		t.Fatalf("stored device = %+v", d)
	}

	for _, p := range []struct{ platform, token string }{{"android", "fcm-registration-token-1"}, {"web", devWebToken}} {
		d := devRegister(env, u.Token, p.platform, p.token, "")
		if d["platform"] != p.platform || !devIDRe.MatchString(d["id"].(string)) {
			t.Errorf("%s device = %v", p.platform, d)
		}
		if got := devStored(env, u.ID, d["id"].(string)).PushToken; got != p.token {
			t.Errorf("%s stored push token = %q, want %q", p.platform, got, p.token)
		}
	}
	if got := devList(env, u.Token); len(got) != 3 {
		t.Fatalf("devices = %v, want 3", got)
	}

	// An API key may register devices too.
	key := env.apiKey(u)
	devRegister(env, key, "android", "fcm-registration-token-2", "tablet")
	if got := devList(env, key); len(got) != 4 {
		t.Fatalf("devices = %v, want 4", got)
	}
}

func TestDeviceRegisterValidation(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	sub := func(endpoint, keys string) string {
		return `{"endpoint":"` + endpoint + `"` + keys + `}`
	}
	keys := `,"keys":` + devWebKeys

	cases := []struct {
		name string
		body any
		code string
	}{
		{"platform missing", map[string]any{"push_token": "tok"}, "invalid_payload"},
		{"platform windows", map[string]any{"platform": "windows", "push_token": "tok"}, "invalid_payload"},
		{"platform upper case", map[string]any{"platform": "IOS", "push_token": "tok"}, "invalid_payload"},
		{"push_token missing", map[string]any{"platform": "ios"}, "invalid_payload"},
		{"push_token blank", map[string]any{"platform": "android", "push_token": "  "}, "invalid_payload"},
		{"push_token too long", map[string]any{"platform": "android", "push_token": strings.Repeat("t", 4097)}, "invalid_payload"},
		{"push_token a number", map[string]any{"platform": "ios", "push_token": 12}, "invalid_payload"},
		{"web token not JSON", map[string]any{"platform": "web", "push_token": "abc123"}, "invalid_payload"},
		{"web token JSON array", map[string]any{"platform": "web", "push_token": `["https://push.example.com/abc"]`}, "invalid_payload"},
		{"web endpoint http", map[string]any{"platform": "web", "push_token": sub("http://push.example.com/abc", keys)}, "invalid_payload"},
		{"web endpoint not a URL", map[string]any{"platform": "web", "push_token": sub("push.example.com/abc", keys)}, "invalid_payload"},
		{"web endpoint missing", map[string]any{"platform": "web", "push_token": `{"keys":{"p256dh":"BNc","auth":"tBH"}}`}, "invalid_payload"},
		{"web keys missing", map[string]any{"platform": "web", "push_token": sub("https://push.example.com/abc", "")}, "invalid_payload"},
		{"web auth key missing", map[string]any{"platform": "web", "push_token": sub("https://push.example.com/abc", `,"keys":{"p256dh":"BNc"}`)}, "invalid_payload"},
		{"web p256dh key missing", map[string]any{"platform": "web", "push_token": sub("https://push.example.com/abc", `,"keys":{"auth":"tBH"}`)}, "invalid_payload"},
		{"name of 101 characters", map[string]any{"platform": "ios", "push_token": "tok", "name": strings.Repeat("é", 101)}, "invalid_payload"},
		{"unknown field", map[string]any{"platform": "ios", "push_token": "tok", "model": "iPhone"}, "invalid_payload"},
		{"invalid JSON", `{"platform":"ios",`, "invalid_json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := chSub(env, t)
			wantError(t, e.request("POST", "/v1/devices", tc.body, u.Token), 400, tc.code)
			if got := devList(e, u.Token); len(got) != 0 {
				t.Errorf("devices after rejected register = %v, want none", got)
			}
		})
	}
	t.Run("a valid web subscription", func(t *testing.T) {
		e := chSub(env, t)
		d := devRegister(e, u.Token, "web", devWebToken, "Firefox")
		if d["platform"] != "web" || d["name"] != "Firefox" {
			t.Errorf("device = %v", d)
		}
	})
}

func TestDeviceRegisterSameTokenTwice(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	other := env.newUser("bob@example.com")
	first := devRegister(env, u.Token, "android", "fcm-token-same", "Pixel")
	id := first["id"].(string)
	env.clock.Advance(time.Minute)

	second := devRegister(env, u.Token, "android", "fcm-token-same", "Pixel 8")
	if second["id"] != id {
		t.Fatalf("second registration id = %v, want the same device %s", second["id"], id)
	}
	if second["name"] != "Pixel 8" || second["created_at"] != first["created_at"] {
		t.Errorf("second registration = %v, want renamed with the first created_at %v", second, first["created_at"])
	}
	if !chTime(t, second, "updated_at").Equal(env.clock.Now()) {
		t.Errorf("updated_at = %v, want %v", second["updated_at"], env.clock.Now())
	}
	if got := devList(env, u.Token); len(got) != 1 || got[0] != id {
		t.Fatalf("devices = %v, want only %s", got, id)
	}
	// Another user registering the same token (they signed in on this
	// phone) gets a device of their own, and the token leaves the first user.
	theirs := devRegister(env, other.Token, "android", "fcm-token-same", "")
	if theirs["id"] == id {
		t.Fatalf("another user's registration reused %s", id)
	}
	if got := devList(env, u.Token); len(got) != 0 {
		t.Fatalf("devices after the other user registered = %v, want none", got)
	}
}

func TestDeviceUpdate(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	other := env.newUser("eve@example.com")
	d := devRegister(env, u.Token, "ios", "apns-old", "iPhone")
	id := d["id"].(string)
	web := devRegister(env, u.Token, "web", devWebToken, "Browser")["id"].(string)
	env.clock.Advance(time.Minute)

	r := env.do(200, "PATCH", "/v1/devices/"+id, map[string]string{"push_token": "apns-new"}, u.Token)
	if r.Str("id") != id || r.Str("platform") != "ios" || r.Str("name") != "iPhone" || r.Body["created_at"] != d["created_at"] {
		t.Fatalf("PATCH = %s, want the same device", r.Raw)
	}
	if strings.Contains(string(r.Raw), "apns-new") {
		t.Fatalf("PATCH response shows the push token: %s", r.Raw)
	}
	if !chTime(t, r.Body, "updated_at").Equal(env.clock.Now()) {
		t.Errorf("updated_at = %s, want %v", r.Str("updated_at"), env.clock.Now())
	}
	if got := devStored(env, u.ID, id).PushToken; got != "apns-new" {
		t.Fatalf("stored push token = %q, want apns-new", got)
	}

	cases := []struct {
		name   string
		id     string
		body   any
		status int
		code   string
	}{
		{"empty body object", id, map[string]any{}, 400, "invalid_payload"},
		{"blank push_token", id, map[string]any{"push_token": ""}, 400, "invalid_payload"},
		{"push_token null", id, map[string]any{"push_token": nil}, 400, "invalid_payload"},
		{"unknown field", id, map[string]any{"push_token": "apns-x", "platform": "android"}, 400, "invalid_payload"},
		{"invalid JSON", id, `{"push_token":`, 400, "invalid_json"},
		{"web device with a non-subscription token", web, map[string]any{"push_token": "not-json"}, 400, "invalid_payload"},
		{"web device with an http endpoint", web, map[string]any{"push_token": strings.Replace(devWebToken, "https:", "http:", 1)}, 400, "invalid_payload"},
		{"unknown device", "dev_doesnotexist00000000000", map[string]any{"push_token": "apns-x"}, 404, "not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := chSub(env, t)
			wantError(t, e.request("PATCH", "/v1/devices/"+tc.id, tc.body, u.Token), tc.status, tc.code)
			if got := devStored(e, u.ID, id).PushToken; got != "apns-new" {
				t.Errorf("push token = %q after a rejected PATCH", got)
			}
			if got := devStored(e, u.ID, web).PushToken; got != devWebToken {
				t.Errorf("web push token = %q after a rejected PATCH", got)
			}
		})
	}

	t.Run("another user's device", func(t *testing.T) {
		e := chSub(env, t)
		for _, body := range []map[string]string{{"push_token": "stolen"}, {"name": "stolen"}} {
			wantError(t, e.request("PATCH", "/v1/devices/"+id, body, other.Token), 404, "not_found")
		}
		if got := devStored(e, u.ID, id); got.PushToken != "apns-new" || got.Name != "iPhone" {
			t.Errorf("owner's device changed: %+v", got)
		}
	})
}

func TestDeviceListAndDelete(t *testing.T) {
	env := newTestEnv(t)
	u := env.newUser("ann@example.com")
	other := env.newUser("eve@example.com")
	mine := devRegister(env, u.Token, "ios", "apns-ann", "iPhone")["id"].(string)
	env.clock.Advance(time.Second)
	mine2 := devRegister(env, u.Token, "android", "fcm-ann", "Pixel")["id"].(string)
	theirs := devRegister(env, other.Token, "ios", "apns-eve", "Eve's")["id"].(string)

	if got := devList(env, u.Token); strings.Join(got, ",") != mine+","+mine2 {
		t.Fatalf("devices = %v, want [%s %s]", got, mine, mine2)
	}
	list := chItems(t, env.do(200, "GET", "/v1/devices", nil, u.Token), "devices")
	if list[0]["platform"] != "ios" || list[0]["name"] != "iPhone" || list[1]["platform"] != "android" {
		t.Errorf("device list = %v", list)
	}

	wantError(t, env.request("DELETE", "/v1/devices/"+theirs, nil, u.Token), 404, "not_found")
	if got := devList(env, other.Token); len(got) != 1 || got[0] != theirs {
		t.Fatalf("the other user's devices = %v, want [%s]", got, theirs)
	}

	r := env.do(200, "DELETE", "/v1/devices/"+mine, nil, u.Token)
	if ok, _ := r.Body["ok"].(bool); !ok {
		t.Fatalf("DELETE = %s, want {ok:true}", r.Raw)
	}
	if got := devList(env, u.Token); len(got) != 1 || got[0] != mine2 {
		t.Fatalf("devices after delete = %v, want [%s]", got, mine2)
	}
	if _, err := env.st.Device(context.Background(), u.ID, mine); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted device in the store: err %v", err)
	}
	wantError(t, env.request("DELETE", "/v1/devices/"+mine, nil, u.Token), 404, "not_found")
	wantError(t, env.request("PATCH", "/v1/devices/"+mine, map[string]string{"push_token": "x"}, u.Token), 404, "not_found")
}

func TestDeviceTokenMovesToNewUser(t *testing.T) {
	env := newTestEnv(t)
	a, b := env.newUser("dev-a@example.com"), env.newUser("dev-b@example.com")
	body := map[string]string{"platform": "ios", "push_token": "shared-phone-token", "name": "phone"}
	env.do(201, "POST", "/v1/devices", body, a.Token)
	env.do(201, "POST", "/v1/devices", body, b.Token)
	if got := env.do(200, "GET", "/v1/devices", nil, a.Token).Body["devices"].([]any); len(got) != 0 {
		t.Fatalf("user A still has %d devices with the token user B registered", len(got))
	}
	if got := env.do(200, "GET", "/v1/devices", nil, b.Token).Body["devices"].([]any); len(got) != 1 {
		t.Fatalf("user B has %d devices, want 1", len(got))
	}
}

// TestDeviceWebPushKeysChecked: a web subscription whose keys no push can
// be encrypted to, or whose endpoint is not https, is refused at
// registration and on PATCH with 400 naming the field, and nothing
// changes: no device, or the stored subscription as it was.
func TestDeviceWebPushKeysChecked(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("keys@example.com")
	enc := base64.RawURLEncoding
	offCurve := make([]byte, 65)
	offCurve[0], offCurve[32], offCurve[64] = 4, 1, 1
	var good struct{ P256dh, Auth string }
	if err := json.Unmarshal([]byte(devWebKeys), &good); err != nil {
		t.Fatal(err)
	}
	point, _ := enc.DecodeString(good.P256dh)
	sub := func(endpoint, p256dh, auth string) string {
		b, _ := json.Marshal(map[string]any{"endpoint": endpoint, "keys": map[string]string{"p256dh": p256dh, "auth": auth}})
		return string(b)
	}
	const endpoint = "https://push.example.com/abc"
	bad := []struct{ token, field string }{
		{sub(endpoint, enc.EncodeToString(offCurve), good.Auth), "push_token.keys.p256dh"},
		{sub(endpoint, enc.EncodeToString(append([]byte{2}, point[1:33]...)), good.Auth), "push_token.keys.p256dh"},
		{sub(endpoint, "BNc", good.Auth), "push_token.keys.p256dh"},
		{sub(endpoint, "+/+/"+good.P256dh[4:], good.Auth), "push_token.keys.p256dh"},
		{sub(endpoint, good.P256dh, enc.EncodeToString(make([]byte, 15))), "push_token.keys.auth"},
		{sub(endpoint, good.P256dh, "tBH"), "push_token.keys.auth"},
		{sub(endpoint, good.P256dh, ""), "push_token.keys.auth"},
		{sub("http://push.example.com/abc", good.P256dh, good.Auth), "push_token.endpoint"},
		{sub("https://user:pw@push.example.com/abc", good.P256dh, good.Auth), "push_token.endpoint"},
	}
	for _, tc := range bad {
		r := env.request("POST", "/v1/devices", map[string]string{"platform": "web", "push_token": tc.token, "name": "Firefox"}, u.Token)
		wantError(t, r, 400, "invalid_payload")
		if !strings.Contains(r.Str("message"), tc.field) {
			t.Errorf("register %s: message %q does not name %s", tc.token, r.Str("message"), tc.field)
		}
	}
	if got := devList(env, u.Token); len(got) != 0 {
		t.Fatalf("devices after refused registrations = %v, want none", got)
	}

	id := devRegister(env, u.Token, "web", devWebToken, "Firefox")["id"].(string)
	for _, tc := range bad {
		r := env.request("PATCH", "/v1/devices/"+id, map[string]string{"push_token": tc.token}, u.Token)
		wantError(t, r, 400, "invalid_payload")
		if !strings.Contains(r.Str("message"), tc.field) {
			t.Errorf("update %s: message %q does not name %s", tc.token, r.Str("message"), tc.field)
		}
	}
	if d := devStored(env, u.ID, id); d.PushToken != devWebToken || !d.Active {
		t.Fatalf("after refused updates the device holds %q (active %v), want %q", d.PushToken, d.Active, devWebToken)
	}
}
