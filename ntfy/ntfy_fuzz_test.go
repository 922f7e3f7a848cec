package ntfy

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseActions holds the short format's parser to its promises on any
// input: no panic, and accepted actions are at most MaxActions, each of a
// known type, labelled, with a URL where one is needed.
func FuzzParseActions(f *testing.F) {
	for _, s := range []string{
		`view, Open portal, https://home.nest.com/, clear=true; http, Turn down, https://api.nest.com/, body='{"temperature": 65}'`,
		`action=http, label=x, url=https://a/, method=put, headers.A=b`,
		`view, "a \"b\", c", https://x/`,
		`broadcast, Go, extras.a=b, intent=x`,
		`copy, Copy, value='x;y'`,
		`[{"action":"view","label":"a","url":"https://a/"}]`,
		`view, 'unclosed`, `;;;`, `,,,`, `=`, `a=`, `"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		actions, err := ParseActions(s)
		if err != nil {
			if pe, ok := err.(*ParamError); !ok || pe.Code != CodeActionsInvalid {
				t.Fatalf("error %T %v is not a 40018 ParamError", err, err)
			}
			return
		}
		if len(actions) > MaxActions {
			t.Fatalf("%d actions accepted", len(actions))
		}
		for _, a := range actions {
			switch a.Action {
			case ActionView, ActionHTTP, ActionBroadcast, ActionCopy:
			default:
				t.Fatalf("type %q accepted", a.Action)
			}
			if strings.TrimSpace(a.Label) == "" {
				t.Fatal("an action without a label accepted")
			}
			if (a.Action == ActionView || a.Action == ActionHTTP) && a.URL == "" {
				t.Fatalf("a %s action without a URL accepted", a.Action)
			}
			if !strings.HasPrefix(strings.TrimSpace(s), "[") && !utf8.ValidString(a.Label+a.URL+a.Body) {
				t.Fatal("invalid UTF-8 accepted from the short format")
			}
		}
	})
}

// FuzzDecodeHeader holds RFC 2047 decoding to: no panic, a value without
// an encoded word comes back as it is, and what ReadPublish accepts is
// storable text.
func FuzzDecodeHeader(f *testing.F) {
	for _, s := range []string{
		"=?UTF-8?B?8J+agCBEZXBsb3llZA==?=", "=?utf-8?q?Caf=C3=A9_ouvert?=", "=?ISO-8859-1?Q?a=E9?=",
		"plain", "=?UTF-8?B?@@@?=", "=?x?y?z?=", "a =?UTF-8?Q?b?= c", "=?UTF-8?B?AA==?=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := decodeHeader(s)
		if !strings.Contains(s, "=?") && d != s {
			t.Fatalf("decodeHeader(%q) = %q, want it unchanged", s, d)
		}
		p, err := ReadPublish(Request{Header: http.Header{"X-Title": {s}, "X-Message": {s}}}, testNow)
		if err != nil {
			if _, ok := err.(*ParamError); !ok {
				t.Fatalf("error %T %v is not a ParamError", err, err)
			}
			return
		}
		if !Text(p.Title) || !Text(p.Message) {
			t.Fatalf("ReadPublish accepted title %q, message %q", p.Title, p.Message)
		}
	})
}
