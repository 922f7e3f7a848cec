package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/store"
)

// attRaw is an answer read whole.
type attRaw struct {
	status int
	header http.Header
	body   []byte
}

// attGet GETs path (with a bearer token, if any) and reads the answer whole.
func attGet(t *testing.T, e *testEnv, path, token string, headers ...string) attRaw {
	t.Helper()
	req, err := http.NewRequest("GET", e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return attDo(t, e, req)
}

func attDo(t *testing.T, e *testEnv, req *http.Request) attRaw {
	t.Helper()
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return attRaw{status: res.StatusCode, header: res.Header, body: b}
}

// attPart is one part of a multipart body.
type attPart struct{ name, filename, content string }

// attMultipart posts parts to path as multipart/form-data.
func attMultipart(t *testing.T, e *testEnv, path string, parts ...attPart) attRaw {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		var w io.Writer
		var err error
		if p.filename != "" {
			w, err = mw.CreateFormFile(p.name, p.filename)
		} else {
			w, err = mw.CreateFormField(p.name)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, p.content); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", e.srv.URL+path, &buf)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return attDo(t, e, req)
}

// attJSON decodes an answer's JSON object.
func attJSON(t *testing.T, r attRaw) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer %d %q is not JSON: %v", r.status, r.body, err)
	}
	return m
}

