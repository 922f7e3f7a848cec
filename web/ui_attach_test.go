package web_test

// Browser tests of the files and pictures a message carries: sent multipart
// like a camera's snapshot, kept by Herald, and shown by the web app through
// the authenticated attachment route.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/heraldhq/herald/config"
)

// snapshotOf is a w×h JPEG as a camera takes one: a gradient with noise
// over it, so that its thumbnail is much smaller than it.
func snapshotOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	seed := uint32(7)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			seed = seed*1664525 + 1013904223
			n := uint8(seed >> 26)
			img.SetRGBA(x, y, color.RGBA{uint8(x*200/w) + n, uint8(y*200/h) + n, 120 + n, 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngOf is a w×h PNG: a gradient, so that it is a real picture.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetRGBA(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), 160, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sendFile posts payload and a file to a webhook URL as multipart/form-data
// (part payload, part file), as curl -F does, and returns the message's id.
func (e *env) sendFile(webhook string, payload map[string]any, name string, data []byte) string {
	e.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	js, err := json.Marshal(payload)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := w.WriteField("payload", string(js)); err != nil {
		e.t.Fatal(err)
	}
	part, err := w.CreateFormFile("file", name)
	if err != nil {
		e.t.Fatal(err)
	}
	part.Write(data)
	w.Close()
	res, err := e.http.Post(webhook, w.FormDataContentType(), &body)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out struct {
		OK bool   `json:"ok"`
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &out); res.StatusCode != http.StatusOK || err != nil || !out.OK || !strings.HasPrefix(out.ID, "msg_") {
		e.t.Fatalf("POST %s multipart with %s: %d %s", webhook, name, res.StatusCode, raw)
	}
	return out.ID
}

// attachmentOf is the message's attachment as GET /v1/messages/{id} shows it.
func (e *env) attachmentOf(token, id string) map[string]any {
	e.t.Helper()
	a, _ := e.apiMessage(token, id)["attachment"].(map[string]any)
	if a == nil {
		e.t.Fatalf("message %s has no attachment", id)
	}
	return a
}

// picture is what the page shows of a message's picture.
type picture struct {
	Src, Href, Alt, Loading string
	NaturalWidth            int
	Width, Height           float64 // as drawn, CSS pixels
	Card                    float64 // the card's width
}

const pictureJS = `((a) => {
	const img = a && a.querySelector(".message-picture img");
	if (!img) return null;
	const r = img.getBoundingClientRect();
	return {Src: img.getAttribute("src"), Href: img.closest("a").getAttribute("href"), Alt: img.alt, Loading: img.loading,
		NaturalWidth: img.naturalWidth, Width: r.width, Height: r.height, Card: a.getBoundingClientRect().width};
})`

// loadedPictureJS is a condition: the message's picture finished loading
// and has pixels (a refused or broken picture has naturalWidth 0).
func loadedPictureJS(sel string) string {
	return `((img) => !!img && img.complete && img.naturalWidth > 0)(document.querySelector(` + js(sel+" .message-picture img") + `))`
}

// TestUIAttachments: a picture sent multipart is shown in the message list
// from Herald's own route, loaded with the session (naturalWidth > 0; the
// same address without the session is refused): a large one by its
// thumbnail, linking to the full picture, a small one as it is, both named
// by their alt text, lazily loaded, within their box on a wide screen and
// on a phone, in light and dark. A file that is no picture is a download
// link with its name and size, whose answer says attachment.
func TestUIAttachments(t *testing.T) {
	e, b, _ := setup(t)
	tok := e.token(adaEmail, adaPassword)
	_, webhook := e.channel(tok, "Gate")
	big := e.sendFile(webhook, map[string]any{"title": "Person at the gate", "priority": "high"}, "gate.jpg", snapshotOf(t, 1280, 720))
	small := e.sendFile(webhook, map[string]any{"title": "Doorbell"}, "bell.png", pngOf(t, 64, 48))
	log := bytes.Repeat([]byte("backup: 42 files copied\n"), 512) // 12 KB
	file := e.sendFile(webhook, map[string]any{"title": "Backup log"}, "backup.log", log)
	bigAtt, smallAtt, fileAtt := e.attachmentOf(tok, big), e.attachmentOf(tok, small), e.attachmentOf(tok, file)
	thumb, _ := bigAtt["thumbnail_url"].(string)
	if bigAtt["image"] != true || thumb == "" || smallAtt["image"] != true || smallAtt["thumbnail_url"] != nil || fileAtt["image"] != false {
		t.Fatalf("attachments: %v, %v, %v; want two pictures, the large one with a thumbnail, and a file", bigAtt, smallAtt, fileAtt)
	}

	b.viewport(1280, 900)
	b.signIn(adaEmail, adaPassword)
	b.openView("messages")
	b.waitFor("the pictures loaded", loadedPictureJS(articleSel(big))+" && "+loadedPictureJS(articleSel(small))+" && "+loaded())
	got := eval[picture](b, pictureJS+`(`+articleJS(big)+`)`)
	if got.Src != thumb || got.Href != bigAtt["url"] || got.Alt != "gate.jpg" || got.Loading != "lazy" {
		t.Errorf("large picture %+v, want the thumbnail %s linking to %s, alt gate.jpg, lazy", got, thumb, bigAtt["url"])
	}
	// The thumbnail's longest side is 640 pixels; drawn within 480×320.
	if got.NaturalWidth != 640 || got.Width > 480 || got.Height > 320 || got.Width < 400 {
		t.Errorf("large picture: %d pixels wide, drawn %.0f×%.0f; want the 640 px thumbnail within 480×320", got.NaturalWidth, got.Width, got.Height)
	}
	gotSmall := eval[picture](b, pictureJS+`(`+articleJS(small)+`)`)
	if gotSmall.Src != smallAtt["url"] || gotSmall.Href != smallAtt["url"] || gotSmall.Alt != "bell.png" || gotSmall.NaturalWidth != 64 || gotSmall.Width != 64 {
		t.Errorf("small picture %+v, want %s at its own 64 px", gotSmall, smallAtt["url"])
	}

	// The file: its name and size, and its answer a download.
	link := articleSel(file) + " .message-attachment-file a"
	if got := b.text(link); got != "backup.log · 12 KB" {
		t.Errorf("file link reads %q, want backup.log · 12 KB", got)
	}
	type fetched struct {
		Status      int
		Disposition string
		Type        string
		Size        int
	}
	fetchJS := func(href string) string {
		return `fetch(` + href + `).then(async (r) => ({Status: r.status, Disposition: r.headers.get("content-disposition") || "",
			Type: r.headers.get("content-type") || "", Size: (await r.arrayBuffer()).byteLength}))`
	}
	dl := awaitJS[fetched](b, fetchJS(`document.querySelector(`+js(link)+`).href`))
	if dl.Status != 200 || !strings.HasPrefix(dl.Disposition, "attachment;") || !strings.Contains(dl.Disposition, "backup.log") || dl.Size != len(log) {
		t.Errorf("the file link answers %+v, want 200, Content-Disposition attachment naming backup.log, %d bytes", dl, len(log))
	}
	if href := eval[string](b, `document.querySelector(`+js(link)+`).getAttribute("href")`); href != fileAtt["url"] {
		t.Errorf("file link to %q, want %v", href, fileAtt["url"])
	}

	// Without the session the same addresses give nothing: the pictures
	// were loaded because this browser is signed in.
	stranger := b.isolatedTab()
	stranger.navigate("/")
	for _, u := range []string{thumb, fileAtt["url"].(string)} {
		if got := awaitJS[fetched](stranger, fetchJS(js(u))); got.Status != http.StatusUnauthorized && got.Status != http.StatusNotFound {
			t.Errorf("GET %s without a session: %d, want 401 or 404", u, got.Status)
		}
	}

	// On a phone the picture narrows with its card; nothing scrolls sideways.
	shots := os.Getenv("HERALD_UI_SHOTS")
	for _, width := range []int64{1280, 390} {
		b.viewport(width, 900)
		for _, theme := range []string{"light", "dark"} {
			eval[bool](b, `(localStorage.setItem("herald-theme", `+js(theme)+`), true)`)
			b.reload()
			b.waitFor("the pictures again", `document.documentElement.dataset.theme === `+js(theme)+` && `+
				loadedPictureJS(articleSel(big))+" && "+loaded())
			got := eval[picture](b, pictureJS+`(`+articleJS(big)+`)`)
			if got.Width > got.Card || got.Width < 1 || (width == 390 && got.Width > 390-32) {
				t.Errorf("%d px, %s: picture drawn %.0f px wide in a card of %.0f", width, theme, got.Width, got.Card)
			}
			if ratio := got.Width / got.Height; ratio < 1.7 || ratio > 1.85 {
				t.Errorf("%d px, %s: picture drawn %.0f×%.0f, not 16:9", width, theme, got.Width, got.Height)
			}
			if sw := eval[float64](b, `document.documentElement.scrollWidth`); sw > float64(width) {
				t.Errorf("%d px, %s: the page is %.0f px wide", width, theme, sw)
			}
			if shots != "" {
				b.save(filepath.Join(shots, fmt.Sprintf("attachments-%s-%d.png", theme, width)))
			}
		}
	}
	mustErrorEmpty(b)
}

// TestUIAttachmentByURL: a picture named by URL is fetched once, at send
// time, and then shown from Herald (the browser never asks the camera);
// an approver of the channel sees it on the Approvals page too.
func TestUIAttachmentByURL(t *testing.T) {
	var hits atomic.Int32
	snapshot := snapshotOf(t, 800, 600)
	camera := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "image/jpeg")
		w.Write(snapshot)
	}))
	t.Cleanup(camera.Close)
	e, b, _ := setup(t)
	e.addUser("bob@example.com", "bob's password!")
	tok := e.token(adaEmail, adaPassword)
	chID, webhook := e.channel(tok, "Gate")
	if status, body := e.api("PATCH", "/v1/channels/"+chID, tok, map[string]any{"approval": map[string]any{
		"approvers": []string{"bob@example.com"}, "required_count": 1, "window_seconds": 3600}}); status != 200 {
		t.Fatalf("set rule: %d %v", status, body)
	}
	e.acceptInvitations("bob@example.com", "bob's password!")
	id := e.send(webhook, map[string]any{"title": "Open the gate?", "attachment": map[string]any{"url": camera.URL + "/api/events/1/snapshot.jpg", "name": "gate.jpg"}})
	att := e.attachmentOf(tok, id)
	if att["image"] != true || att["width"] != 800.0 || att["name"] != "gate.jpg" {
		t.Fatalf("attachment %v, want the 800×600 picture gate.jpg", att)
	}
	if hits.Load() != 1 {
		t.Fatalf("the camera was asked %d times at send time, want once", hits.Load())
	}

	b.signIn(adaEmail, adaPassword)
	b.openView("messages")
	b.waitFor("the picture", loadedPictureJS(articleSel(id))+" && "+loaded())
	if got := eval[picture](b, pictureJS+`(`+articleJS(id)+`)`); got.Src != att["thumbnail_url"] || got.Alt != "gate.jpg" || got.NaturalWidth != 640 {
		t.Errorf("owner's picture %+v, want the thumbnail of gate.jpg", got)
	}

	bob := b.isolatedTab()
	bob.signIn("bob@example.com", "bob's password!")
	bob.openView("approvals")
	sel := `#approvals article.message[data-message-id="` + id + `"]`
	bob.waitFor("the picture for the approver", loadedPictureJS(sel)+" && "+loaded())
	if got := eval[picture](bob, pictureJS+`(document.querySelector(`+js(sel)+`))`); got.Src != att["thumbnail_url"] || got.NaturalWidth != 640 {
		t.Errorf("approver's picture %+v", got)
	}
	if hits.Load() != 1 {
		t.Errorf("the camera was asked %d times, want only once, at send time", hits.Load())
	}
	mustErrorEmpty(b)
	mustErrorEmpty(bob)
}

