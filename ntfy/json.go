package ntfy

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// PublishJSON is the body of a publish as JSON (PUT or POST to the root
// URL): the topic and the parameters a request to /<topic> would carry in
// headers. Unknown fields are ignored, as ntfy ignores them.
type PublishJSON struct {
	Topic      string   `json:"topic"`
	Message    string   `json:"message"`
	Title      string   `json:"title"`
	Priority   flexible `json:"priority"` // ntfy's is a number; "high" is read too
	Tags       []string `json:"tags"`
	Click      string   `json:"click"`
	Icon       string   `json:"icon"`
	Actions    []Action `json:"actions"`
	Attach     string   `json:"attach"`
	Filename   string   `json:"filename"`
	Markdown   bool     `json:"markdown"`
	Delay      string   `json:"delay"`
	Email      string   `json:"email"`
	Call       string   `json:"call"`
	Cache      flexible `json:"cache"`    // "no", or false
	Firebase   flexible `json:"firebase"` // "no", or false
	SequenceID string   `json:"sequence_id"`
}

// flexible is a JSON string, number or boolean, kept as text.
type flexible string

func (f *flexible) UnmarshalJSON(b []byte) error {
	var s string
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	} else if !bytes.Equal(b, []byte("null")) {
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		switch v := v.(type) {
		case float64:
			s = strconv.FormatFloat(v, 'f', -1, 64)
		case bool:
			s = strconv.FormatBool(v)
		default:
			return &json.UnmarshalTypeError{Value: "object or array", Type: nil}
		}
	}
	*f = flexible(s)
	return nil
}

// DecodePublishJSON reads a publish as JSON. Its topic must be an ntfy
// topic name.
func DecodePublishJSON(body []byte) (*PublishJSON, error) {
	var j PublishJSON
	if err := json.Unmarshal(body, &j); err != nil {
		return nil, paramError(CodeJSONInvalid, "the request body must be ntfy's message JSON, such as "+
			`{"topic":"...","message":"Disk full"}: %v`, err)
	}
	if !ValidID(j.Topic) {
		return nil, paramError(CodeTopicInvalid, "topic is missing or not a topic name (1-64 letters, digits, - or _)")
	}
	return &j, nil
}

// Request is the publish request j stands for, as ntfy makes it: j's
// fields set as headers over h's (a field j leaves empty keeps the
// header's value), and j's message as the body.
func (j *PublishJSON) Request(h http.Header) (Request, string, error) {
	out := make(http.Header, len(h)+8)
	for k, v := range h {
		out[k] = v
	}
	set := func(name, v string) {
		if v != "" {
			out[name] = []string{v}
		}
	}
	set("X-Title", j.Title)
	set("X-Priority", string(j.Priority))
	set("X-Tags", strings.Join(j.Tags, ","))
	set("X-Click", j.Click)
	set("X-Icon", j.Icon)
	set("X-Attach", j.Attach)
	set("X-Filename", j.Filename)
	set("X-Delay", j.Delay)
	set("X-Email", j.Email)
	set("X-Call", j.Call)
	set("X-Cache", string(j.Cache))
	set("X-Firebase", string(j.Firebase))
	set("X-Sequence-Id", j.SequenceID)
	if j.Markdown {
		set("X-Markdown", "yes")
	}
	if len(j.Actions) > 0 {
		b, err := json.Marshal(j.Actions)
		if err != nil {
			return Request{}, "", err
		}
		set("X-Actions", string(b))
	}
	return Request{Header: out}, j.Message, nil
}