// attPNG is a PNG of w×h pixels of noise, which compresses badly: large.
func attPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rnd := rand.New(rand.NewPCG(1, 2))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(rnd.Uint32()), uint8(rnd.Uint32()), uint8(x), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// attCount counts the rows of table.
func attCount(t *testing.T, e *testEnv, table string) int {
	t.Helper()
	db := e.rawDB(t)
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// attSend sends a message with file data named name through token and
// returns its id.
func attSend(t *testing.T, e *testEnv, token, name string, data []byte) string {
	t.Helper()
	r := attMultipart(t, e, "/v1/send/"+token, attPart{name: "payload", content: `{"title":"Person at the gate","priority":"high"}`},
		attPart{name: "file", filename: name, content: string(data)})
	if r.status != 200 {
		t.Fatalf("multipart send: %d %s", r.status, r.body)
	}
	return attJSON(t, r)["id"].(string)
}

// attOf is the attachment object of message id as token reads it.
func attOf(t *testing.T, e *testEnv, id, token string) map[string]any {
	t.Helper()
	r := e.do(200, "GET", "/v1/messages/"+id, nil, token)
	a, ok := r.Body["attachment"].(map[string]any)
	if !ok {
		t.Fatalf("message %s has attachment %v; body %s", id, r.Body["attachment"], r.Raw)
	}
	return a
}

// TestAttachmentMultipartSend: a multipart send stores the file with the
// message; the message shows it, and its readers get the exact bytes back,
// with the headers that keep a browser from running them.
func TestAttachmentMultipartSend(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("gate@example.com")
	_, token := msgChannel(e, u, "gate")
	pic := attPNG(t, 1600, 1200)
	id := attSend(t, e, token, "../../snap.png", pic)
	a := attOf(t, e, id, u.Token)
	attID, _ := a["id"].(string)
	if !strings.HasPrefix(attID, "att_") {
		t.Fatalf("attachment id %q", attID)
	}
	want := fmt.Sprintf(`{"id":%q,"name":"snap.png","content_type":"image/png","size":%d,"image":true,
		"url":"/v1/attachments/%s","thumbnail_url":"/v1/attachments/%s?thumbnail=1","width":1600,"height":1200}`,
		attID, len(pic), attID, attID)
	got, _ := json.Marshal(a)
	msgSameJSON(t, "attachment", got, want)
	if m := e.do(200, "GET", "/v1/messages/"+id, nil, u.Token); m.Str("title") != "Person at the gate" || m.Str("priority") != "high" {
		t.Errorf("message %s: the payload part was not read", m.Raw)
	}

	r := attGet(t, e, "/v1/attachments/"+attID, u.Token)
	if r.status != 200 || !bytes.Equal(r.body, pic) {
		t.Fatalf("GET attachment: %d, %d bytes; want 200 and the %d bytes sent", r.status, len(r.body), len(pic))
	}
	for k, v := range map[string]string{"Content-Type": "image/png", "X-Content-Type-Options": "nosniff",
		"Content-Security-Policy": "default-src 'none'; sandbox", "Content-Disposition": "inline",
		"Cache-Control": "private, max-age=3600", "Content-Length": fmt.Sprint(len(pic))} {
		if got := r.header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if r.header.Get("ETag") == "" || r.header.Get("Last-Modified") == "" {
		t.Errorf("no ETag or Last-Modified: %v", r.header)
	}
	// The thumbnail: a JPEG at most 640 px on its longest side, smaller
	// than the picture.
	th := attGet(t, e, "/v1/attachments/"+attID+"?thumbnail=1", u.Token)
	if th.status != 200 || th.header.Get("Content-Type") != "image/jpeg" || len(th.body) >= len(pic) {
		t.Fatalf("thumbnail: %d %s, %d bytes (picture %d)", th.status, th.header.Get("Content-Type"), len(th.body), len(pic))
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(th.body))
	if err != nil || format != "jpeg" || cfg.Width != 640 || cfg.Height != 480 {
		t.Errorf("thumbnail is %s %dx%d (%v), want a 640x480 jpeg", format, cfg.Width, cfg.Height, err)
	}
	// A range, and a conditional request.
	rg := attGet(t, e, "/v1/attachments/"+attID, u.Token, "Range", "bytes=10-19")
	if rg.status != http.StatusPartialContent || !bytes.Equal(rg.body, pic[10:20]) ||
		rg.header.Get("Content-Range") != fmt.Sprintf("bytes 10-19/%d", len(pic)) {
		t.Errorf("range: %d %q %q", rg.status, rg.header.Get("Content-Range"), rg.body)
	}
	out := attGet(t, e, "/v1/attachments/"+attID, u.Token, "Range", "bytes=99999999-")
	if out.status != 416 || out.header.Get("Content-Range") != fmt.Sprintf("bytes */%d", len(pic)) ||
		attJSON(t, out)["error"] != "range_not_satisfiable" || out.header.Get("Content-Type") != "application/json" {
		t.Errorf("range outside the file: %d %q %q %s", out.status, out.header.Get("Content-Range"), out.header.Get("Content-Type"), out.body)
	}
	if nm := attGet(t, e, "/v1/attachments/"+attID, u.Token, "If-None-Match", r.header.Get("ETag")); nm.status != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", nm.status)
	}
}

// TestAttachmentSniffed: a file's type is what its bytes are, whatever
// its name says: HTML named x.png is served as an HTML download, never
// inline, and is no picture.
func TestAttachmentSniffed(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("sniff@example.com")
	_, token := msgChannel(e, u, "gate")
	html := "<html><script>alert(document.cookie)</script></html>"
	id := attSend(t, e, token, "x.png", []byte(html))
	a := attOf(t, e, id, u.Token)
	if a["content_type"] != "text/html; charset=utf-8" || a["image"] != false || a["thumbnail_url"] != nil || a["width"] != nil {
		t.Fatalf("HTML named x.png: %v", a)
	}
	r := attGet(t, e, a["url"].(string), u.Token)
	if r.status != 200 || string(r.body) != html || r.header.Get("Content-Type") != "text/html; charset=utf-8" ||
		r.header.Get("X-Content-Type-Options") != "nosniff" ||
		r.header.Get("Content-Disposition") != "attachment; filename*=UTF-8''x.png" ||
		r.header.Get("Content-Security-Policy") != "default-src 'none'; sandbox" {
		t.Errorf("HTML served as %d %v", r.status, r.header)
	}
	// A small picture is one, without a thumbnail; a file without a name
	// is named after its type.
	small := attPNG(t, 40, 30)
	r2 := attMultipart(t, e, "/v1/send/"+token, attPart{name: "payload", content: `{"title":"t"}`},
		attPart{name: "file", filename: " ", content: string(small)})
	a2 := attOf(t, e, attJSON(t, r2)["id"].(string), u.Token)
	if a2["image"] != true || a2["thumbnail_url"] != nil || a2["width"] != 40.0 || a2["name"] != "attachment.png" {
		t.Errorf("small picture: %v", a2)
	}
}

// TestAttachmentReaders: the owner and an approver the message names read
// it; anyone else, and anyone once the message is deleted, gets 404.
func TestAttachmentReaders(t *testing.T) {
	f := aprSetup(t)
	e := f.env
	f.rule(1, 3600, f.b)
	e.acceptInvitations(f.b)
	id := attSend(t, e, f.token, "snap.txt", []byte("camera log"))
	url := attOf(t, e, id, f.a.Token)["url"].(string)
	for _, c := range []struct {
		who  *testUser
		want int
	}{{f.a, 200}, {f.b, 200}, {f.c, 404}} {
		if r := attGet(t, e, url, c.who.Token); r.status != c.want {
			t.Errorf("%s reads the attachment: %d %s, want %d", c.who.Email, r.status, r.body, c.want)
		}
	}
	if r := attGet(t, e, url, ""); r.status != 401 {
		t.Errorf("without a credential: %d, want 401", r.status)
	}
	e.do(200, "DELETE", "/v1/messages/"+id, nil, f.a.Token)
	if r := attGet(t, e, url, f.a.Token); r.status != 404 {
		t.Errorf("after the message is deleted: %d, want 404", r.status)
	}
	if n := attCount(t, e, "attachments"); n != 0 {
		t.Errorf("%d attachments left after the message was deleted", n)
	}
}

// TestAttachmentSignedLink: a signed link reads the file without a
// credential until it expires; an altered one, an expired one, or one to
// the other variant is refused.
func TestAttachmentSignedLink(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("link@example.com")
	_, token := msgChannel(e, u, "gate")
	pic := attPNG(t, 900, 700)
	id := attSend(t, e, token, "snap.png", pic)
	m := msgStored(e, id)
	a := attOf(t, e, id, u.Token)
	info := attInfo(t, m.Extras)
	link, exp, err := e.s.svc.AttachmentLink(context.Background(), m.CreatedAt, info, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := e.clock.Now().Add(24 * time.Hour).Unix(); exp.Unix() != want {
		t.Errorf("link expires at %d, want %d (24 h)", exp.Unix(), want)
	}
	lu, err := url.Parse(link)
	if err != nil || lu.Path != a["url"] || !strings.HasPrefix(link, e.cfg.BaseURL) {
		t.Fatalf("link %s: want an absolute URL on %s to %s", link, e.cfg.BaseURL, a["url"])
	}
	path := lu.RequestURI()
	if r := attGet(t, e, path, ""); r.status != 200 || !bytes.Equal(r.body, pic) {
		t.Fatalf("signed link: %d, %d bytes", r.status, len(r.body))
	}
	q := lu.Query()
	sig := q.Get("sig")
	flipped := string(rune(sig[0]^1)) + sig[1:]
	for name, p := range map[string]string{
		"altered signature": strings.Replace(path, sig, flipped, 1),
		"later expiry":      strings.Replace(path, "exp="+q.Get("exp"), fmt.Sprintf("exp=%d", exp.Unix()+3600), 1),
		"thumbnail variant": path + "&thumbnail=1",
		"other attachment":  strings.Replace(path, info.ID, "att_000000000000000000000000", 1),
	} {
		if r := attGet(t, e, p, ""); r.status != 403 && r.status != 404 {
			t.Errorf("%s: %d %s, want 403 or 404", name, r.status, r.body)
		}
	}
	thumb, _, err := e.s.svc.AttachmentLink(context.Background(), m.CreatedAt, info, true)
	if err != nil {
		t.Fatal(err)
	}
	tu, _ := url.Parse(thumb)
	if r := attGet(t, e, tu.RequestURI(), ""); r.status != 200 || r.header.Get("Content-Type") != "image/jpeg" {
		t.Errorf("signed thumbnail link: %d %s", r.status, r.header.Get("Content-Type"))
	}
	e.clock.Advance(24*time.Hour + time.Second)
	if r := attGet(t, e, path, ""); r.status != 403 {
		t.Errorf("expired link: %d %s, want 403", r.status, r.body)
	}
}

// TestAttachmentBodyLimits: a body over max_file_size and the multipart
// overhead is refused with 413 before anything is stored, a file over
// max_file_size too; a JSON send keeps the 1 MiB limit; unknown parts are
// refused by name.
func TestAttachmentBodyLimits(t *testing.T) {
	e := newTestEnv(t, func(c *config.Config) { c.Attachments.MaxFileSize = 100 << 10 })
	u := e.newUser("big@example.com")
	_, token := msgChannel(e, u, "gate")
	payload := attPart{name: "payload", content: `{"title":"big"}`}
	big := attMultipart(t, e, "/v1/send/"+token, payload, attPart{name: "file", filename: "a.bin", content: strings.Repeat("x", 200<<10)})
	if big.status != 413 || attJSON(t, big)["error"] != "payload_too_large" {
		t.Errorf("a 200 KiB body with a 100 KiB limit: %d %s", big.status, big.body)
	}
	over := attMultipart(t, e, "/v1/send/"+token, payload, attPart{name: "file", filename: "a.bin", content: strings.Repeat("x", 100<<10+1)})
	if over.status != 413 || !strings.Contains(string(over.body), "attachments.max_file_size") {
		t.Errorf("a file 1 byte over the limit: %d %s", over.status, over.body)
	}
	unknown := attMultipart(t, e, "/v1/send/"+token, payload, attPart{name: "image", filename: "a.bin", content: "x"})
	if msg, _ := attJSON(t, unknown)["message"].(string); unknown.status != 400 || !strings.Contains(msg, `"image"`) ||
		!strings.Contains(msg, `"payload"`) || !strings.Contains(msg, `"file"`) {
		t.Errorf("an unknown part: %d %s", unknown.status, unknown.body)
	}
	noPayload := attMultipart(t, e, "/v1/send/"+token, attPart{name: "file", filename: "a.bin", content: "x"})
	if noPayload.status != 400 {
		t.Errorf("no payload part: %d %s", noPayload.status, noPayload.body)
	}
	badPayload := attMultipart(t, e, "/v1/send/"+token, attPart{name: "payload", content: `{"title":""}`},
		attPart{name: "file", filename: "a.bin", content: "x"})
	if badPayload.status != 400 || !strings.Contains(string(badPayload.body), "title is required") {
		t.Errorf("a payload the JSON send refuses: %d %s", badPayload.status, badPayload.body)
	}
	for _, named := range []string{`"attach_url":"https://example.com/x.png"`, `"attachment":{"url":"https://example.com/x.png"}`} {
		both := attMultipart(t, e, "/v1/send/"+token, attPart{name: "payload", content: `{"title":"t",` + named + `}`},
			attPart{name: "file", filename: "a.bin", content: "x"})
		if both.status != 400 || !strings.Contains(string(both.body), "send one") {
			t.Errorf("a file and %s: %d %s", named, both.status, both.body)
		}
	}
	if n, m := attCount(t, e, "attachments"), attCount(t, e, "messages"); n != 0 || m != 0 {
		t.Errorf("%d attachments and %d messages stored by refused sends", n, m)
	}
	// A JSON body keeps the limit of every endpoint.
	r := e.request("POST", "/v1/send/"+token, `{"title":"`+strings.Repeat("x", 1<<20)+`"}`, "")
	if r.Status != 413 || !strings.Contains(string(r.Raw), "1 MiB") {
		t.Errorf("a 1 MiB JSON send: %d %s", r.Status, r.Raw)
	}
}

// TestAttachmentQuotaReached: a file that would take the owner over their
// plan's quota is refused, naming it, and nothing is stored.
func TestAttachmentQuotaReached(t *testing.T) {
	e := newTestEnv(t, func(c *config.Config) { c.Plans.Free.AttachmentQuota = 1000 })
	u := e.newUser("quota@example.com")
	_, token := msgChannel(e, u, "gate")
	attSend(t, e, token, "a.txt", bytes.Repeat([]byte("a"), 600))
	r := attMultipart(t, e, "/v1/send/"+token, attPart{name: "payload", content: `{"title":"b"}`},
		attPart{name: "file", filename: "b.txt", content: strings.Repeat("b", 401)})
	if r.status != 413 || attJSON(t, r)["error"] != "attachment_quota" || !strings.Contains(string(r.body), "free") {
		t.Errorf("over the quota: %d %s", r.status, r.body)
	}
	if n, m := attCount(t, e, "attachments"), attCount(t, e, "messages"); n != 1 || m != 1 {
		t.Errorf("%d attachments and %d messages, want 1 and 1", n, m)
	}
}

// TestAttachmentsOff: with attachments.enabled = false a file is refused,
// naming the setting, and a multipart body keeps the 1 MiB limit.
func TestAttachmentsOff(t *testing.T) {
	e := newTestEnv(t, func(c *config.Config) { c.Attachments.Enabled = false })
	u := e.newUser("off@example.com")
	_, token := msgChannel(e, u, "gate")
	r := attMultipart(t, e, "/v1/send/"+token, attPart{name: "payload", content: `{"title":"t"}`},
		attPart{name: "file", filename: "a.txt", content: "x"})
	if r.status != 400 || !strings.Contains(string(r.body), "attachments.enabled") {
		t.Errorf("a file while attachments are off: %d %s", r.status, r.body)
	}
	j := e.request("POST", "/v1/send/"+token, map[string]any{"title": "t", "attachment": map[string]string{"url": "https://example.com/a.jpg"}}, "")
	if j.Status != 400 || !strings.Contains(string(j.Raw), "attachments.enabled") {
		t.Errorf("attachment by URL while attachments are off: %d %s", j.Status, j.Raw)
	}
	if n := attCount(t, e, "messages"); n != 0 {
		t.Errorf("%d messages stored", n)
	}
}

// attInfo is the attachment stored extras name.
func attInfo(t *testing.T, extras json.RawMessage) *store.AttachmentInfo {
	t.Helper()
	x, err := store.DecodeExtras(extras)
	if err != nil || x.Attachment == nil {
		t.Fatalf("extras %s: %+v, %v", extras, x.Attachment, err)
	}
	return x.Attachment
}

// TestAttachmentFetched: "attachment": {"url"} is fetched at send time
// and kept like an upload; each failure is a 4xx that says why, and
// stores nothing.
func TestAttachmentFetched(t *testing.T) {
	pic := attPNG(t, 64, 48)
	release := make(chan struct{})
	files := http.NewServeMux()
	files.HandleFunc("/cam/snap.png", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(pic) })
	files.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(make([]byte, 100<<10+1)) })
	files.HandleFunc("/big-chunked", func(w http.ResponseWriter, r *http.Request) {
		for range 101 {
			_, _ = w.Write(make([]byte, 1<<10))
			w.(http.Flusher).Flush()
		}
	})
	files.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	files.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/cam/snap.png", http.StatusFound) })
	srv := httptestServer(t, files)
	defer close(release)

	e := newTestEnv(t, func(c *config.Config) {
		c.Attachments.MaxFileSize = 100 << 10
		c.Attachments.FetchTimeout = config.Duration{Duration: 300 * time.Millisecond}
	})
	u := e.newUser("fetch@example.com")
	_, token := msgChannel(e, u, "gate")
	send := func(url, name string) response {
		t.Helper()
		att := map[string]string{"url": url}
		if name != "" {
			att["name"] = name
		}
		return e.request("POST", "/v1/send/"+token, map[string]any{"title": "Person at the gate", "attachment": att}, "")
	}
	r := send(srv.URL+"/cam/snap.png", "")
	if r.Status != 200 {
		t.Fatalf("fetched send: %d %s", r.Status, r.Raw)
	}
	a := attOf(t, e, r.Str("id"), u.Token)
	if a["name"] != "snap.png" || a["content_type"] != "image/png" || a["size"] != float64(len(pic)) || a["image"] != true {
		t.Errorf("fetched attachment: %v", a)
	}
	if got := attGet(t, e, a["url"].(string), u.Token); !bytes.Equal(got.body, pic) {
		t.Errorf("fetched bytes differ: %d of %d", len(got.body), len(pic))
	}
	if r := send(srv.URL+"/cam/snap.png", "gate.png"); r.Status != 200 || attOf(t, e, r.Str("id"), u.Token)["name"] != "gate.png" {
		t.Errorf("named fetch: %d %s", r.Status, r.Raw)
	}
	before := attCount(t, e, "messages")
	for _, c := range []struct {
		name, url string
		status    int
		says      string
	}{
		{"too big", srv.URL + "/big", 413, "attachments.max_file_size"},
		{"too big, chunked", srv.URL + "/big-chunked", 413, "attachments.max_file_size"},
		{"too slow", srv.URL + "/slow", 400, "attachments.fetch_timeout"},
		{"not found", srv.URL + "/nope", 400, "404 Not Found"},
		{"redirect", srv.URL + "/moved", 400, "redirects are not followed"},
		{"metadata address", "http://169.254.169.254/latest", 400, "link-local or a cloud metadata"},
	} {
		r := send(c.url, "")
		if r.Status != c.status || !strings.Contains(r.Str("message"), c.says) {
			t.Errorf("%s: %d %s, want %d saying %q", c.name, r.Status, r.Raw, c.status, c.says)
		}
	}
	if n := attCount(t, e, "messages"); n != before {
		t.Errorf("%d messages stored by failed fetches", n-before)
	}
}

