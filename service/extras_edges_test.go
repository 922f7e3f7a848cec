package service

import (
	"strings"
	"testing"
	"time"
)

// TestExtrasAtTheirEdges holds every limit of the extras, scheduled
// delivery and http actions at its edge: the last value accepted and the
// first refused, and every end of each alphabet.
func TestExtrasAtTheirEdges(t *testing.T) {
	tags := func(n int) []string { return strings.Split(strings.Repeat("t,", n)[:2*n-1], ",") }
	for _, tc := range []struct {
		name string
		e    Extras
		ok   bool
	}{
		{"10 tags", Extras{Tags: tags(MaxTags)}, true},
		{"11 tags", Extras{Tags: tags(MaxTags + 1)}, false},
		{"a tag of 100", Extras{Tags: []string{strings.Repeat("é", MaxTag)}}, true},
		{"a tag of 101", Extras{Tags: []string{strings.Repeat("é", MaxTag+1)}}, false},
		{"a blank tag", Extras{Tags: []string{" "}}, false},
		{"a tag with a tab", Extras{Tags: []string{"a\tb"}}, false},
		{"a tag with DEL", Extras{Tags: []string{"a\x7fb"}}, false},
		{"a tag with a C1 control", Extras{Tags: []string{"a\u0085b"}}, false},
		{"a tag with U+009F", Extras{Tags: []string{"a\u009fb"}}, false},
		{"a tag with U+00A0", Extras{Tags: []string{"a\u00a0b"}}, true},
		{"a tag with a space", Extras{Tags: []string{"a b"}}, true},
		{"mailto click", Extras{Click: "mailto:ops@example.com"}, true},
		{"MAILTO click", Extras{Click: "MAILTO:ops@example.com"}, true},
		{"mailto without address", Extras{Click: "mailto:"}, false},
		{"mailto with a newline", Extras{Click: "mailto:ops@example.com\n"}, false},
		{"mailto too long", Extras{Click: "mailto:" + strings.Repeat("a", MaxURL)}, false},
		{"mailto at the limit", Extras{Click: "mailto:" + strings.Repeat("a", MaxURL-len("mailto:"))}, true},
		{"ftp click", Extras{Click: "ftp://example.com/"}, false},
		{"http icon", Extras{Icon: "http://example.com/i.png"}, true},
		{"relative icon", Extras{Icon: "/i.png"}, false},
		{"relative attachment", Extras{Attach: "a.jpg"}, false},
		{"sequence of 64", Extras{SequenceID: strings.Repeat("a", MaxSequenceID)}, true},
		{"sequence of 65", Extras{SequenceID: strings.Repeat("a", MaxSequenceID+1)}, false},
		{"sequence of every class", Extras{SequenceID: "azAZ09-_"}, true},
		{"sequence with a dot", Extras{SequenceID: "a.b"}, false},
		{"sequence with a slash", Extras{SequenceID: "a/b"}, false},
		{"sequence with @", Extras{SequenceID: "@"}, false}, // just below A
		{"sequence with [", Extras{SequenceID: "["}, false}, // just above Z
		{"sequence with `", Extras{SequenceID: "`"}, false}, // just below a
		{"sequence with {", Extras{SequenceID: "{"}, false}, // just above z
		{"sequence with :", Extras{SequenceID: ":"}, false}, // just above 9
		{"sequence with a space", Extras{SequenceID: "a b"}, false},
	} {
		err := checkExtras(&tc.e)
		if (err == nil) != tc.ok {
			t.Errorf("%s: checkExtras = %v, want ok %v", tc.name, err, tc.ok)
		}
	}

	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		ahead time.Duration
		ok    bool
	}{
		{"the minimum", MinDelay, true},
		{"just under the minimum", MinDelay - time.Millisecond, false},
		{"the maximum", MaxDelay, true},
		{"just over the maximum", MaxDelay + time.Millisecond, false},
	} {
		at := now.Add(tc.ahead)
		err := checkDelivery(&SendPayload{DeliverAt: &at}, now)
		if (err == nil) != tc.ok {
			t.Errorf("deliver_at %s: %v, want ok %v", tc.name, err, tc.ok)
		}
	}
	if err := checkDelivery(&SendPayload{}, now); err != nil {
		t.Errorf("no deliver_at: %v", err)
	}
	if err := message(checkDelivery(&SendPayload{DeliverAt: &now, Ephemeral: true}, now)); !strings.Contains(err, "not kept cannot be scheduled") {
		t.Errorf("an ephemeral scheduled message: %q", err)
	}
	if got := fmtDays(MaxDelay); got != "3 days" {
		t.Errorf("fmtDays(MaxDelay) = %q", got)
	}

	headers := func(n int) map[string]string {
		h := map[string]string{}
		for i := range n {
			h["X-H"+strings.Repeat("h", i)] = "v"
		}
		return h
	}
	for _, tc := range []struct {
		name string
		rq   HTTPRequest
		ok   bool
	}{
		{"a body at the limit", HTTPRequest{Body: strings.Repeat("b", MaxRequestBody)}, true},
		{"a body over it", HTTPRequest{Body: strings.Repeat("b", MaxRequestBody+1)}, false},
		{"10 headers", HTTPRequest{Headers: headers(MaxRequestHeaders)}, true},
		{"11 headers", HTTPRequest{Headers: headers(MaxRequestHeaders + 1)}, false},
		{"a value at the limit", HTTPRequest{Headers: map[string]string{"X-A": strings.Repeat("v", MaxHeaderValue)}}, true},
		{"a value over it", HTTPRequest{Headers: map[string]string{"X-A": strings.Repeat("v", MaxHeaderValue+1)}}, false},
		{"a value with a newline", HTTPRequest{Headers: map[string]string{"X-A": "a\nb"}}, false},
		{"a name of 100", HTTPRequest{Headers: map[string]string{strings.Repeat("n", 100): "v"}}, true},
		{"a name of 101", HTTPRequest{Headers: map[string]string{strings.Repeat("n", 101): "v"}}, false},
		{"a name of every class", HTTPRequest{Headers: map[string]string{"azAZ09!#$%&'*+-.^_`|~": "v"}}, true},
		{"a name with a colon", HTTPRequest{Headers: map[string]string{"X:A": "v"}}, false},
		{"a name with a space", HTTPRequest{Headers: map[string]string{"X A": "v"}}, false},
		{"a name with @", HTTPRequest{Headers: map[string]string{"@": "v"}}, false},
		{"a name with [", HTTPRequest{Headers: map[string]string{"[": "v"}}, false},
		{"a name with {", HTTPRequest{Headers: map[string]string{"{": "v"}}, false},
		{"a name with /", HTTPRequest{Headers: map[string]string{"/": "v"}}, false},
		{"an empty name", HTTPRequest{Headers: map[string]string{"": "v"}}, false},
		{"Host", HTTPRequest{Headers: map[string]string{"Host": "example.com"}}, false},
		{"a GET with a body", HTTPRequest{Method: "get", Body: "x"}, false},
		{"a HEAD with a body", HTTPRequest{Method: "HEAD", Body: "x"}, false},
		{"a GET without one", HTTPRequest{Method: "GET"}, true},
		{"TRACE", HTTPRequest{Method: "TRACE"}, false},
	} {
		rq := tc.rq
		a := Action{Type: "http", Label: "Go", Value: "https://example.com/hook", Request: &rq}
		err := validHTTPAction(func(f string, args ...any) error { return invalid(f, args...) }, &a)
		if (err == nil) != tc.ok {
			t.Errorf("%s: validHTTPAction = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
	a := Action{Type: "http", Label: "Go", Value: "https://example.com/hook"}
	if err := validHTTPAction(func(f string, args ...any) error { return invalid(f, args...) }, &a); err != nil ||
		a.Request == nil || a.Request.Method != "POST" {
		t.Errorf("an http action without a request: %v, %+v; want POST", err, a.Request)
	}
}