// TestUIAttachmentNotFetched: with fetching turned off a picture named by
// URL stays a link, and the message says it was not fetched and why.
func TestUIAttachmentNotFetched(t *testing.T) {
	e, b, _ := setup(t, func(c *config.Config) { c.Attachments.Fetch = false })
	tok := e.token(adaEmail, adaPassword)
	_, webhook := e.channel(tok, "Gate")
	id := e.send(webhook, map[string]any{"title": "Person at the gate", "attachment": map[string]any{"url": "https://cams.example/gate.jpg", "name": "gate.jpg"}})
	att := e.attachmentOf(tok, id)
	reason, _ := att["error"].(string)
	if reason == "" {
		t.Fatalf("attachment %v, want an error", att)
	}

	b.signIn(adaEmail, adaPassword)
	b.openView("messages")
	sel := articleSel(id) + " .message-attachment-error"
	b.waitFor("the note", shownJS(sel)+" && "+loaded())
	// The reason says "not fetched: ..." itself: the note says it once.
	if got, want := b.text(sel+" .attachment-error-text"), "Picture not fetched: "+strings.TrimPrefix(reason, "not fetched: "); got != want || strings.Count(got, "not fetched") != 1 {
		t.Errorf("note %q, want %q", got, want)
	}
	if got := eval[string](b, `document.querySelector(`+js(sel+" a")+`).getAttribute("href")`); got != "https://cams.example/gate.jpg" {
		t.Errorf("the note links to %q", got)
	}
	if eval[bool](b, `!!document.querySelector(`+js(articleSel(id)+" img")+`)`) {
		t.Error("a picture not fetched is drawn")
	}
	mustErrorEmpty(b)
}
