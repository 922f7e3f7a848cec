package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heraldhq/herald/service"
)

// FuzzParseSend feeds parseSend arbitrary bodies. A refused body must be a
// client error; an accepted one must keep every limit, survive being
// marshalled and parsed again, and have forms that checkResponses judges
// consistently, with the fuzzed responses and with a well-typed answer.
func FuzzParseSend(f *testing.F) {
	f.Add([]byte(`{"title":"Backup done"}`), []byte(`{}`))
	f.Add([]byte(`{"title":"Disk 91% full","body":"**/var** on `+"`db1`"+`","priority":"high",
		"actions":[{"type":"url","label":"Open Grafana","value":"https://grafana.example.com/d/disk"}]}`), []byte(`null`))
	f.Add([]byte(`{"title":"Deploy v2.3 to production?","body":"**42 files** changed, [diff](https://git.example.com/d/1)",
		"priority":"high","callback_url":"https://hooks.example.com/herald",
		"actions":[{"type":"button","key":"yes","label":"Deploy","style":"primary"},
		{"type":"form","key":"why","label":"Refuse","fields":[{"key":"reason","label":"Reason","type":"select","required":true,"options":["risky","later"]},
		{"key":"note","label":"Note","type":"textarea"},{"key":"n","label":"Count","type":"number"},{"key":"ok","label":"Sure","type":"checkbox","required":true}]}]}`),
		[]byte(`{"reason":"risky","note":"line 1\nline 2 ✓","n":3.5,"ok":true}`))
	f.Add([]byte(`{"title":"x","actions":[{"type":"form","key":"f","label":"F","fields":[{"key":"a","label":"A","type":"text"}]}]}`), []byte(`{}`))
	f.Add([]byte(`{"title":" ","priority":"urgent","metadata":{}}`), []byte(`{"zz":1}`))
	f.Add([]byte(`{"title":"t"} {"title":"u"}`), []byte(``))
	f.Fuzz(func(t *testing.T, body, responses []byte) {
		p, err := parseSend(body)
		if err != nil {
			if ae, ok := asAPIError(err); !ok || ae.status != http.StatusBadRequest {
				t.Fatalf("parseSend(%q) = %v; want a 400 apiError", body, err)
			}
			return
		}
		checkSendLimits(t, p)
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("marshal accepted payload: %v", err)
		}
		p2, err := parseSend(again)
		if err != nil {
			t.Fatalf("re-marshalled payload refused: %v\n%s", err, again)
		}
		if again2, _ := json.Marshal(p2); !bytes.Equal(again, again2) {
			t.Fatalf("payload changed on a second parse:\n%s\n%s", again, again2)
		}
		var rs map[string]json.RawMessage
		_ = json.Unmarshal(responses, &rs)
		for _, a := range p.Actions {
			if a.Type == "form" {
				checkFormResponses(t, a.Fields, rs)
			}
		}
	})
}

// checkSendLimits asserts, independently of parseSend, every limit of an
// accepted payload.
func checkSendLimits(t *testing.T, p *service.SendPayload) {
	t.Helper()
	if p.Title == nil || strings.TrimSpace(*p.Title) == "" || utf8.RuneCountInString(*p.Title) > service.MaxTitle {
		t.Fatalf("accepted title %q", derefOr(p.Title))
	}
	if n := utf8.RuneCountInString(p.Body); n > service.MaxBodyChars {
		t.Fatalf("accepted body of %d characters", n)
	}
	if !slices.Contains([]string{"low", "normal", "high"}, p.Priority) {
		t.Fatalf("accepted priority %q", p.Priority)
	}
	if p.CallbackURL != nil && !isHTTPURL(*p.CallbackURL) {
		t.Fatalf("accepted callback_url %q", *p.CallbackURL)
	}
	if len(p.Actions) > service.MaxActions {
		t.Fatalf("accepted %d actions", len(p.Actions))
	}
	keys := map[string]bool{}
	for i, a := range p.Actions {
		if strings.TrimSpace(a.Label) == "" || utf8.RuneCountInString(a.Label) > service.MaxLabel {
			t.Fatalf("actions[%d]: accepted label %q", i, a.Label)
		}
		if !slices.Contains([]string{"", "default", "primary", "destructive"}, a.Style) {
			t.Fatalf("actions[%d]: accepted style %q", i, a.Style)
		}
		switch a.Type {
		case "url":
			if !isHTTPURL(a.Value) || a.Key != "" || len(a.Fields) > 0 {
				t.Fatalf("actions[%d]: accepted url action %+v", i, a)
			}
			continue
		case "button":
			if len(a.Fields) > 0 {
				t.Fatalf("actions[%d]: accepted a button with fields", i)
			}
		case "form":
			if p.CallbackURL == nil {
				t.Fatalf("actions[%d]: accepted a form without callback_url", i)
			}
			checkFieldLimits(t, i, a.Fields)
		default:
			t.Fatalf("actions[%d]: accepted type %q", i, a.Type)
		}
		if a.Key == "" || utf8.RuneCountInString(a.Key) > service.MaxKey || keys[a.Key] || a.Value != "" {
			t.Fatalf("actions[%d]: accepted key %q (value %q)", i, a.Key, a.Value)
		}
		keys[a.Key] = true
	}
}