// TestAttachmentFetchBlocked: a loopback address is refused when
// delivery.allow_loopback is off, as callbacks are, also when a name
// resolves to it (checked when dialled).
func TestAttachmentFetchBlocked(t *testing.T) {
	files := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("x")) }))
	e := newTestEnv(t, func(c *config.Config) { c.Delivery.AllowLoopback = false })
	u := e.newUser("blocked@example.com")
	_, token := msgChannel(e, u, "gate")
	port := files.URL[strings.LastIndex(files.URL, ":"):]
	for _, raw := range []string{files.URL + "/a.png", "http://localhost" + port + "/a.png"} {
		r := e.request("POST", "/v1/send/"+token, map[string]any{"title": "t", "attachment": map[string]string{"url": raw}}, "")
		if r.Status != 400 || !strings.Contains(r.Str("message"), "delivery.allow_loopback") {
			t.Errorf("%s: %d %s", raw, r.Status, r.Raw)
		}
	}
	if n := attCount(t, e, "messages"); n != 0 {
		t.Errorf("%d messages stored", n)
	}
}

// TestAttachmentNotFetched: with attachments.fetch = false the URL is
// kept as a link, unfetched, and the message says so.
func TestAttachmentNotFetched(t *testing.T) {
	e := newTestEnv(t, func(c *config.Config) { c.Attachments.Fetch = false })
	u := e.newUser("link@example.com")
	_, token := msgChannel(e, u, "gate")
	r := e.do(200, "POST", "/v1/send/"+token, map[string]any{"title": "t",
		"attachment": map[string]string{"url": "https://cam.example.com/snap.jpg"}}, "")
	m := e.do(200, "GET", "/v1/messages/"+r.Str("id"), nil, u.Token)
	a, _ := m.Body["attachment"].(map[string]any)
	if m.Str("attach_url") != "https://cam.example.com/snap.jpg" || a == nil || a["url"] != "https://cam.example.com/snap.jpg" ||
		a["name"] != "snap.jpg" || !strings.Contains(fmt.Sprint(a["error"]), "attachments.fetch = false") || a["id"] != nil {
		t.Errorf("unfetched link: %s", m.Raw)
	}
	if n := attCount(t, e, "attachments"); n != 0 {
		t.Errorf("%d attachments stored", n)
	}
}

func httptestServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// TestAttachmentNtfyUpload: ntfy's upload, PUT /<token> with a Filename
// (or a body that is not text), keeps the body as the message's file, as
// ntfy does; the answer's attachment has a signed link that reads it
// without credentials, and so has the message in an ntfy stream.
func TestAttachmentNtfyUpload(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("ntfyup@example.com")
	_, token := msgChannel(e, u, "Backups")
	pdf := []byte("%PDF-1.4 report")
	m, _ := ntfyPublish(t, e, 200, "PUT", "/"+token, pdf, "Filename", "report.pdf")
	if m.Message != "You received a file: report.pdf" || m.Attachment == nil || m.Attachment.Name != "report.pdf" ||
		m.Attachment.Type != "application/pdf" || m.Attachment.Size != int64(len(pdf)) || m.Attachment.Expires == 0 {
		t.Fatalf("answer %+v, attachment %+v", m, m.Attachment)
	}
	lu, err := url.Parse(m.Attachment.URL)
	if err != nil || !strings.HasPrefix(m.Attachment.URL, e.cfg.BaseURL+"/v1/attachments/att_") || lu.Query().Get("sig") == "" {
		t.Fatalf("attachment url %q: want a signed link on base_url", m.Attachment.URL)
	}
	if r := attGet(t, e, lu.RequestURI(), ""); r.status != 200 || !bytes.Equal(r.body, pdf) ||
		r.header.Get("Content-Disposition") != "attachment; filename*=UTF-8''report.pdf" {
		t.Errorf("signed link: %d %q %v", r.status, r.body, r.header)
	}
	// A binary body without a name is "attachment" with its type's
	// extension; X-Message is the message.
	png := attPNG(t, 20, 20)
	m2, _ := ntfyPublish(t, e, 200, "POST", "/"+token+"?filename=", png, "X-Message", "Snapshot")
	if m2.Message != "Snapshot" || m2.Attachment == nil || m2.Attachment.Name != "attachment.png" || m2.Attachment.Type != "image/png" {
		t.Errorf("binary body: %+v, %+v", m2, m2.Attachment)
	}
	sm, x := storedExtras(t, e, m2.ID)
	if sm.Body != "Snapshot" || x.Attachment == nil || !x.Attachment.Image || x.Attachment.Width != 20 {
		t.Errorf("stored %q, %+v", sm.Body, x.Attachment)
	}
	// An attach URL keeps the body as the message, and the URL as a link.
	m3, _ := ntfyPublish(t, e, 200, "PUT", "/"+token, []byte("see the picture"), "X-Attach", "https://cam.example.com/a.jpg")
	if m3.Message != "see the picture" || m3.Attachment == nil || m3.Attachment.URL != "https://cam.example.com/a.jpg" {
		t.Errorf("attach URL: %+v, %+v", m3, m3.Attachment)
	}
	// A file over 1 MiB goes through with its name.
	big := bytes.Repeat([]byte{0xff, 0x00}, 600<<10)
	m4, _ := ntfyPublish(t, e, 200, "PUT", "/"+token, big, "Filename", "dump.bin")
	if m4.Attachment == nil || m4.Attachment.Size != int64(len(big)) {
		t.Errorf("1.2 MB file: %+v", m4.Attachment)
	}
	// The ntfy stream carries the signed link.
	status, _, raw := rawCall(t, "GET", e.srv.URL+"/"+token+"/json?poll=1", nil, "Authorization", "Bearer "+u.Token)
	if status != 200 || !strings.Contains(string(raw), `"name":"report.pdf"`) || !strings.Contains(string(raw), "sig=") {
		t.Errorf("ntfy poll: %d %s", status, raw)
	}
}

