package server

import (
	"reflect"
	"testing"

	"github.com/heraldhq/herald/service"
)

// quickBodies are send bodies decodeSendQuick reads itself (true) or leaves
// to the full decoder (false).
var quickBodies = []struct {
	body  string
	quick bool
}{
	{`{"title":"Backup done"}`, true},
	{`{"title":"Load test","body":"**bold** message body of a realistic length for a homelab alert","priority":"high"}`, true},
	{" \n{ \"title\" : \"Disk 91% full\" ,\t\"body\":\"/var on db1 ✓ — 日本\", \"callback_url\":\"https://hooks.example.com/h\"}\r\n", true},
	{`{}`, true},
	{`{"title":"a","title":"b"}`, true}, // the last one wins, as in encoding/json
	{`{"body":""}`, true},
	{`{"title":"line\nbreak"}`, false},     // an escape
	{`{"title":"tab	inside"}`, false},      // a raw control character
	{"{\"title\":\"\xff\xfe\"}", false},    // invalid UTF-8, replaced by the full decoder
	{`{"Title":"case"}`, false},            // encoding/json matches keys case-insensitively
	{`{"title":null}`, false},              // not a string
	{`{"title":"a","tags":["x"]}`, false},  // another member
	{`{"title":"a","priority":5}`, false},  // a wrong type: the full decoder's error
	{`{"title":"a",}`, false},              // a trailing comma
	{`{"title":"a"} {"title":"b"}`, false}, // more after the object
	{`{"title":"a"`, false},                // cut short
	{`["title","a"]`, false},               // not an object
	{`{"title":"a","callback_url":"x"`, false},
	{``, false},
}

func TestDecodeSendQuick(t *testing.T) {
	for _, c := range quickBodies {
		var quick service.SendPayload
		if got := decodeSendQuick([]byte(c.body), &quick); got != c.quick {
			t.Errorf("decodeSendQuick(%q) = %v, want %v", c.body, got, c.quick)
			continue
		}
		if c.quick {
			var full service.SendPayload
			if err := decodeStrict([]byte(c.body), &full, ""); err != nil {
				t.Errorf("%q: the full decoder refuses what the quick one read: %v", c.body, err)
			} else if !reflect.DeepEqual(quick, full) {
				t.Errorf("%q: quick %+v, full %+v", c.body, quick, full)
			}
		}
	}
}

// TestParseSendAfterQuickGivesUp: a body the quick decoder starts on and
// leaves is decoded from scratch, so a member it read before giving up
// does not stay behind.
func TestParseSendAfterQuickGivesUp(t *testing.T) {
	p, err := parseSend([]byte(`{"callback_url":"https://a.example.com/x","callback_url":null,"title":"t"}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.CallbackURL != nil || p.Title == nil || *p.Title != "t" {
		t.Fatalf("got callback_url %v, title %v; want nil and t", p.CallbackURL, p.Title)
	}
	if _, err := parseSend([]byte(`{"title":"a","priority":5}`)); err == nil {
		t.Fatal("a priority that is a number was accepted")
	} else if ae, ok := asAPIError(err); !ok || ae.code != "invalid_payload" {
		t.Fatalf("got %v; want invalid_payload naming the field", err)
	}
}
