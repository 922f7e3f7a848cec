package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/testkit"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/ntfy"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// rawCall is a request exactly as a sender makes it (not through testkit,
// which adds a JSON Content-Type and holds answers to Herald's own API
// document): it returns the status, headers and body.
func rawCall(t testing.TB, method, url string, body []byte, headers ...string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, out
}

// ntfyPublish publishes through the ntfy door and decodes the answer; it
// fails t unless the status is want.
func ntfyPublish(t testing.TB, e *testEnv, want int, method, path string, body []byte, headers ...string) (ntfy.Message, ntfy.Error) {
	t.Helper()
	status, _, raw := rawCall(t, method, e.srv.URL+path, body, headers...)
	if status != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, status, want, raw)
	}
	var m ntfy.Message
	var ne ntfy.Error
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("answer %s: %v", raw, err)
	}
	_ = json.Unmarshal(raw, &ne)
	if status >= 400 && (ne.HTTP != status || ne.Code/100 != status || ne.Error == "") {
		t.Fatalf("error %s is not ntfy's {code, http, error} for %d", raw, status)
	}
	return m, ne
}

// storedExtras reads a stored message and its extras.
func storedExtras(t testing.TB, e *testEnv, id string) (*store.Message, service.Extras) {
	t.Helper()
	m, err := e.st.Message(context.Background(), id)
	if err != nil {
		t.Fatalf("store: message %s: %v", id, err)
	}
	x, err := store.DecodeExtras(m.Extras)
	if err != nil {
		t.Fatalf("message %s: extras %s: %v", id, m.Extras, err)
	}
	return m, x
}

// messageCount is how many messages the store holds.
func messageCount(t testing.TB, e *testEnv) int {
	t.Helper()
	db := e.rawDB(t)
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM messages").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// onBothDatabases runs f on a fresh server over SQLite and over
// PostgreSQL (skipped, and said so, without one).
func onBothDatabases(t *testing.T, f func(t *testing.T, e *testEnv)) {
	t.Run("sqlite", func(t *testing.T) {
		f(t, newTestEnv(t))
	})
	t.Run("postgres", func(t *testing.T) {
		dir := t.TempDir()
		dsns.Store(filepath.Join(dir, "herald.db"), pgtest.NewDatabase(t))
		e, _ := openTestEnv(t, dir, testkit.NewClock())
		f(t, e)
	})
}

func TestNtfyPublish(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, e *testEnv) {
		u := e.newUser("ntfy@example.com")
		_, token := msgChannel(e, u, "NAS")
		m, _ := ntfyPublish(t, e, 200, "POST", "/"+token, []byte("  Backup **done**\n"),
			"X-Title", "=?UTF-8?B?8J+SviBCYWNrdXA=?=", "Priority", "urgent", "Tags", "floppy_disk,nas",
			"Click", "https://nas.lan/", "Icon", "https://nas.lan/i.png", "Attach", "https://nas.lan/shot.jpg",
			"Markdown", "yes", "X-Sequence-ID", "backup-1",
			"Actions", "view, Open NAS, https://nas.lan/ui; copy, Copy, value=x")
		if !msgIDRe.MatchString(m.ID) || m.Event != "message" || m.Topic != token || m.Time == 0 {
			t.Fatalf("answer %+v: want a message event with Herald's id, the topic and a time", m)
		}
		want := ntfy.Message{ID: m.ID, Time: m.Time, Event: "message", Topic: token, SequenceID: "backup-1",
			Title: "💾 Backup", Message: "Backup **done**", Priority: 5, Tags: []string{"floppy_disk", "nas"},
			Click: "https://nas.lan/", Icon: "https://nas.lan/i.png", ContentType: "text/markdown",
			Attachment: &ntfy.Attachment{Name: "shot.jpg", URL: "https://nas.lan/shot.jpg"},
			Actions:    []ntfy.Action{{ID: "a1", Action: "view", Label: "Open NAS", URL: "https://nas.lan/ui"}}}
		if !reflect.DeepEqual(m, want) {
			t.Fatalf("answer\n got %+v\nwant %+v", m, want)
		}
		sm, x := storedExtras(t, e, m.ID)
		if sm.Title != "💾 Backup" || sm.Body != "Backup **done**" || sm.Priority != "high" {
			t.Fatalf("stored title %q, body %q, priority %q", sm.Title, sm.Body, sm.Priority)
		}
		var acts []service.Action
		if err := json.Unmarshal(sm.Actions, &acts); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(acts, []service.Action{{Type: "url", Label: "Open NAS", Value: "https://nas.lan/ui"}}) {
			t.Fatalf("stored actions %s: want the view action as a url action, the copy action left out", sm.Actions)
		}
		wantX := service.Extras{Tags: []string{"💾", "nas"}, Click: "https://nas.lan/", Icon: "https://nas.lan/i.png",
			Attach: "https://nas.lan/shot.jpg", Markdown: true, SequenceID: "backup-1", NtfyPriority: 5}
		// nas.lan is no host here: the picture is not fetched, and the
		// message keeps its link, saying so.
		if a := x.Attachment; a == nil || a.Name != "shot.jpg" || a.URL != "https://nas.lan/shot.jpg" ||
			!strings.HasPrefix(a.Error, "not fetched: ") {
			t.Errorf("stored attachment %+v: want the link not fetched", a)
		}
		x.Attachment = nil
		if !reflect.DeepEqual(x, wantX) || sm.SequenceID != "backup-1" {
			t.Fatalf("stored extras %+v (sequence %q), want %+v", x, sm.SequenceID, wantX)
		}
	})
}

