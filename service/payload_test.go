package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// wantInvalid checks that err is an Invalid refusal whose message holds
// part, or that err is nil when part is "".
func wantInvalid(t *testing.T, what string, err error, part string) {
	t.Helper()
	if part == "" {
		if err != nil {
			t.Errorf("%s: %v, want accepted", what, err)
		}
		return
	}
	var e *Error
	if !errors.As(err, &e) || e.Kind != Invalid || !strings.Contains(e.Message, part) {
		t.Errorf("%s: %v, want an invalid refusal saying %q", what, err, part)
	}
}

func ptr[T any](v T) *T { return &v }

// n is s repeated to n characters (é is one character, two bytes: the
// limits count characters).
func n(count int) string { return strings.Repeat("é", count) }

func button(key string) Action { return Action{Type: "button", Label: "OK", Key: key} }

func form(fields ...FormField) Action {
	return Action{Type: "form", Label: "Fill in", Key: "f", Fields: fields}
}

func text(key string) FormField { return FormField{Key: key, Label: "L", Type: "text"} }

// TestCheckSend covers every rule of a send payload at its edges.
func TestCheckSend(t *testing.T) {
	hook := ptr("https://hooks.example.com/h")
	manyActions := func(k int) []Action {
		var as []Action
		for i := range k {
			as = append(as, button(fmt.Sprint("k", i)))
		}
		return as
	}
	manyFields := func(k int) []FormField {
		var fs []FormField
		for i := range k {
			fs = append(fs, text(fmt.Sprint("f", i)))
		}
		return fs
	}
	options := func(k int) []string {
		var os []string
		for i := range k {
			os = append(os, fmt.Sprint("o", i))
		}
		return os
	}
	cases := []struct {
		name string
		p    SendPayload
		want string // "" for accepted, else part of the message
	}{
		{"minimal", SendPayload{Title: ptr("t")}, ""},
		{"no title", SendPayload{}, "title is required"},
		{"blank title", SendPayload{Title: ptr("  ")}, "title is required"},
		{"title at the limit", SendPayload{Title: ptr(n(MaxTitle))}, ""},
		{"title over the limit", SendPayload{Title: ptr(n(MaxTitle + 1))}, "title is 101 characters"},
		{"body at the limit", SendPayload{Title: ptr("t"), Body: n(MaxBodyChars)}, ""},
		{"body over the limit", SendPayload{Title: ptr("t"), Body: n(MaxBodyChars + 1)}, "body is 10001 characters"},
		{"priority high", SendPayload{Title: ptr("t"), Priority: "high"}, ""},
		{"priority low", SendPayload{Title: ptr("t"), Priority: "low"}, ""},
		{"priority unknown", SendPayload{Title: ptr("t"), Priority: "emergency"}, "priority must be low, normal, high or urgent"},
		{"priority urgent", SendPayload{Title: ptr("t"), Priority: "urgent"}, ""},
		{"urgent times at their bounds", SendPayload{Title: ptr("t"), Priority: "urgent", Urgent: &UrgentOptions{
			RepeatSeconds: ptr(MinRepeatSeconds), ExpireSeconds: ptr(MaxExpireSeconds), EscalateAfterSeconds: ptr(MaxExpireSeconds)}}, ""},
		{"urgent times at their other bounds", SendPayload{Title: ptr("t"), Priority: "urgent", Urgent: &UrgentOptions{
			RepeatSeconds: ptr(MaxExpireSeconds), ExpireSeconds: ptr(MinRepeatSeconds), EscalateAfterSeconds: ptr(MinRepeatSeconds)}}, ""},
		{"urgent repeat too short", SendPayload{Title: ptr("t"), Priority: "urgent", Urgent: &UrgentOptions{RepeatSeconds: ptr(MinRepeatSeconds - 1)}}, "urgent.repeat_seconds must be between 30"},
		{"urgent repeat too long", SendPayload{Title: ptr("t"), Priority: "urgent", Urgent: &UrgentOptions{RepeatSeconds: ptr(MaxExpireSeconds + 1)}}, "urgent.repeat_seconds must be between 30"},
		{"urgent expire too short", SendPayload{Title: ptr("t"), Priority: "urgent", Urgent: &UrgentOptions{ExpireSeconds: ptr(MinRepeatSeconds - 1)}}, "urgent.expire_seconds must be between 30"},
		{"urgent expire too long", SendPayload{Title: ptr("t"), Priority: "urgent", Urgent: &UrgentOptions{ExpireSeconds: ptr(MaxExpireSeconds + 1)}}, "urgent.expire_seconds must be between 30 and 10800"},
		{"urgent escalate too short", SendPayload{Title: ptr("t"), Priority: "urgent", Urgent: &UrgentOptions{EscalateAfterSeconds: ptr(MinRepeatSeconds - 1)}}, "urgent.escalate_after_seconds"},
		{"urgent escalate too long", SendPayload{Title: ptr("t"), Priority: "urgent", Urgent: &UrgentOptions{EscalateAfterSeconds: ptr(MaxExpireSeconds + 1)}}, "urgent.escalate_after_seconds"},
		{"urgent without priority urgent", SendPayload{Title: ptr("t"), Priority: "high", Urgent: &UrgentOptions{}}, "set priority to urgent"},
		{"urgent with room for the button", SendPayload{Title: ptr("t"), Priority: "urgent", Actions: manyActions(MaxActions - 1)}, ""},
		{"urgent without room for the button", SendPayload{Title: ptr("t"), Priority: "urgent", Actions: manyActions(MaxActions)}, "at most 4 actions of its own"},
		{"urgent with its own button", SendPayload{Title: ptr("t"), Priority: "urgent", Actions: append(manyActions(MaxActions-1), button(AckKey))}, ""},
		{"urgent acknowledge on a form", SendPayload{Title: ptr("t"), Priority: "urgent", CallbackURL: hook,
			Actions: []Action{{Type: "form", Label: "a", Key: AckKey, Fields: []FormField{text("x")}}}}, "is the Acknowledge button's"},
		{"callback", SendPayload{Title: ptr("t"), CallbackURL: hook}, ""},
		{"callback not http", SendPayload{Title: ptr("t"), CallbackURL: ptr("ftp://x/y")}, "callback_url must be an absolute http"},
		{"callback relative", SendPayload{Title: ptr("t"), CallbackURL: ptr("/hook")}, "callback_url must be an absolute http"},
		{"callback at the limit", SendPayload{Title: ptr("t"), CallbackURL: ptr("https://h/" + strings.Repeat("a", MaxURL-10))}, ""},
		{"callback over the limit", SendPayload{Title: ptr("t"), CallbackURL: ptr("https://h/" + strings.Repeat("a", MaxURL-9))}, "longer than 2048"},
		{"actions at the limit", SendPayload{Title: ptr("t"), Actions: manyActions(MaxActions)}, ""},
		{"actions over the limit", SendPayload{Title: ptr("t"), Actions: manyActions(MaxActions + 1)}, "at most 5"},
		{"duplicate keys", SendPayload{Title: ptr("t"), Actions: []Action{button("a"), button("a")}}, `key "a" is used twice`},
		{"button without a key", SendPayload{Title: ptr("t"), Actions: []Action{button("")}}, "key is required"},
		{"key at the limit", SendPayload{Title: ptr("t"), Actions: []Action{button(n(MaxKey))}}, ""},
		{"key over the limit", SendPayload{Title: ptr("t"), Actions: []Action{button(n(MaxKey + 1))}}, "key is longer than 64"},
		{"button without a label", SendPayload{Title: ptr("t"), Actions: []Action{{Type: "button", Label: " ", Key: "k"}}}, "label is required"},
		{"label at the limit", SendPayload{Title: ptr("t"), Actions: []Action{{Type: "button", Label: n(MaxLabel), Key: "k"}}}, ""},
		{"label over the limit", SendPayload{Title: ptr("t"), Actions: []Action{{Type: "button", Label: n(MaxLabel + 1), Key: "k"}}}, "label is longer than 100"},
		{"styles", SendPayload{Title: ptr("t"), Actions: []Action{
			{Type: "button", Label: "a", Key: "a", Style: "primary"}, {Type: "button", Label: "b", Key: "b", Style: "destructive"},
			{Type: "button", Label: "c", Key: "c", Style: "default"}}}, ""},
		{"unknown style", SendPayload{Title: ptr("t"), Actions: []Action{{Type: "button", Label: "a", Key: "a", Style: "loud"}}}, "style must be"},
		{"no type", SendPayload{Title: ptr("t"), Actions: []Action{{Label: "a", Key: "a"}}}, "type is required"},
		{"unknown type", SendPayload{Title: ptr("t"), Actions: []Action{{Type: "link", Label: "a", Key: "a"}}}, `not "link"`},
		{"button with a value", SendPayload{Title: ptr("t"), Actions: []Action{{Type: "button", Label: "a", Key: "a", Value: "v"}}}, "takes no value"},
		{"button with fields", SendPayload{Title: ptr("t"), Actions: []Action{{Type: "button", Label: "a", Key: "a", Fields: []FormField{text("x")}}}}, "takes no fields"},
		{"url", SendPayload{Title: ptr("t"), Actions: []Action{{Type: "url", Label: "Open", Value: "https://example.com/x"}}}, ""},
		{"url without a value", SendPayload{Title: ptr("t"), Actions: []Action{{Type: "url", Label: "Open"}}}, "needs value"},
		{"url not http", SendPayload{Title: ptr("t"), Actions: []Action{{Type: "url", Label: "Open", Value: "javascript:alert(1)"}}}, "value must be an absolute http"},
		{"url with a key", SendPayload{Title: ptr("t"), Actions: []Action{{Type: "url", Label: "Open", Value: "https://e.com", Key: "k"}}}, "not key or fields"},
		{"url with fields", SendPayload{Title: ptr("t"), Actions: []Action{{Type: "url", Label: "Open", Value: "https://e.com", Fields: []FormField{text("x")}}}}, "not key or fields"},
		{"url actions need no key", SendPayload{Title: ptr("t"), Actions: []Action{
			{Type: "url", Label: "a", Value: "https://e.com/a"}, {Type: "url", Label: "b", Value: "https://e.com/b"}}}, ""},
		{"form", SendPayload{Title: ptr("t"), CallbackURL: hook, Actions: []Action{form(text("x"))}}, ""},
		{"form without a callback", SendPayload{Title: ptr("t"), Actions: []Action{form(text("x"))}}, "requires callback_url"},
		{"form without fields", SendPayload{Title: ptr("t"), CallbackURL: hook, Actions: []Action{form()}}, "at least one field"},
		{"form fields at the limit", SendPayload{Title: ptr("t"), CallbackURL: hook, Actions: []Action{form(manyFields(MaxFields)...)}}, ""},
		{"form fields over the limit", SendPayload{Title: ptr("t"), CallbackURL: hook, Actions: []Action{form(manyFields(MaxFields + 1)...)}}, "at most 10"},
		{"field without a key", SendPayload{Title: ptr("t"), CallbackURL: hook, Actions: []Action{form(text(""))}}, "fields[0]: key is required"},
		{"field keys twice", SendPayload{Title: ptr("t"), CallbackURL: hook, Actions: []Action{form(text("x"), text("x"))}}, `fields[1]: key "x" is used twice`},
		{"field without a label", SendPayload{Title: ptr("t"), CallbackURL: hook, Actions: []Action{form(FormField{Key: "x", Label: " ", Type: "text"})}}, "label is required"},
		{"field label at the limit", SendPayload{Title: ptr("t"), CallbackURL: hook, Actions: []Action{form(FormField{Key: "x", Label: n(MaxLabel), Type: "text"})}}, ""},
		{"field label over the limit", SendPayload{Title: ptr("t"), CallbackURL: hook, Actions: []Action{form(FormField{Key: "x", Label: n(MaxLabel + 1), Type: "text"})}}, "label is required, at most 100"},
		{"placeholder at the limit", SendPayload{Title: ptr("t"), CallbackURL: hook, Actions: []Action{form(FormField{Key: "x", Label: "L", Type: "text", Placeholder: n(MaxPlaceholder)})}}, ""},
		{"placeholder over the limit", SendPayload{Title: ptr("t"), CallbackURL: hook, Actions: []Action{form(FormField{Key: "x", Label: "L", Type: "text", Placeholder: n(MaxPlaceholder + 1)})}}, "placeholder is longer than 200"},
		{"field types", SendPayload{Title: ptr("t"), CallbackURL: hook, Actions: []Action{form(
			FormField{Key: "a", Label: "L", Type: "textarea"}, FormField{Key: "b", Label: "L", Type: "number"},
			FormField{Key: "c", Label: "L", Type: "checkbox"}, FormField{Key: "d", Label: "L", Type: "select", Options: []string{"x"}})}}, ""},
		{"unknown field type", SendPayload{Title: ptr("t"), CallbackURL: hook, Actions: []Action{form(FormField{Key: "x", Label: "L", Type: "date"})}}, "type must be text"},
		{"options on a text field", SendPayload{Title: ptr("t"), CallbackURL: hook, Actions: []Action{form(FormField{Key: "x", Label: "L", Type: "text", Options: []string{"a"}})}}, "only select fields take options"},
		{"select without options", SendPayload{Title: ptr("t"), CallbackURL: hook, Actions: []Action{form(FormField{Key: "x", Label: "L", Type: "select"})}}, "1 to 50 options"},
		{"select options at the limit", SendPayload{Title: ptr("t"), CallbackURL: hook, Actions: []Action{form(FormField{Key: "x", Label: "L", Type: "select", Options: options(MaxOptions)})}}, ""},
		{"select options over the limit", SendPayload{Title: ptr("t"), CallbackURL: hook, Actions: []Action{form(FormField{Key: "x", Label: "L", Type: "select", Options: options(MaxOptions + 1)})}}, "1 to 50 options"},
	}
	for _, tc := range cases {
		p := tc.p
		wantInvalid(t, tc.name, CheckSend(&p), tc.want)
	}
	p := SendPayload{Title: ptr("t")}
	if err := CheckSend(&p); err != nil || p.Priority != "normal" {
		t.Errorf("no priority: %v, priority %q; want it set to normal", err, p.Priority)
	}
}