func checkFieldLimits(t *testing.T, i int, fields []service.FormField) {
	t.Helper()
	if len(fields) == 0 || len(fields) > service.MaxFields {
		t.Fatalf("actions[%d]: accepted %d fields", i, len(fields))
	}
	keys := map[string]bool{}
	for j, f := range fields {
		if f.Key == "" || utf8.RuneCountInString(f.Key) > service.MaxKey || keys[f.Key] {
			t.Fatalf("actions[%d].fields[%d]: accepted key %q", i, j, f.Key)
		}
		keys[f.Key] = true
		if strings.TrimSpace(f.Label) == "" || utf8.RuneCountInString(f.Label) > service.MaxLabel ||
			utf8.RuneCountInString(f.Placeholder) > service.MaxPlaceholder {
			t.Fatalf("actions[%d].fields[%d]: accepted label %q, placeholder %q", i, j, f.Label, f.Placeholder)
		}
		switch f.Type {
		case "select":
			if len(f.Options) == 0 || len(f.Options) > service.MaxOptions {
				t.Fatalf("actions[%d].fields[%d]: accepted a select with %d options", i, j, len(f.Options))
			}
		case "text", "textarea", "number", "checkbox":
			if len(f.Options) > 0 {
				t.Fatalf("actions[%d].fields[%d]: accepted options on a %s field", i, j, f.Type)
			}
		default:
			t.Fatalf("actions[%d].fields[%d]: accepted type %q", i, j, f.Type)
		}
	}
}

// checkFormResponses asserts that checkResponses accepts only answers that
// fit the form, and accepts a well-typed answer to every field.
func checkFormResponses(t *testing.T, fields []service.FormField, rs map[string]json.RawMessage) {
	t.Helper()
	if err := service.CheckResponses(fields, rs); err == nil {
		for k := range rs {
			if !slices.ContainsFunc(fields, func(f service.FormField) bool { return f.Key == k }) {
				t.Fatalf("accepted responses with unknown key %q", k)
			}
		}
		for _, f := range fields {
			if raw, ok := rs[f.Key]; f.Required && (!ok || isNull(raw)) {
				t.Fatalf("accepted responses without required field %q", f.Key)
			}
		}
	} else if ae, ok := asAPIError(err); !ok || ae.status != http.StatusBadRequest {
		t.Fatalf("checkResponses = %v; want a 400 apiError", err)
	}
	valid, ok := typedAnswer(fields)
	if !ok {
		return
	}
	if err := service.CheckResponses(fields, valid); err != nil {
		t.Fatalf("well-typed answer %s refused: %v", mustMarshal(t, valid), err)
	}
}

// typedAnswer answers every field with a value of its type; ok is false
// when a select offers no option that could be submitted as a value.
func typedAnswer(fields []service.FormField) (map[string]json.RawMessage, bool) {
	out := map[string]json.RawMessage{}
	for _, f := range fields {
		switch f.Type {
		case "number":
			out[f.Key] = json.RawMessage(`1`)
		case "checkbox":
			out[f.Key] = json.RawMessage(`true`)
		case "select":
			i := slices.IndexFunc(f.Options, func(o string) bool {
				return strings.TrimSpace(o) != "" && utf8.RuneCountInString(o) <= service.MaxFieldValue
			})
			if i < 0 {
				return nil, false
			}
			b, _ := json.Marshal(f.Options[i])
			out[f.Key] = b
		default:
			out[f.Key] = json.RawMessage(`"x"`)
		}
	}
	return out, true
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && utf8.RuneCountInString(s) <= service.MaxURL
}

func derefOr(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
