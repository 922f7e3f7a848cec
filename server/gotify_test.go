package server

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// gotifyAnswer is Gotify's message answer, decoded with the types Gotify's
// clients use (shoutrrr's: uint64 ids).
type gotifyAnswer struct {
	ID       uint64         `json:"id"`
	AppID    uint64         `json:"appid"`
	Message  string         `json:"message"`
	Title    string         `json:"title"`
	Priority int            `json:"priority"`
	Extras   map[string]any `json:"extras"`
	Date     time.Time      `json:"date"`
}

// gotifyPost posts to /message and decodes the answer; it fails t unless
// the status is want.
func gotifyPost(t testing.TB, e *testEnv, want int, path string, body string, headers ...string) (gotifyAnswer, gotifyError) {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	status, _, raw := rawCall(t, "POST", e.srv.URL+path, b, headers...)
	if status != want {
		t.Fatalf("POST %s: status %d, want %d; body %s", path, status, want, raw)
	}
	var a gotifyAnswer
	var ge gotifyError
	if status < 400 {
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatalf("answer %s: %v", raw, err)
		}
	} else if err := json.Unmarshal(raw, &ge); err != nil || ge.Code != status || ge.Error == "" || ge.Description == "" {
		t.Fatalf("error %s is not Gotify's {error, errorCode, errorDescription} for %d", raw, status)
	}
	return a, ge
}

func TestGotifyMessage(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, e *testEnv) {
		u := e.newUser("gotify@example.com")
		chID, token := msgChannel(e, u, "Proxmox")
		jsonCT := []string{"Content-Type", "application/json"}
		tests := []struct {
			name    string
			path    string
			body    string
			headers []string
			title   string
			message string
			level   string
		}{
			{"token in the query", "/message?token=" + token, `{"message":"Backup ok","title":"pve1","priority":2}`, jsonCT, "pve1", "Backup ok", "low"},
			{"X-Gotify-Key", "/message", `{"message":"m","priority":5}`, append([]string{"X-Gotify-Key", token}, jsonCT...), "Proxmox", "m", "normal"},
			{"Bearer", "/message", `{"message":"m","priority":8}`, append([]string{"Authorization", "Bearer " + token}, jsonCT...), "Proxmox", "m", "high"},
			{"JSON without a Content-Type", "/message?token=" + token, `{"message":"m","priority":"10"}`, nil, "Proxmox", "m", "high"},
			{"form", "/message?token=" + token, "title=T&message=from+form&priority=4",
				[]string{"Content-Type", "application/x-www-form-urlencoded"}, "T", "from form", "normal"},
			{"query", "/message?token=" + token + "&message=from+query&title=Q&priority=0", "", nil, "Q", "from query", "low"},
			{"no priority", "/message?token=" + token, `{"message":"m"}`, jsonCT, "Proxmox", "m", "normal"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				a, _ := gotifyPost(t, e, 200, tt.path, tt.body, tt.headers...)
				if a.ID == 0 || a.ID >= 1<<53 || a.AppID != gotifyID(chID) || a.Title != tt.title || a.Message != tt.message ||
					time.Since(a.Date) > time.Minute {
					t.Fatalf("answer %+v", a)
				}
				// The id is the Herald message's, as a number: find it.
				page := e.do(200, "GET", "/v1/messages?channel_id="+chID, nil, u.Token)
				var id string
				for _, m := range page.Body["messages"].([]any) {
					if mid := m.(map[string]any)["id"].(string); gotifyID(mid) == a.ID {
						id = mid
					}
				}
				if id == "" {
					t.Fatalf("no message of the channel has Gotify id %d", a.ID)
				}
				sm, _ := storedExtras(t, e, id)
				if sm.Title != tt.title || sm.Body != tt.message || sm.Priority != tt.level {
					t.Fatalf("stored %q / %q / %q, want %q / %q / %q", sm.Title, sm.Body, sm.Priority, tt.title, tt.message, tt.level)
				}
			})
		}
	})
}

func TestGotifyPriorities(t *testing.T) {
	for p, want := range map[int][2]any{-2: {"low", 1}, 0: {"low", 1}, 3: {"low", 2}, 4: {"normal", 3}, 7: {"normal", 3},
		8: {"high", 4}, 9: {"high", 4}, 10: {"high", 5}} {
		n := gotifyNumber(p)
		pl, answered, err := gotifyPayload(testChannel(), &gotifyIn{Message: ptrTo("m"), Priority: &n})
		if err != nil || pl.Priority != want[0] || pl.NtfyPriority != want[1] || answered != p {
			t.Errorf("priority %d: %q / ntfy %d / answered %d, %v; want %v", p, pl.Priority, pl.NtfyPriority, answered, err, want)
		}
	}
}