// TestCheckResponses covers a form submission against its fields.
func TestCheckResponses(t *testing.T) {
	fields := []FormField{
		{Key: "name", Label: "Name", Type: "text", Required: true},
		{Key: "note", Label: "Note", Type: "textarea"},
		{Key: "count", Label: "Count", Type: "number"},
		{Key: "agree", Label: "Agree", Type: "checkbox", Required: true},
		{Key: "maybe", Label: "Maybe", Type: "checkbox"},
		{Key: "env", Label: "Env", Type: "select", Options: []string{"prod", "staging"}},
		{Key: "must", Label: "Must", Type: "select", Options: []string{"a"}, Required: true},
	}
	base := func(edit map[string]string) map[string]json.RawMessage {
		r := map[string]json.RawMessage{"name": json.RawMessage(`"Ann"`), "agree": json.RawMessage(`true`), "must": json.RawMessage(`"a"`)}
		for k, v := range edit {
			if v == "" {
				delete(r, k)
			} else {
				r[k] = json.RawMessage(v)
			}
		}
		return r
	}
	cases := []struct {
		name string
		r    map[string]json.RawMessage
		want string
	}{
		{"required only", base(nil), ""},
		{"everything", base(map[string]string{"note": `"n"`, "count": `3.5`, "maybe": `false`, "env": `"prod"`}), ""},
		{"optional null", base(map[string]string{"note": `null`, "count": ` null `}), ""},
		{"unknown key", base(map[string]string{"other": `"x"`}), `no field "other"`},
		{"required missing", base(map[string]string{"name": ""}), `field "name" is required`},
		{"required null", base(map[string]string{"name": `null`}), `field "name" is required`},
		{"required blank", base(map[string]string{"name": `"  "`}), `field "name" is required`},
		{"text not a string", base(map[string]string{"name": `5`}), "must be a string"},
		{"text at the limit", base(map[string]string{"note": `"` + n(MaxFieldValue) + `"`}), ""},
		{"text over the limit", base(map[string]string{"note": `"` + n(MaxFieldValue+1) + `"`}), "longer than 10000"},
		{"number not a number", base(map[string]string{"count": `"3"`}), "must be a number"},
		{"checkbox not a bool", base(map[string]string{"maybe": `"yes"`}), "must be true or false"},
		{"required checkbox unchecked", base(map[string]string{"agree": `false`}), `field "agree" must be checked`},
		{"select not an option", base(map[string]string{"env": `"dev"`}), "one of the options"},
		{"optional select empty", base(map[string]string{"env": `""`}), ""},
		{"required select empty", base(map[string]string{"must": `""`}), `field "must" is required`},
		{"required select not an option", base(map[string]string{"must": `"b"`}), "one of the options"},
	}
	for _, tc := range cases {
		wantInvalid(t, tc.name, CheckResponses(fields, tc.r), tc.want)
	}
}

