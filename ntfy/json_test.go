package ntfy

import (
	"errors"
	"net/http"
	"reflect"
	"testing"
)

func TestPublishJSON(t *testing.T) {
	// Uptime Kuma's body, with a header Apprise would add beside its JSON.
	body := `{"topic":"tok_1","message":"[web] is down","title":"Uptime Kuma","priority":5,"tags":["red_circle","env: prod"],
		"actions":[{"action":"view","label":"Open","url":"https://kuma.lan/dashboard/1"}],"icon":"https://kuma.lan/icon.png",
		"markdown":true,"cache":"no","firebase":false,"sequence_id":"web-1","unknown":{"ignored":true}}`
	j, err := DecodePublishJSON([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	r, msg, err := j.Request(http.Header{"X-Click": {"https://from.header/"}, "X-Title": {"header title"}})
	if err != nil {
		t.Fatal(err)
	}
	if msg != "[web] is down" || j.Topic != "tok_1" {
		t.Fatalf("message %q, topic %q", msg, j.Topic)
	}
	p, err := ReadPublish(r, testNow)
	if err != nil {
		t.Fatal(err)
	}
	want := Publish{Title: "Uptime Kuma", Priority: 5, Tags: []string{"red_circle", "env: prod"},
		Click: "https://from.header/", Icon: "https://kuma.lan/icon.png", Markdown: true, NoCache: true, NoFirebase: true,
		SequenceID: "web-1", Actions: []Action{{Action: "view", Label: "Open", URL: "https://kuma.lan/dashboard/1"}}}
	if !reflect.DeepEqual(*p, want) {
		t.Fatalf("\n got %+v\nwant %+v", *p, want)
	}
}

func TestPublishJSONPriorityWords(t *testing.T) {
	for body, want := range map[string]int{`{"topic":"t","priority":"high"}`: 4, `{"topic":"t","priority":2}`: 2,
		`{"topic":"t","priority":null}`: 0, `{"topic":"t"}`: 0} {
		j, err := DecodePublishJSON([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		r, _, _ := j.Request(http.Header{})
		p, err := ReadPublish(r, testNow)
		if err != nil || p.Priority != want {
			t.Errorf("%s: priority %v, %v; want %d", body, p, err, want)
		}
	}
}

func TestPublishJSONRefuses(t *testing.T) {
	for body, code := range map[string]int{
		``:                                  CodeJSONInvalid,
		`topic=x`:                           CodeJSONInvalid,
		`{"topic":"t","priority":[1]}`:      CodeJSONInvalid,
		`{"topic":"t","tags":"a"}`:          CodeJSONInvalid,
		`{"message":"no topic"}`:            CodeTopicInvalid,
		`{"topic":"a/b","message":"x"}`:     CodeTopicInvalid,
		`{"topic":"","message":"x"}`:        CodeTopicInvalid,
		`{"topic":"t","cache":{"no":true}}`: CodeJSONInvalid,
	} {
		_, err := DecodePublishJSON([]byte(body))
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Code != code {
			t.Errorf("%s: %v; want ParamError %d", body, err, code)
		}
	}
}