// TestAttachmentNtfyAttachFetched: ntfy's attach URL and Gotify's
// bigImageUrl map onto a send's "attachment": the file is fetched and kept
// as the message's picture, and ntfy's answer links it, signed. A file
// that cannot be fetched leaves the message as ntfy and Gotify would send
// it, with the link, and says why it was not fetched.
func TestAttachmentNtfyAttachFetched(t *testing.T) {
	pic := attPNG(t, 30, 20)
	files := http.NewServeMux()
	files.HandleFunc("/cam/snap.png", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(pic) })
	srv := httptestServer(t, files) // anything else: 404
	e := newTestEnv(t)
	u := e.newUser("ntfyattach@example.com")
	_, token := msgChannel(e, u, "Gate")

	m, _ := ntfyPublish(t, e, 200, "PUT", "/"+token, []byte("Person at the gate"),
		"X-Attach", srv.URL+"/cam/snap.png", "Filename", "gate.png")
	if m.Message != "Person at the gate" || m.Attachment == nil || m.Attachment.Name != "gate.png" ||
		m.Attachment.Type != "image/png" || m.Attachment.Size != int64(len(pic)) ||
		!strings.HasPrefix(m.Attachment.URL, e.cfg.BaseURL+"/v1/attachments/att_") {
		t.Fatalf("answer %+v, attachment %+v: want the fetched picture, linked and signed", m, m.Attachment)
	}
	lu, err := url.Parse(m.Attachment.URL)
	if err != nil {
		t.Fatal(err)
	}
	if r := attGet(t, e, lu.RequestURI(), ""); r.status != 200 || !bytes.Equal(r.body, pic) {
		t.Errorf("signed link: %d, %d bytes", r.status, len(r.body))
	}
	if _, x := storedExtras(t, e, m.ID); x.Attach != "" || x.Attachment == nil || !x.Attachment.Image || x.Attachment.Width != 30 {
		t.Errorf("stored attach %q, attachment %+v: want the picture kept, no link", x.Attach, x.Attachment)
	}

	gone := srv.URL + "/cam/gone.png"
	m2, _ := ntfyPublish(t, e, 200, "PUT", "/"+token, []byte("Person at the gate"), "X-Attach", gone)
	if m2.Attachment == nil || m2.Attachment.URL != gone {
		t.Fatalf("answer attachment %+v: want the link that was not fetched", m2.Attachment)
	}
	if _, x := storedExtras(t, e, m2.ID); x.Attach != gone || x.Attachment == nil || x.Attachment.ID != "" ||
		x.Attachment.Error != "not fetched: the server answered 404 Not Found" {
		t.Errorf("stored attach %q, attachment %+v: want the link, saying why it was not fetched", x.Attach, x.Attachment)
	}
	if n := attCount(t, e, "attachments"); n != 1 {
		t.Errorf("%d attachments stored, want the one fetched", n)
	}

	body := `{"message":"Motion","extras":{"client::notification":{"bigImageUrl":"` + srv.URL + `/cam/snap.png"}}}`
	a, _ := gotifyPost(t, e, 200, "/message?token="+token, body, "Content-Type", "application/json")
	id := e.do(200, "GET", "/v1/messages?limit=1", nil, u.Token).Body["messages"].([]any)[0].(map[string]any)["id"].(string)
	if _, x := storedExtras(t, e, id); a.Message != "Motion" || x.Attachment == nil || x.Attachment.ID == "" || !x.Attachment.Image {
		t.Errorf("Gotify's big image: answer %+v, stored attachment %+v: want the picture fetched and kept", a, x.Attachment)
	}
}