func TestNtfyPublishDefaults(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("ntfy@example.com")
	_, token := msgChannel(e, u, "Garage door")
	// PUT with no body and no parameters: ntfy's "triggered", the
	// channel's name as title, normal priority.
	m, _ := ntfyPublish(t, e, 200, "PUT", "/"+token, nil)
	sm, _ := storedExtras(t, e, m.ID)
	if sm.Title != "Garage door" || sm.Body != "triggered" || sm.Priority != "normal" {
		t.Fatalf("stored %q / %q / %q; want the channel's name, triggered, normal", sm.Title, sm.Body, sm.Priority)
	}
	if m.Title != "Garage door" || m.Message != "triggered" || m.Priority != 0 || m.Tags != nil || m.Actions != nil {
		t.Fatalf("answer %+v", m)
	}
	// The message parameter is the message when the body is empty; a
	// body wins over it, as in ntfy.
	m, _ = ntfyPublish(t, e, 200, "POST", "/"+token+"?message=from+query&priority=2", nil)
	if sm, _ := storedExtras(t, e, m.ID); sm.Body != "from query" || sm.Priority != "low" {
		t.Fatalf("stored %q %q", sm.Body, sm.Priority)
	}
	m, _ = ntfyPublish(t, e, 200, "POST", "/"+token+"?message=from+query", []byte("from body"))
	if sm, _ := storedExtras(t, e, m.ID); sm.Body != "from body" {
		t.Fatalf("stored %q, want the body", sm.Body)
	}
}

func TestNtfyPublishGET(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("ntfy@example.com")
	_, token := msgChannel(e, u, "Hooks")
	for _, verb := range []string{"publish", "send", "trigger"} {
		m, _ := ntfyPublish(t, e, 200, "GET", "/"+token+"/"+verb+"?t=Door&m=Opened+by+"+verb+"&p=high&tags=door", nil)
		sm, _ := storedExtras(t, e, m.ID)
		if sm.Title != "Door" || sm.Body != "Opened by "+verb || sm.Priority != "high" {
			t.Fatalf("%s: stored %q / %q / %q", verb, sm.Title, sm.Body, sm.Priority)
		}
	}
	// POST to /<token>/publish is a publish too.
	m, _ := ntfyPublish(t, e, 200, "POST", "/"+token+"/publish", []byte("posted"))
	if sm, _ := storedExtras(t, e, m.ID); sm.Body != "posted" {
		t.Fatalf("stored %q", sm.Body)
	}
}

