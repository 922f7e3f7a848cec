package delivery

import (
	"context"
	"strings"
	"testing"

	"github.com/heraldhq/herald/store"
)

// TestPusherShowsStoredPicture: a message whose stored attachment is a
// picture is pushed with the link ImageLink makes (what service signs):
// Web Push's image, FCM's notification image, and APNs's image_url beside
// mutable-content for the app's notification service extension. A stored
// file that is no picture is pushed without one.
func TestPusherShowsStoredPicture(t *testing.T) {
	e := newPWEnv(t)
	_, ios := e.device(e.ann, "ios", "ann-iphone")
	_, android := e.device(e.ann, "android", "ann-pixel")
	_, web := e.device(e.ann, "web", "ann-firefox")
	var asked []string
	cfg := PushConfig{Workers: 2, ImageLink: func(_ context.Context, m *store.Message, a *store.AttachmentInfo) (string, error) {
		asked = append(asked, a.ID) // one worker runs a job: no race between jobs of one message
		return "https://herald.example.com/v1/attachments/" + a.ID + "?thumbnail=1&exp=1&sig=s", nil
	}}
	e.runWith(e.fakes.dispatcher(true, true, true), cfg)

	send := func(title string, a *store.Attachment) string {
		t.Helper()
		x, err := store.EncodeExtras(&store.Extras{Attachment: &a.AttachmentInfo})
		if err != nil {
			t.Fatal(err)
		}
		a.UserID = e.ann.ID
		m := &store.Message{ChannelID: e.ch.ID, Title: title, Priority: "normal", Extras: x}
		if err := e.st.CreateMessageWithAttachment(context.Background(), m, a, []byte("thumb"), 0); err != nil {
			t.Fatal(err)
		}
		return m.ID
	}
	pic := &store.Attachment{AttachmentInfo: store.AttachmentInfo{ID: store.NewAttachmentID(), Name: "gate.jpg",
		ContentType: "image/jpeg", Image: true, Thumbnail: true, Width: 1920, Height: 1080}, Data: []byte("jpeg")}
	send("Person at the gate", pic)
	e.waitIdle("the picture pushed", func() bool { return e.fakes.total() >= 3 })
	link := "https://herald.example.com/v1/attachments/" + pic.ID + "?thumbnail=1\\u0026exp=1\\u0026sig=s"
	for _, c := range []struct{ key, field string }{
		{ios, `"image_url":"` + link + `"`},
		{ios, `"mutable-content":1`},
		{android, `"image":"` + link + `"`},
		{web, `"image":"` + link + `"`},
	} {
		got := e.payload(c.key, 0)
		if !strings.Contains(strings.ReplaceAll(got, "&", `\u0026`), c.field) {
			t.Errorf("%s payload %s lacks %s", c.key, got, c.field)
		}
	}
	doc := &store.Attachment{AttachmentInfo: store.AttachmentInfo{ID: store.NewAttachmentID(), Name: "log.txt",
		ContentType: "text/plain; charset=utf-8"}, Data: []byte("log")}
	send("Log", doc)
	e.waitIdle("the file pushed", func() bool { return e.fakes.total() >= 6 })
	for _, key := range []string{ios, android, web} {
		if got := e.payload(key, 1); strings.Contains(got, "/v1/attachments/") {
			t.Errorf("%s: a file that is no picture pushed as one: %s", key, got)
		}
	}
	if len(asked) != 1 || asked[0] != pic.ID {
		t.Errorf("links asked for %v, want the picture's alone", asked)
	}
}

// payload is the i-th payload key got, as text.
func (e *pwEnv) payload(key string, i int) string {
	e.t.Helper()
	e.fakes.mu.Lock()
	defer e.fakes.mu.Unlock()
	if i >= len(e.fakes.payloads[key]) {
		e.t.Fatalf("%s got %d payloads, want a %dth", key, len(e.fakes.payloads[key]), i+1)
	}
	return string(e.fakes.payloads[key][i])
}
