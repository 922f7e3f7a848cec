package server

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// Limits of the send payload (SPEC.md "Limits"; CONTRACT.md for the rest).
// Lengths count Unicode characters.
const (
	maxTitle       = 100
	maxBodyChars   = 10000
	maxActions     = 5
	maxFields      = 10
	maxLabel       = 100
	maxKey         = 64
	maxURL         = 2048
	maxPlaceholder = 200
	maxOptions     = 50
	maxFieldValue  = 10000
)

// action is one button, link or form of a message, as sent and as stored.
type action struct {
	Type   string      `json:"type"`
	Label  string      `json:"label"`
	Value  string      `json:"value,omitempty"`
	Key    string      `json:"key,omitempty"`
	Style  string      `json:"style,omitempty"`
	Fields []formField `json:"fields,omitempty"`
}

// formField is one input of a form action.
type formField struct {
	Key         string   `json:"key"`
	Label       string   `json:"label"`
	Type        string   `json:"type"`
	Required    bool     `json:"required"`
	Options     []string `json:"options,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
}

// sendPayload is the body of POST /v1/send/{token}. It has no metadata
// field: strict decoding refuses it like any unknown field.
type sendPayload struct {
	Title       *string  `json:"title"`
	Body        string   `json:"body"`
	Priority    string   `json:"priority"`
	CallbackURL *string  `json:"callback_url"`
	Actions     []action `json:"actions"`
}

// approvalActions are the buttons of a message on an approval channel that
// was sent without actions of its own.
var approvalActions = []action{
	{Type: "button", Key: "approve", Label: "Approve", Style: "primary"},
	{Type: "button", Key: "reject", Label: "Reject", Style: "destructive"},
}

// parseSend decodes and validates a send payload, normalising priority.
func parseSend(body []byte) (*sendPayload, error) {
	var p sendPayload
	if err := decodeBytes(body, &p); err != nil {
		return nil, err
	}
	if p.Title == nil || strings.TrimSpace(*p.Title) == "" {
		return nil, errInvalidPayload("title is required")
	}
	if n := chars(*p.Title); n > maxTitle {
		return nil, errInvalidPayload("title is %d characters; the limit is %d", n, maxTitle)
	}
	if n := chars(p.Body); n > maxBodyChars {
		return nil, errInvalidPayload("body is %d characters; the limit is %d", n, maxBodyChars)
	}
	switch p.Priority {
	case "":
		p.Priority = "normal"
	case "low", "normal", "high":
	default:
		return nil, errInvalidPayload("priority must be low, normal or high")
	}
	if p.CallbackURL != nil {
		if err := validHTTPURL("callback_url", *p.CallbackURL); err != nil {
			return nil, err
		}
	}
	if len(p.Actions) > maxActions {
		return nil, errInvalidPayload("%d actions; a message can have at most %d", len(p.Actions), maxActions)
	}
	keys := map[string]bool{}
	for i := range p.Actions {
		if err := validAction(i, &p.Actions[i], keys); err != nil {
			return nil, err
		}
		// callback_url rule (CONTRACT.md): a form needs a callback; buttons
		// without one are answered by polling; url actions need nothing.
		if p.Actions[i].Type == "form" && p.CallbackURL == nil {
			return nil, errInvalidPayload("actions[%d]: a form action requires callback_url", i)
		}
	}
	return &p, nil
}

func validHTTPURL(field, s string) error {
	if chars(s) > maxURL {
		return errInvalidPayload("%s is longer than %d characters", field, maxURL)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errInvalidPayload("%s must be an absolute http or https URL", field)
	}
	return nil
}

func validAction(i int, a *action, keys map[string]bool) error {
	at := func(format string, args ...any) error {
		return errInvalidPayload("actions[%d]: "+format, append([]any{i}, args...)...)
	}
	if strings.TrimSpace(a.Label) == "" {
		return at("label is required")
	}
	if chars(a.Label) > maxLabel {
		return at("label is longer than %d characters", maxLabel)
	}
	switch a.Style {
	case "", "default", "primary", "destructive":
	default:
		return at("style must be primary, destructive or default")
	}
	switch a.Type {
	case "url":
		if a.Value == "" {
			return at("a url action needs value, the address to open")
		}
		if err := validHTTPURL("value", a.Value); err != nil {
			return at("value must be an absolute http or https URL of at most %d characters", maxURL)
		}
		if a.Key != "" || len(a.Fields) > 0 {
			return at("a url action takes label and value, not key or fields")
		}
		return nil
	case "button", "form":
	case "":
		return at("type is required: url, button or form")
	default:
		return at("type must be url, button or form, not %q", a.Type)
	}
	if err := validKey(a.Key); err != nil {
		return at("%s", err.(*apiError).message)
	}
	if keys[a.Key] {
		return at("key %q is used twice; keys must be unique within a message", a.Key)
	}
	keys[a.Key] = true
	if a.Value != "" {
		return at("a %s action takes no value", a.Type)
	}
	if a.Type == "button" {
		if len(a.Fields) > 0 {
			return at("a button action takes no fields; use type form")
		}
		return nil
	}
	return validFields(at, a.Fields)
}

func validKey(k string) error {
	if k == "" {
		return errInvalidPayload("key is required")
	}
	if chars(k) > maxKey {
		return errInvalidPayload("key is longer than %d characters", maxKey)
	}
	return nil
}

func validFields(at func(string, ...any) error, fields []formField) error {
	if len(fields) == 0 {
		return at("a form action needs at least one field")
	}
	if len(fields) > maxFields {
		return at("%d fields; a form can have at most %d", len(fields), maxFields)
	}
	seen := map[string]bool{}
	for j, f := range fields {
		if err := validKey(f.Key); err != nil {
			return at("fields[%d]: %s", j, err.(*apiError).message)
		}
		if seen[f.Key] {
			return at("fields[%d]: key %q is used twice", j, f.Key)
		}
		seen[f.Key] = true
		if strings.TrimSpace(f.Label) == "" || chars(f.Label) > maxLabel {
			return at("fields[%d]: label is required, at most %d characters", j, maxLabel)
		}
		if chars(f.Placeholder) > maxPlaceholder {
			return at("fields[%d]: placeholder is longer than %d characters", j, maxPlaceholder)
		}
		switch f.Type {
		case "text", "textarea", "number", "checkbox":
			if len(f.Options) > 0 {
				return at("fields[%d]: only select fields take options", j)
			}
		case "select":
			if len(f.Options) == 0 || len(f.Options) > maxOptions {
				return at("fields[%d]: a select field needs 1 to %d options", j, maxOptions)
			}
		default:
			return at("fields[%d]: type must be text, textarea, number, select or checkbox", j)
		}
	}
	return nil
}

// checkResponses validates a form submission against its fields: required
// fields present, each value of its field's type, select values among the
// options, no unknown keys.
func checkResponses(fields []formField, responses map[string]json.RawMessage) error {
	byKey := map[string]formField{}
	for _, f := range fields {
		byKey[f.Key] = f
	}
	for k := range responses {
		if _, ok := byKey[k]; !ok {
			return errInvalidPayload("responses: no field %q in this form", k)
		}
	}
	for _, f := range fields {
		raw, ok := responses[f.Key]
		if !ok || isNull(raw) {
			if f.Required {
				return errInvalidPayload("responses: field %q is required", f.Key)
			}
			continue
		}
		if err := checkValue(f, raw); err != nil {
			return err
		}
	}
	return nil
}

// checkVoteResponses bounds what a vote may carry (a comment, a reason):
// the limits of a form submission, without a form to check against. At
// most maxFields keys of at most maxKey characters, each a string of at most
// maxFieldValue characters, a number, true/false or null.
func checkVoteResponses(responses map[string]json.RawMessage) error {
	if len(responses) > maxFields {
		return errInvalidPayload("responses: %d keys; a vote can carry at most %d", len(responses), maxFields)
	}
	for k, raw := range responses {
		if k == "" || chars(k) > maxKey {
			return errInvalidPayload("responses: keys must be 1 to %d characters", maxKey)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return errInvalidPayload("responses: %q is not valid JSON", k)
		}
		switch v := v.(type) {
		case nil, bool, float64:
		case string:
			if chars(v) > maxFieldValue {
				return errInvalidPayload("responses: %q is longer than %d characters", k, maxFieldValue)
			}
		default:
			return errInvalidPayload("responses: %q must be a string, number, true/false or null", k)
		}
	}
	return nil
}

func checkValue(f formField, raw json.RawMessage) error {
	switch f.Type {
	case "number":
		var n float64
		if json.Unmarshal(raw, &n) != nil {
			return errInvalidPayload("responses: field %q must be a number", f.Key)
		}
	case "checkbox":
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return errInvalidPayload("responses: field %q must be true or false", f.Key)
		}
		if f.Required && !b {
			return errInvalidPayload("responses: field %q must be checked", f.Key)
		}
	default: // text, textarea, select
		var str string
		if json.Unmarshal(raw, &str) != nil {
			return errInvalidPayload("responses: field %q must be a string", f.Key)
		}
		if f.Required && strings.TrimSpace(str) == "" {
			return errInvalidPayload("responses: field %q is required", f.Key)
		}
		if chars(str) > maxFieldValue {
			return errInvalidPayload("responses: field %q is longer than %d characters", f.Key, maxFieldValue)
		}
		if f.Type == "select" && !slices.Contains(f.Options, str) && !(str == "" && !f.Required) {
			return errInvalidPayload("responses: field %q must be one of the options", f.Key)
		}
	}
	return nil
}