func TestNtfyPublishSequencePath(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("ntfy@example.com")
	_, token := msgChannel(e, u, "Jobs")
	// The path's sequence id wins over a header's.
	m, _ := ntfyPublish(t, e, 200, "PUT", "/"+token+"/job-42", []byte("running"), "X-Sequence-ID", "other")
	if m.SequenceID != "job-42" {
		t.Fatalf("answer sequence_id %q, want job-42", m.SequenceID)
	}
	if sm, x := storedExtras(t, e, m.ID); x.SequenceID != "job-42" || sm.SequenceID != "job-42" {
		t.Fatalf("stored sequence %q / %q", x.SequenceID, sm.SequenceID)
	}
}

func TestNtfyPublishJSON(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, e *testEnv) {
		u := e.newUser("ntfy@example.com")
		_, token := msgChannel(e, u, "Kuma")
		body := `{"topic":"` + token + `","title":"web Down","message":"timeout","priority":5,"tags":["red_circle","env: prod"],
			"actions":[{"action":"view","label":"Open web","url":"https://web.lan/"}],"click":"https://kuma.lan/","delay":"10m"}`
		m, _ := ntfyPublish(t, e, 200, "POST", "/", []byte(body), "Content-Type", "application/json")
		if m.Topic != token || m.Title != "web Down" || m.Message != "timeout" || m.Priority != 5 ||
			!reflect.DeepEqual(m.Tags, []string{"red_circle", "env: prod"}) || m.Click != "https://kuma.lan/" {
			t.Fatalf("answer %+v", m)
		}
		if want := e.clock.Now().Add(10 * 60e9).Unix(); m.Time != want {
			t.Fatalf("answer time %d, want the delivery time %d", m.Time, want)
		}
		sm, x := storedExtras(t, e, m.ID)
		if sm.Title != "web Down" || sm.Body != "timeout" || sm.Priority != "high" {
			t.Fatalf("stored %q / %q / %q", sm.Title, sm.Body, sm.Priority)
		}
		if !reflect.DeepEqual(x.Tags, []string{"🔴", "env: prod"}) || sm.DeliverAt == nil {
			t.Fatalf("stored tags %q, deliver at %v", x.Tags, sm.DeliverAt)
		}
		// PUT works as POST; an empty message is "triggered".
		m, _ = ntfyPublish(t, e, 200, "PUT", "/", []byte(`{"topic":"`+token+`"}`))
		if sm, _ := storedExtras(t, e, m.ID); sm.Body != "triggered" || sm.Title != "Kuma" {
			t.Fatalf("stored %q / %q", sm.Title, sm.Body)
		}
	})
}