func TestGotifyExtras(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("gotify@example.com")
	_, token := msgChannel(e, u, "Cams")
	body := `{"message":"**Motion** at the door","extras":{"client::display":{"contentType":"text/markdown"},
		"client::notification":{"click":{"url":"https://cams.lan/door"},"bigImageUrl":"https://cams.lan/door.jpg"},
		"home::door":{"open":true}}}`
	a, _ := gotifyPost(t, e, 200, "/message?token="+token, body, "Content-Type", "application/json")
	var want map[string]any
	if err := json.Unmarshal([]byte(body), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Extras, want["extras"]) {
		t.Fatalf("answer extras %v, want them as sent", a.Extras)
	}
	pl, _, err := gotifyPayload(testChannel(), &gotifyIn{Message: ptrTo("m"), Extras: want["extras"].(map[string]any)})
	if err != nil || !pl.Markdown || pl.Click != "https://cams.lan/door" || pl.Attachment == nil ||
		*pl.Attachment != (service.AttachmentRequest{URL: "https://cams.lan/door.jpg", Lenient: true}) {
		t.Fatalf("payload %+v, %v: want markdown, the click URL and the big image to fetch", pl, err)
	}
	// cams.lan is no host here: the picture is not fetched, and the
	// message keeps its link, saying so.
	id := e.do(200, "GET", "/v1/messages", nil, u.Token).Body["messages"].([]any)[0].(map[string]any)["id"].(string)
	if _, x := storedExtras(t, e, id); !x.Markdown || x.Click != "https://cams.lan/door" || x.Attach != "https://cams.lan/door.jpg" ||
		x.Attachment == nil || x.Attachment.URL != x.Attach || !strings.HasPrefix(x.Attachment.Error, "not fetched: ") {
		t.Fatalf("stored extras %+v, attachment %+v", x, x.Attachment)
	}
}

func TestGotifyRefused(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("gotify@example.com")
	_, token := msgChannel(e, u, "Refusals")
	q := "/message?token=" + url.QueryEscape(token)
	jsonCT := []string{"Content-Type", "application/json"}
	tests := []struct {
		name, path, body string
		headers          []string
		status           int
		says             string
	}{
		{"no token", "/message", `{"message":"m"}`, jsonCT, 401, "token"},
		{"unknown token", "/message?token=AbCdEfGhIjKlMnO", `{"message":"m"}`, jsonCT, 401, "webhook token"},
		{"Basic is not a token", "/message", `{"message":"m"}`, append([]string{"Authorization", "Basic " + token}, jsonCT...), 401, "token"},
		{"no message", q, `{"title":"t"}`, jsonCT, 400, "message is required"},
		{"empty message", q, `{"message":""}`, jsonCT, 400, "message is required"},
		{"broken JSON", q, `{"message":`, jsonCT, 400, "Gotify's message JSON"},
		{"priority not a number", q, `{"message":"m","priority":"high"}`, jsonCT, 400, "whole number"},
		{"form priority not a number", q + "&message=m&priority=x", "", nil, 400, "whole number"},
		{"title over Herald's limit", q, `{"message":"m","title":"` + strings.Repeat("t", 101) + `"}`, jsonCT, 400, "title"},
		{"big image not a URL", q, `{"message":"m","extras":{"client::notification":{"bigImageUrl":"file:///x"}}}`, jsonCT, 400, "bigImageUrl"},
		{"NUL in the message", q, `{"message":"a\u0000b"}`, jsonCT, 400, "UTF-8"},
		{"form without its boundary", q, "garbage", []string{"Content-Type", "multipart/form-data; boundary=zzz"}, 400, "not a valid form"},
		{"multipart without a boundary", q, "garbage", []string{"Content-Type", "multipart/form-data"}, 400, "not a valid form"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ge := gotifyPost(t, e, tt.status, tt.path, tt.body, tt.headers...)
			if !strings.Contains(ge.Description, tt.says) {
				t.Fatalf("error %+v, want it to say %q", ge, tt.says)
			}
		})
	}
	if n := messageCount(t, e); n != 0 {
		t.Fatalf("%d messages stored by refused sends", n)
	}
	if strings.Contains(e.logs.String(), token) {
		t.Fatal("the token is in the log")
	}
}

func TestGotifyVersion(t *testing.T) {
	e := newTestEnv(t)
	status, _, raw := rawCall(t, "GET", e.srv.URL+"/version", nil)
	var v map[string]string
	if err := json.Unmarshal(raw, &v); status != 200 || err != nil || v["version"] != "test" {
		t.Fatalf("%d %s", status, raw)
	}
	for _, k := range []string{"commit", "buildDate"} {
		if _, ok := v[k]; !ok {
			t.Fatalf("%s has no %q", raw, k)
		}
	}
}

func TestGotifyID(t *testing.T) {
	seen := map[uint64]bool{}
	for i := range 1000 {
		id := gotifyID("msg_" + strconv.Itoa(i))
		if id >= 1<<53 || seen[id] || id != gotifyID("msg_"+strconv.Itoa(i)) {
			t.Fatalf("gotifyID of message %d: %d (over 2^53, repeated or unstable)", i, id)
		}
		seen[id] = true
	}
}

func testChannel() *store.Channel { return &store.Channel{ID: "ch_test", Name: "Test channel"} }

func ptrTo[T any](v T) *T { return &v }