// TestSlowUploadsHoldNoPlace: with one place for a file in memory
// (attachments.max_in_memory = 1), senders that trickle their bytes (a
// multipart file, an ntfy body of declared length) and a fetch from a
// server that trickles hold no place while they have sent little: another
// sender's large file goes through at once.
func TestSlowUploadsHoldNoPlace(t *testing.T) {
	e := newTestEnv(t, func(c *config.Config) {
		c.Attachments.MaxInMemory = 1
		c.Attachments.FetchTimeout = config.Duration{Duration: time.Minute}
	})
	u := e.newUser("slow@example.com")
	_, token := msgChannel(e, u, "cam")

	// A server that sends a few bytes of a picture, then waits.
	stall := make(chan struct{})
	defer close(stall)
	trickle := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "2000000")
		_, _ = w.Write([]byte("\x89PNG\r\n"))
		w.(http.Flusher).Flush()
		select {
		case <-stall:
		case <-r.Context().Done():
		}
	}))
	go func() {
		_ = e.request("POST", "/v1/send/"+token, map[string]any{"title": "slow fetch", "attachment": map[string]string{"url": trickle.URL + "/snap.png"}}, "")
	}()

	// A multipart send and an ntfy publish that send their first bytes,
	// then wait.
	slowBody := func(method, path, contentType string, length int64, head string) {
		pr, pw := io.Pipe()
		t.Cleanup(func() { pw.CloseWithError(errors.New("the test ended")) })
		req, err := http.NewRequest(method, e.srv.URL+path, pr)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = length
		req.Header.Set("Content-Type", contentType)
		go func() {
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
			}
		}()
		if _, err := io.WriteString(pw, head); err != nil {
			t.Fatal(err)
		}
	}
	const boundary = "slowslowslow"
	slowBody("POST", "/v1/send/"+token, "multipart/form-data; boundary="+boundary, -1,
		"--"+boundary+"\r\nContent-Disposition: form-data; name=\"payload\"\r\n\r\n{\"title\":\"slow\"}\r\n"+
			"--"+boundary+"\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n\r\nsome bytes")
	slowBody("PUT", "/"+token, "application/octet-stream", 3<<20, "the first bytes of a large file")
	time.Sleep(200 * time.Millisecond) // let the three reach the server and wait

	done := make(chan attRaw, 1)
	go func() {
		done <- attMultipart(t, e, "/v1/send/"+token, attPart{name: "payload", content: `{"title":"big"}`},
			attPart{name: "file", filename: "big.bin", content: strings.Repeat("x", 2<<20)})
	}()
	select {
	case r := <-done:
		if r.status != 200 {
			t.Fatalf("a 2 MiB file beside slow senders: %d %s", r.status, r.body)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("a 2 MiB file waited for slow senders to hold no place")
	}
}