func TestNtfyPublishRefused(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("ntfy@example.com")
	_, token := msgChannel(e, u, "Refusals")
	long := strings.Repeat("x", 101)
	tests := []struct {
		name    string
		method  string
		path    string
		body    string
		headers []string
		status  int
		code    int
		says    string
	}{
		{"unknown token", "POST", "/" + strings.Repeat("A1", 16), "hi", nil, 401, 40101, "webhook token"},
		{"unknown topic in JSON", "POST", "/", `{"topic":"nosuchtoken","message":"x"}`, nil, 401, 40101, "webhook token"},
		{"JSON without a topic", "POST", "/", `{"message":"x"}`, nil, 400, 40009, "topic"},
		{"JSON that is not JSON", "POST", "/", `message=x`, nil, 400, 40017, "JSON"},
		{"e-mail", "POST", "/" + token, "hi", []string{"X-Email", "me@example.com"}, 400, 40001, "e-mail"},
		{"phone call", "POST", "/" + token + "?call=yes", "hi", nil, 400, 40032, "phone"},
		{"bad priority", "POST", "/" + token, "hi", []string{"Priority", "9"}, 400, 40007, "priority"},
		{"broadcast action", "POST", "/" + token, "hi", []string{"Actions", "broadcast, Take picture"}, 400, 40018, "broadcast"},
		{"four actions", "POST", "/" + token, "hi", []string{"Actions", "view,a,https://a/;view,b,https://b/;view,c,https://c/;view,d,https://d/"}, 400, 40018, "at most 3"},
		{"binary body with an attach URL", "PUT", "/" + token, "\x89PNG\r\n\x1a\n\xff\xfe", []string{"X-Attach", "https://example.com/a.png"}, 400, 40011, "UTF-8"},
		{"NUL in the body with an attach URL", "PUT", "/" + token, "a\x00b", []string{"X-Attach", "https://example.com/a.png"}, 400, 40011, "UTF-8"},
		{"empty file", "PUT", "/" + token, "", []string{"Filename", "report.pdf"}, 400, 40000, "empty"},
		{"title over Herald's limit", "POST", "/" + token, "hi", []string{"Title", long}, 400, 40000, "title is 101 characters"},
		{"delay not understood", "POST", "/" + token, "hi", []string{"In", "a fortnight"}, 400, 40004, "not understood"},
		{"icon not a URL", "POST", "/" + token, "hi", []string{"Icon", "file:///etc/passwd"}, 400, 40021, "icon"},
		{"template", "POST", "/" + token + "?template=yes", `{"a":1}`, nil, 400, 40044, "template"},
	}
	before := messageCount(t, e)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ne := ntfyPublish(t, e, tt.status, tt.method, tt.path, []byte(tt.body), tt.headers...)
			if ne.Code != tt.code || !strings.Contains(ne.Error, tt.says) {
				t.Fatalf("error %+v, want code %d saying %q", ne, tt.code, tt.says)
			}
		})
	}
	if n := messageCount(t, e); n != before {
		t.Fatalf("%d messages stored by refused publishes", n-before)
	}
}

func TestNtfyPublishTooLarge(t *testing.T) {
	// With attachments off a publish's body may be 1 MiB (with them, as
	// large as a file: TestNtfyLargeTextIsFile).
	e := newTestEnv(t, func(c *config.Config) { c.Attachments.Enabled = false })
	u := e.newUser("ntfy@example.com")
	_, token := msgChannel(e, u, "Big")
	// A body of unknown length (chunked) meets the 1 MiB limit as it is
	// read, and is refused in ntfy's shape.
	body := io.MultiReader(strings.NewReader(strings.Repeat("x", maxBody)), strings.NewReader("x"))
	req, err := http.NewRequest("POST", e.srv.URL+"/"+token, body)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var ne ntfy.Error
	if err := json.NewDecoder(res.Body).Decode(&ne); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 413 || ne.Code != 41301 || ne.HTTP != 413 || !strings.Contains(ne.Error, "larger than") {
		t.Fatalf("%d %+v; want 413 with code 41301", res.StatusCode, ne)
	}
	// One that declares its length is refused before any handler reads
	// it, in the shape of the door it came to: ntfy's for a topic and for
	// the JSON publish to /, Gotify's for /message, Herald's elsewhere.
	big := []byte(`{"topic":"` + token + `","message":"` + strings.Repeat("x", maxBody) + `"}`)
	for _, c := range []struct{ path, shape string }{
		{"/" + token, "ntfy"}, {"/", "ntfy"}, {"/message?token=" + token, "gotify"}, {"/v1/send/" + token, "herald"},
	} {
		status, _, raw := rawCall(t, "POST", e.srv.URL+c.path, big, "Content-Type", "application/json")
		var got struct {
			Code      int    `json:"code"`
			HTTP      int    `json:"http"`
			Error     string `json:"error"`
			ErrorCode int    `json:"errorCode"`
			Message   string `json:"message"`
		}
		if err := json.Unmarshal(raw, &got); err != nil || status != 413 {
			t.Fatalf("%s: %d %s, want 413", c.path, status, raw)
		}
		ok := map[string]bool{
			"ntfy":   got.Code == 41301 && got.HTTP == 413,
			"gotify": got.ErrorCode == 413 && got.Error == "Request Entity Too Large",
			"herald": got.Error == "payload_too_large" && got.Message != "",
		}[c.shape]
		if !ok {
			t.Errorf("%s: %s, want %s's shape", c.path, raw, c.shape)
		}
	}
	if n := messageCount(t, e); n != 0 {
		t.Fatalf("%d messages stored", n)
	}
}