// TestCheckVoteResponses covers what a vote may carry.
func TestCheckVoteResponses(t *testing.T) {
	many := func(k int) map[string]json.RawMessage {
		r := map[string]json.RawMessage{}
		for i := range k {
			r[fmt.Sprint("k", i)] = json.RawMessage(`1`)
		}
		return r
	}
	cases := []struct {
		name string
		r    map[string]json.RawMessage
		want string
	}{
		{"nothing", nil, ""},
		{"every kind", map[string]json.RawMessage{"a": json.RawMessage(`"x"`), "b": json.RawMessage(`2`),
			"c": json.RawMessage(`true`), "d": json.RawMessage(`null`)}, ""},
		{"keys at the limit", many(MaxFields), ""},
		{"keys over the limit", many(MaxFields + 1), "at most 10"},
		{"empty key", map[string]json.RawMessage{"": json.RawMessage(`1`)}, "keys must be 1 to 64"},
		{"key at the limit", map[string]json.RawMessage{n(MaxKey): json.RawMessage(`1`)}, ""},
		{"key over the limit", map[string]json.RawMessage{n(MaxKey + 1): json.RawMessage(`1`)}, "keys must be 1 to 64"},
		{"not JSON", map[string]json.RawMessage{"a": json.RawMessage(`{`)}, "not valid JSON"},
		{"an object", map[string]json.RawMessage{"a": json.RawMessage(`{}`)}, "must be a string, number"},
		{"string at the limit", map[string]json.RawMessage{"a": json.RawMessage(`"` + n(MaxFieldValue) + `"`)}, ""},
		{"string over the limit", map[string]json.RawMessage{"a": json.RawMessage(`"` + n(MaxFieldValue+1) + `"`)}, "longer than 10000"},
	}
	for _, tc := range cases {
		wantInvalid(t, tc.name, checkVoteResponses(tc.r), tc.want)
	}
}

// TestClip: a string of exactly n characters is kept whole; a longer one is
// cut to n characters, the last being "…".
func TestClip(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"éèê", 3, "éèê"},
		{"éèêë", 3, "éè…"},
		{"", 1, ""},
	} {
		if got := Clip(tc.s, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
