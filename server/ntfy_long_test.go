package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/ntfy"
	"github.com/heraldhq/herald/service"
)

// longText is n characters of UTF-8 text in lines, some of them two bytes
// long, as a log or a report is.
func longText(t *testing.T, n int) []byte {
	t.Helper()
	line := "2024-05-01 03:00:01 backup: copied 1 file, 0 errors, état: ok\n"
	var b strings.Builder
	chars := 0
	for ll := utf8.RuneCountInString(line); chars+ll <= n; chars += ll {
		b.WriteString(line)
	}
	for ; chars < n; chars++ {
		b.WriteByte('x')
	}
	if got := utf8.RuneCountInString(b.String()); got != n {
		t.Fatalf("longText: %d characters, want %d", got, n)
	}
	return []byte(b.String())
}

// ntfyFileBytes reads the file an ntfy answer's attachment links to,
// through its signed link, and fails t unless it is want.
func ntfyFileBytes(t *testing.T, e *testEnv, m ntfy.Message, want []byte) {
	t.Helper()
	if m.Attachment == nil {
		t.Fatalf("answer %+v has no attachment", m)
	}
	lu, err := url.Parse(m.Attachment.URL)
	if err != nil || lu.Query().Get("sig") == "" {
		t.Fatalf("attachment url %q: want a signed link", m.Attachment.URL)
	}
	if r := attGet(t, e, lu.RequestURI(), ""); r.status != 200 || !bytes.Equal(r.body, want) {
		t.Fatalf("signed link: %d, %d bytes; want 200 with the %d bytes sent", r.status, len(r.body), len(want))
	}
}

// TestNtfyLongTextIsFile: a text body longer than a message may be
// (service.MaxBodyChars characters) is kept as a file named
// attachment.txt, as ntfy keeps a text body over its message limit; one
// that fits, surrounding space trimmed, is still the message.
func TestNtfyLongTextIsFile(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("ntfylong@example.com")
	_, token := msgChannel(e, u, "Reports")

	text := longText(t, 50000)
	m, _ := ntfyPublish(t, e, 200, "PUT", "/"+token, text)
	if m.Message != "You received a file: attachment.txt" || m.Attachment == nil || m.Attachment.Name != "attachment.txt" ||
		m.Attachment.Type != "text/plain" || m.Attachment.Size != int64(len(text)) {
		t.Fatalf("answer %+v, attachment %+v: want the body as attachment.txt", m, m.Attachment)
	}
	ntfyFileBytes(t, e, m, text)
	if sm, x := storedExtras(t, e, m.ID); sm.Body != "You received a file: attachment.txt" || x.Attachment == nil ||
		x.Attachment.Name != "attachment.txt" || x.Attachment.Size != int64(len(text)) {
		t.Errorf("stored %q, attachment %+v", sm.Body, x.Attachment)
	}

	// The message parameter is the message of such a file.
	m2, _ := ntfyPublish(t, e, 200, "POST", "/"+token, text, "X-Message", "Nightly report")
	if m2.Message != "Nightly report" || m2.Attachment == nil || m2.Attachment.Name != "attachment.txt" {
		t.Errorf("with X-Message: %+v, %+v", m2, m2.Attachment)
	}

	// At the limit, counted in characters once trimmed, it is the message.
	fits := longText(t, service.MaxBodyChars)
	m3, _ := ntfyPublish(t, e, 200, "PUT", "/"+token, append(append([]byte("\n  "), fits...), "\n\n"...))
	if m3.Message != string(fits) || m3.Attachment != nil {
		t.Errorf("%d characters and space: message of %d characters, attachment %+v; want the message",
			service.MaxBodyChars, utf8.RuneCountInString(m3.Message), m3.Attachment)
	}
	over := longText(t, service.MaxBodyChars+1)
	m4, _ := ntfyPublish(t, e, 200, "PUT", "/"+token, over)
	if m4.Attachment == nil || m4.Attachment.Name != "attachment.txt" {
		t.Errorf("%d characters: %+v; want a file", service.MaxBodyChars+1, m4.Attachment)
	}

	// With an attach URL the body is the message, and too long a one is
	// refused as before.
	before := messageCount(t, e)
	_, ne := ntfyPublish(t, e, 400, "PUT", "/"+token, text, "X-Attach", "https://cam.example.com/a.jpg")
	if !strings.Contains(ne.Error, "10000") {
		t.Errorf("long body with an attach URL: %+v; want the limit named", ne)
	}
	if n := messageCount(t, e); n != before {
		t.Errorf("%d messages stored by the refused publish", n-before)
	}
}

// TestNtfyLongTextAttachmentsOff: with attachments off, a text body too
// long for a message is refused in ntfy's shape, naming the limit and the
// setting, and nothing is stored.
func TestNtfyLongTextAttachmentsOff(t *testing.T) {
	e := newTestEnv(t, func(c *config.Config) { c.Attachments.Enabled = false })
	u := e.newUser("ntfylongoff@example.com")
	_, token := msgChannel(e, u, "Reports")
	_, ne := ntfyPublish(t, e, 400, "PUT", "/"+token, longText(t, 50000))
	if ne.Code != ntfy.CodeBadRequest || !strings.Contains(ne.Error, "10000") || !strings.Contains(ne.Error, "attachments.enabled") {
		t.Errorf("error %+v: want 40000 naming the limit and attachments.enabled", ne)
	}
	if n := messageCount(t, e); n != 0 {
		t.Errorf("%d messages stored", n)
	}
	if n := attCount(t, e, "attachments"); n != 0 {
		t.Errorf("%d attachments stored", n)
	}
}

// ntfyPublishChunked is ntfyPublish with a body of unknown length
// (chunked), and a deadline: it fails t unless the answer is want within
// it.
func ntfyPublishChunked(t *testing.T, e *testEnv, want int, path string, body []byte, headers ...string) (ntfy.Message, ntfy.Error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "PUT", e.srv.URL+path, io.MultiReader(bytes.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("PUT %s: %v", path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != want {
		t.Fatalf("PUT %s: status %d, want %d; body %s", path, res.StatusCode, want, raw)
	}
	var m ntfy.Message
	var ne ntfy.Error
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("answer %s: %v", raw, err)
	}
	_ = json.Unmarshal(raw, &ne)
	if want >= 400 && (ne.HTTP != want || ne.Code/100 != want || ne.Error == "") {
		t.Fatalf("error %s is not ntfy's {code, http, error} for %d", raw, want)
	}
	return m, ne
}

// TestNtfyLargeTextIsFile: a text body over 1 MiB, declared or of unknown
// length, may be as large as a file (attachments.max_file_size) and is
// kept as one; a larger one is refused in ntfy's shape and nothing is
// stored.
func TestNtfyLargeTextIsFile(t *testing.T) {
	e := newTestEnv(t, func(c *config.Config) { c.Attachments.MaxFileSize = 4 << 20 })
	u := e.newUser("ntfylarge@example.com")
	_, token := msgChannel(e, u, "Logs")
	text := bytes.Repeat([]byte("May  1 03:00:01 nas kernel: eth0: link up, 1000 Mbps, full duplex\n"), (3<<20)/67)

	m, _ := ntfyPublish(t, e, 200, "PUT", "/"+token, text, "Content-Type", "text/plain")
	if m.Message != "You received a file: attachment.txt" || m.Attachment == nil || m.Attachment.Size != int64(len(text)) {
		t.Fatalf("3 MiB of text, declared: %+v, %+v", m, m.Attachment)
	}
	ntfyFileBytes(t, e, m, text)
	m2, _ := ntfyPublishChunked(t, e, 200, "/"+token, text)
	if m2.Attachment == nil || m2.Attachment.Name != "attachment.txt" || m2.Attachment.Size != int64(len(text)) {
		t.Fatalf("3 MiB of text, chunked: %+v, %+v", m2, m2.Attachment)
	}
	ntfyFileBytes(t, e, m2, text)
	if sm, x := storedExtras(t, e, m2.ID); sm.Body != "You received a file: attachment.txt" || x.Attachment == nil ||
		x.Attachment.Size != int64(len(text)) {
		t.Errorf("stored %q, %+v", sm.Body, x.Attachment)
	}

	before := messageCount(t, e)
	// Over the upload limit, read as it comes: 413 in ntfy's shape.
	huge := bytes.Repeat([]byte("y"), int(e.s.uploadLimit)+1)
	_, ne := ntfyPublishChunked(t, e, 413, "/"+token, huge)
	if ne.Code != ntfy.CodeTooLarge || !strings.Contains(ne.Error, "larger than") {
		t.Errorf("chunked body over the limit: %+v", ne)
	}
	// Declared over the limit: refused before it is read, in ntfy's shape
	// too.
	status, _, raw := rawCall(t, "PUT", e.srv.URL+"/"+token, huge)
	var declared ntfy.Error
	if err := json.Unmarshal(raw, &declared); status != 413 || err != nil || declared.Code != ntfy.CodeTooLarge ||
		declared.HTTP != 413 || !strings.Contains(declared.Error, "larger than") {
		t.Errorf("declared body over the limit: %d %s, want 413 in ntfy's shape", status, raw)
	}
	// Within the read limit but larger than max_file_size: the file's 413.
	_, ne = ntfyPublish(t, e, 413, "PUT", "/"+token, huge[:4<<20+1])
	if !strings.Contains(ne.Error, "max_file_size") {
		t.Errorf("body over max_file_size: %+v", ne)
	}
	if n := messageCount(t, e); n != before {
		t.Errorf("%d messages stored by refused publishes", n-before)
	}
	if n := attCount(t, e, "attachments"); n != 2 {
		t.Errorf("%d attachments stored, want the 2 accepted", n)
	}
}

// TestNtfyPublishHoldsOnlyLargeBodies: a publish of at most 1 MiB, file or
// message, never waits for a place for a file in memory
// (attachments.max_in_memory); a larger body waits for one.
func TestNtfyPublishHoldsOnlyLargeBodies(t *testing.T) {
	e := newTestEnv(t, func(c *config.Config) { c.Attachments.MaxInMemory = 1 })
	u := e.newUser("ntfyhold@example.com")
	_, token := msgChannel(e, u, "Logs")
	release, err := e.s.svc.HoldUpload(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { release() }()

	ntfyPublishChunked(t, e, 200, "/"+token, []byte("disk almost full"))
	if m, _ := ntfyPublishChunked(t, e, 200, "/"+token, []byte("%PDF-1.4 report"), "Filename", "report.pdf"); m.Attachment == nil {
		t.Errorf("small file: no attachment")
	}
	if m, _ := ntfyPublishChunked(t, e, 200, "/"+token, longText(t, 50000)); m.Attachment == nil {
		t.Errorf("50,000 characters: no attachment")
	}

	big := bytes.Repeat([]byte("z"), 2<<20)
	done := make(chan int, 1)
	go func() {
		req, err := http.NewRequest("PUT", e.srv.URL+"/"+token, bytes.NewReader(big))
		if err != nil {
			done <- 0
			return
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		done <- res.StatusCode
	}()
	select {
	case status := <-done:
		t.Fatalf("2 MiB publish answered %d while the only place was held", status)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	release = func() {}
	select {
	case status := <-done:
		if status != 200 {
			t.Errorf("2 MiB publish: %d", status)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("2 MiB publish still waiting after the place was given back")
	}
}
