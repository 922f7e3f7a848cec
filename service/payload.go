package service

import (
	"encoding/json"
	"github.com/heraldhq/herald/store"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of a message (docs/sending.md). Lengths count Unicode characters.
const (
	MaxTitle       = 100
	MaxBodyChars   = 10000
	MaxActions     = 5
	MaxFields      = 10
	MaxLabel       = 100
	MaxKey         = 64
	MaxURL         = 2048
	MaxPlaceholder = 200
	MaxOptions     = 50
	MaxFieldValue  = 10000
)

// Action is one button, link or form of a message, as sent and as stored.
type Action struct {
	Type   string      `json:"type"`
	Label  string      `json:"label"`
	Value  string      `json:"value,omitempty"`
	Key    string      `json:"key,omitempty"`
	Style  string      `json:"style,omitempty"`
	Fields []FormField `json:"fields,omitempty"`

	// Request is what an "http" action does when tapped: Herald's
	// delivery queue makes this request (through the callback guard,
	// retried, in the delivery log). Value holds its URL. Nil on the
	// other types.
	Request *HTTPRequest `json:"request,omitempty"`
}

// HTTPRequest is the request an "http" action makes when a person taps it.
type HTTPRequest struct {
	Method  string            `json:"method,omitempty"` // POST when empty
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
}

// FormField is one input of a form action.
type FormField struct {
	Key         string   `json:"key"`
	Label       string   `json:"label"`
	Type        string   `json:"type"`
	Required    bool     `json:"required"`
	Options     []string `json:"options,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
}

// SendPayload is the body of POST /v1/send/{token}. It has no metadata
// field: strict decoding refuses it like any unknown field.
type SendPayload struct {
	Title       *string  `json:"title"`
	Body        string   `json:"body"`
	Priority    string   `json:"priority"`
	CallbackURL *string  `json:"callback_url"`
	Actions     []Action `json:"actions"`

	Extras

	// Urgent overrides the channel's alert times for an urgent message;
	// nil on any other.
	Urgent *UrgentOptions `json:"urgent,omitempty"`

	// Attachment names a file to fetch at send time and keep with the
	// message (attachments.fetch; else it stays a link).
	Attachment *AttachmentRequest `json:"attachment,omitempty"`

	// DeliverAt schedules the message: it is stored at once, listed as
	// scheduled, and streamed and pushed at this time. Nil sends now.
	DeliverAt *time.Time `json:"deliver_at,omitempty"`

	// Set by the ntfy and Gotify front doors only, never decoded from
	// Herald's own JSON.
	Ephemeral bool `json:"-"` // ntfy's cache=no: delivered live, not kept
	NoPush    bool `json:"-"` // ntfy's firebase=no: no phone push
}

// Extras are the presentation details a message may carry beside its
// title and body (store.Extras, where they are kept).
type Extras = store.Extras

// formNeedsCallback is why a form is refused without a callback_url, and
// what to do. What people type into a form is the one answer that cannot
// be asked again: it goes to the sender as a signed POST, retried until it
// arrives, where a poll reads an answer once and only for a while.
const formNeedsCallback = "a form action requires callback_url, even if you poll for the answer: " +
	"what people type into a form is delivered to callback_url as a signed POST, retried until it arrives, " +
	"while a poll reads an answer only once and only for polling.response_ttl (10 minutes by default). " +
	"Add a callback_url (the answer can still be polled too); buttons alone need none"

// CheckSend validates a decoded send payload and normalises its priority.
func CheckSend(p *SendPayload) error {
	if p.Title == nil || strings.TrimSpace(*p.Title) == "" {
		return invalid("title is required")
	}
	if n := chars(*p.Title); n > MaxTitle {
		return invalid("title is %d characters; the limit is %d", n, MaxTitle)
	}
	if n := chars(p.Body); n > MaxBodyChars {
		return invalid("body is %d characters; the limit is %d", n, MaxBodyChars)
	}
	switch p.Priority {
	case "":
		p.Priority = "normal"
	case "low", "normal", "high":
	case PriorityUrgent:
	default:
		return invalid("priority must be low, normal, high or urgent")
	}
	if p.CallbackURL != nil {
		if err := ValidHTTPURL("callback_url", *p.CallbackURL); err != nil {
			return err
		}
	}
	if len(p.Actions) > MaxActions {
		return invalid("%d actions; a message can have at most %d", len(p.Actions), MaxActions)
	}
	for _, a := range p.Actions {
		if a.Type == "http" {
			generateKeys(p.Actions)
			break
		}
	}
	if p.Priority == PriorityUrgent || p.Urgent != nil {
		if err := checkUrgentSend(p); err != nil {
			return err
		}
	}
	keys := map[string]bool{}
	for i := range p.Actions {
		if err := validAction(i, &p.Actions[i], keys); err != nil {
			return err
		}
		// A form needs a callback; buttons without one are answered by
		// polling; url actions need nothing (docs/sending.md).
		if p.Actions[i].Type == "form" && p.CallbackURL == nil {
			return invalid("actions[%d]: %s", i, formNeedsCallback)
		}
	}
	if err := checkAttachmentRequest(p); err != nil {
		return err
	}
	return checkExtras(&p.Extras)
}

// ValidHTTPURL checks that s, the value of field, is an absolute http(s)
// URL of at most MaxURL characters.
func ValidHTTPURL(field, s string) error {
	if chars(s) > MaxURL {
		return invalid("%s is longer than %d characters", field, MaxURL)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid("%s must be an absolute http or https URL", field)
	}
	return nil
}

func validAction(i int, a *Action, keys map[string]bool) error {
	at := func(format string, args ...any) error {
		return invalid("actions[%d]: "+format, append([]any{i}, args...)...)
	}
	if strings.TrimSpace(a.Label) == "" {
		return at("label is required")
	}
	if chars(a.Label) > MaxLabel {
		return at("label is longer than %d characters", MaxLabel)
	}
	switch a.Style {
	case "", "default", "primary", "destructive":
	default:
		return at("style must be primary, destructive or default")
	}
	switch a.Type {
	case "url":
		if a.Value == "" {
			return at("a url Action needs value, the address to open")
		}
		if err := ValidHTTPURL("value", a.Value); err != nil {
			return at("value must be an absolute http or https URL of at most %d characters", MaxURL)
		}
		if a.Key != "" || len(a.Fields) > 0 || a.Request != nil {
			return at("a url Action takes label and value, not key or fields (nor request: that is an http Action's)")
		}
		return nil
	case "button", "form":
		if a.Request != nil {
			return at("only an http Action takes request")
		}
	case "http":
		if err := validHTTPAction(at, a); err != nil {
			return err
		}
	case "":
		return at("type is required: url, button, form or http")
	default:
		return at("type must be url, button, form or http, not %q", a.Type)
	}
	if err := validKey(a.Key); err != nil {
		return at("%s", message(err))
	}
	if keys[a.Key] {
		return at("key %q is used twice; keys must be unique within a message", a.Key)
	}
	keys[a.Key] = true
	if a.Type == "http" {
		return nil
	}
	if a.Value != "" {
		return at("a %s Action takes no value", a.Type)
	}
	if a.Type == "button" {
		if len(a.Fields) > 0 {
			return at("a button Action takes no fields; use type form")
		}
		return nil
	}
	return validFields(at, a.Fields)
}

func validKey(k string) error {
	if k == "" {
		return invalid("key is required")
	}
	if chars(k) > MaxKey {
		return invalid("key is longer than %d characters", MaxKey)
	}
	return nil
}

func validFields(at func(string, ...any) error, fields []FormField) error {
	if len(fields) == 0 {
		return at("a form Action needs at least one field")
	}
	if len(fields) > MaxFields {
		return at("%d fields; a form can have at most %d", len(fields), MaxFields)
	}
	seen := map[string]bool{}
	for j, f := range fields {
		if err := validKey(f.Key); err != nil {
			return at("fields[%d]: %s", j, message(err))
		}
		if seen[f.Key] {
			return at("fields[%d]: key %q is used twice", j, f.Key)
		}
		seen[f.Key] = true
		if strings.TrimSpace(f.Label) == "" || chars(f.Label) > MaxLabel {
			return at("fields[%d]: label is required, at most %d characters", j, MaxLabel)
		}
		if chars(f.Placeholder) > MaxPlaceholder {
			return at("fields[%d]: placeholder is longer than %d characters", j, MaxPlaceholder)
		}
		switch f.Type {
		case "text", "textarea", "number", "checkbox":
			if len(f.Options) > 0 {
				return at("fields[%d]: only select fields take options", j)
			}
		case "select":
			if len(f.Options) == 0 || len(f.Options) > MaxOptions {
				return at("fields[%d]: a select field needs 1 to %d options", j, MaxOptions)
			}
		default:
			return at("fields[%d]: type must be text, textarea, number, select or checkbox", j)
		}
	}
	return nil
}

// CheckResponses validates a form submission against its fields: required
// fields present, each value of its field's type, select values among the
// options, no unknown keys.
func CheckResponses(fields []FormField, responses map[string]json.RawMessage) error {
	byKey := map[string]FormField{}
	for _, f := range fields {
		byKey[f.Key] = f
	}
	for k := range responses {
		if _, ok := byKey[k]; !ok {
			return invalid("responses: no field %q in this form", k)
		}
	}
	for _, f := range fields {
		raw, ok := responses[f.Key]
		if !ok || isNull(raw) {
			if f.Required {
				return invalid("responses: field %q is required", f.Key)
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
// most MaxFields keys of at most MaxKey characters, each a string of at most
// MaxFieldValue characters, a number, true/false or null.
func checkVoteResponses(responses map[string]json.RawMessage) error {
	if len(responses) > MaxFields {
		return invalid("responses: %d keys; a vote can carry at most %d", len(responses), MaxFields)
	}
	for k, raw := range responses {
		if k == "" || chars(k) > MaxKey {
			return invalid("responses: keys must be 1 to %d characters", MaxKey)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return invalid("responses: %q is not valid JSON", k)
		}
		switch v := v.(type) {
		case nil, bool, float64:
		case string:
			if chars(v) > MaxFieldValue {
				return invalid("responses: %q is longer than %d characters", k, MaxFieldValue)
			}
		default:
			return invalid("responses: %q must be a string, number, true/false or null", k)
		}
	}
	return nil
}

func checkValue(f FormField, raw json.RawMessage) error {
	switch f.Type {
	case "number":
		var n float64
		if json.Unmarshal(raw, &n) != nil {
			return invalid("responses: field %q must be a number", f.Key)
		}
	case "checkbox":
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return invalid("responses: field %q must be true or false", f.Key)
		}
		if f.Required && !b {
			return invalid("responses: field %q must be checked", f.Key)
		}
	default: // text, textarea, select
		var str string
		if json.Unmarshal(raw, &str) != nil {
			return invalid("responses: field %q must be a string", f.Key)
		}
		if f.Required && strings.TrimSpace(str) == "" {
			return invalid("responses: field %q is required", f.Key)
		}
		if chars(str) > MaxFieldValue {
			return invalid("responses: field %q is longer than %d characters", f.Key, MaxFieldValue)
		}
		if f.Type == "select" && !slices.Contains(f.Options, str) && !(str == "" && !f.Required) {
			return invalid("responses: field %q must be one of the options", f.Key)
		}
	}
	return nil
}

// chars counts Unicode characters, as every limit does.
func chars(s string) int { return utf8.RuneCountInString(s) }

func isNull(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }
