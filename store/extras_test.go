package store

import (
	"reflect"
	"testing"
)

// TestEncodeExtrasRoundTrip: what is stored reads back the same, the ntfy
// priority included; nothing is stored for a message without extras.
func TestEncodeExtrasRoundTrip(t *testing.T) {
	for name, e := range map[string]Extras{
		"all": {Tags: []string{"warning", "💾"}, Click: "https://example.com/c", Icon: "https://example.com/i.png",
			Attach: "https://example.com/a.jpg", Markdown: true, SequenceID: "seq-1", NtfyPriority: 5},
		"priority only": {NtfyPriority: 1},
		"tags only":     {Tags: []string{"a"}},
		"attachment only": {Attachment: &AttachmentInfo{ID: "att_1", Name: "gate.jpg", ContentType: "image/jpeg",
			Size: 1234, Image: true, Thumbnail: true, Width: 1920, Height: 1080}},
		"link not fetched": {Attach: "https://example.com/a.jpg",
			Attachment: &AttachmentInfo{Name: "a.jpg", URL: "https://example.com/a.jpg", Error: "not fetched"}},
	} {
		doc, err := EncodeExtras(&e)
		if err != nil || doc == nil {
			t.Fatalf("%s: EncodeExtras = %s, %v", name, doc, err)
		}
		got, err := DecodeExtras(doc)
		if err != nil || !reflect.DeepEqual(got, e) {
			t.Errorf("%s: round trip %+v, %v; want %+v", name, got, err, e)
		}
	}
	if doc, err := EncodeExtras(&Extras{}); doc != nil || err != nil {
		t.Errorf("no extras stored as %s, %v; want nil", doc, err)
	}
	if got, err := DecodeExtras(nil); err != nil || !reflect.DeepEqual(got, Extras{}) {
		t.Errorf("DecodeExtras(nil) = %+v, %v", got, err)
	}
}