func TestNtfyPublishRateLimited(t *testing.T) {
	e := newTestEnv(t, func(c *config.Config) {
		c.Plans.Free.SendPerMinute = 2
	})
	u := e.newUser("ntfy@example.com")
	_, token := msgChannel(e, u, "Chatty")
	ntfyPublish(t, e, 200, "POST", "/"+token, []byte("1"))
	ntfyPublish(t, e, 200, "GET", "/"+token+"/trigger", nil)
	status, h, raw := rawCall(t, "POST", e.srv.URL+"/", []byte(`{"topic":"`+token+`","message":"3"}`))
	var ne ntfy.Error
	_ = json.Unmarshal(raw, &ne)
	if status != 429 || ne.Code != 42901 || h.Get("Retry-After") == "" {
		t.Fatalf("third publish: %d %s (Retry-After %q); want 429, code 42901 and Retry-After", status, raw, h.Get("Retry-After"))
	}
	// The same bucket as /v1/send: it is spent too.
	r := e.request("POST", "/v1/send/"+token, map[string]string{"title": "x"}, "")
	if r.Status != 429 {
		t.Fatalf("/v1/send after the ntfy publishes: %d, want 429 (one bucket per channel)", r.Status)
	}
}

func TestNtfyPublishKeepsTokenOutOfLogs(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("ntfy@example.com")
	_, token := msgChannel(e, u, "Secret")
	ntfyPublish(t, e, 200, "POST", "/"+token, []byte("x"))
	ntfyPublish(t, e, 200, "PUT", "/"+token+"/seq-1", []byte("x"))
	ntfyPublish(t, e, 200, "GET", "/"+token+"/publish?m=x", nil)
	ntfyPublish(t, e, 400, "POST", "/"+token, []byte("x"), "Priority", "9")
	logs := e.logs.String()
	if strings.Contains(logs, token) {
		t.Fatalf("the webhook token is in the log:\n%s", logs)
	}
	if !strings.Contains(logs, "path=/REDACTED/seq-1") {
		t.Fatalf("no redacted access log line for the sequence publish:\n%s", logs)
	}
}

func TestHeraldActions(t *testing.T) {
	got, err := heraldActions([]ntfy.Action{
		{Action: "view", Label: "Open", URL: "https://a/"},
		{Action: "copy", Label: "Copy", Value: "x"},
		{Action: "http", Label: "Restart", URL: "https://b/restart", Method: "PUT", Headers: map[string]string{"X-K": "v"}, Body: "{}"},
	})
	want := []service.Action{
		{Type: "url", Label: "Open", Value: "https://a/"},
		{Type: "http", Label: "Restart", Value: "https://b/restart",
			Request: &service.HTTPRequest{Method: "PUT", Headers: map[string]string{"X-K": "v"}, Body: "{}"}},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("heraldActions = %+v, %v; want %+v", got, err, want)
	}
	var pe *ntfy.ParamError
	if _, err := heraldActions([]ntfy.Action{{Action: "broadcast", Label: "Go"}}); !errors.As(err, &pe) || pe.Code != ntfy.CodeActionsInvalid {
		t.Fatalf("broadcast: %v, want a 40018 refusal", err)
	}
}
