package ntfy

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseActions(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Action
	}{
		{"ntfy's docs example",
			`view, Open portal, https://home.nest.com/, clear=true; http, Turn down, https://api.nest.com/, body='{"temperature": 65}'`,
			[]Action{
				{Action: "view", Label: "Open portal", URL: "https://home.nest.com/", Clear: true},
				{Action: "http", Label: "Turn down", URL: "https://api.nest.com/", Body: `{"temperature": 65}`},
			}},
		{"long form with keys in any order",
			`action=http, label=Close door, url=https://door.lan/close, method=put, headers.Authorization=Bearer x, headers.X-Id=7`,
			[]Action{{Action: "http", Label: "Close door", URL: "https://door.lan/close", Method: "PUT",
				Headers: map[string]string{"Authorization": "Bearer x", "X-Id": "7"}}}},
		{"quoted label with commas, semicolons and escaped quotes",
			`view, "Look, \"quotes\"; and more", https://x.example/`,
			[]Action{{Action: "view", Label: `Look, "quotes"; and more`, URL: "https://x.example/"}}},
		{"single quotes keep double quotes",
			`http, 'Say "hi"', https://x.example/, body='{"a":1}'`,
			[]Action{{Action: "http", Label: `Say "hi"`, URL: "https://x.example/", Body: `{"a":1}`}}},
		{"type in upper case is lowered",
			`VIEW, Open, https://x.example/`,
			[]Action{{Action: "view", Label: "Open", URL: "https://x.example/"}}},
		{"broadcast with extras and intent",
			`broadcast, Take picture, extras.cmd=pic, intent=io.heckel.ntfy.USER_ACTION`,
			[]Action{{Action: "broadcast", Label: "Take picture", Intent: "io.heckel.ntfy.USER_ACTION",
				Extras: map[string]string{"cmd": "pic"}}}},
		{"copy with value", `copy, Copy code, value=123456`,
			[]Action{{Action: "copy", Label: "Copy code", Value: "123456"}}},
		{"spaces and a trailing semicolon",
			"  view ,  Open  ,  https://x.example/  ;  ",
			[]Action{{Action: "view", Label: "Open", URL: "https://x.example/"}}},
		{"JSON array",
			`[{"action":"view","label":"Admin","url":"https://filesrv.lan/admin","clear":true},{"action":"http","label":"Off","url":"https://x/off","method":"delete"}]`,
			[]Action{{Action: "view", Label: "Admin", URL: "https://filesrv.lan/admin", Clear: true},
				{Action: "http", Label: "Off", URL: "https://x/off", Method: "DELETE"}}},
		{"three is the limit",
			`view, a, https://a/; view, b, https://b/; view, c, https://c/`,
			[]Action{{Action: "view", Label: "a", URL: "https://a/"}, {Action: "view", Label: "b", URL: "https://b/"},
				{Action: "view", Label: "c", URL: "https://c/"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseActions(tt.in)
			if err != nil {
				t.Fatalf("ParseActions(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseActions(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseActionsRefuses(t *testing.T) {
	tests := []struct{ name, in string }{
		{"four actions", `view, a, https://a/; view, b, https://b/; view, c, https://c/; view, d, https://d/`},
		{"four in JSON", `[{"action":"view","label":"a","url":"https://a/"},{"action":"view","label":"b","url":"https://b/"},{"action":"view","label":"c","url":"https://c/"},{"action":"view","label":"d","url":"https://d/"}]`},
		{"unknown type", `dance, Go, https://x/`},
		{"no label", `view`},
		{"empty label", `view, "", https://x/`},
		{"view without url", `view, Open`},
		{"http without url", `http, Post`},
		{"body with GET", `http, Get, https://x/, method=GET, body=x`},
		{"body with HEAD", `http, Get, https://x/, method=head, body=x`},
		{"unknown key", `view, Open, https://x/, colour=red`},
		{"bare fourth part", `view, Open, https://x/, extra`},
		{"bare third part of broadcast", `broadcast, Go, something`},
		{"clear not a boolean", `view, Open, https://x/, clear=maybe`},
		{"unclosed quote", `view, "Open, https://x/`},
		{"text after a quote", `view, "Open" now, https://x/`},
		{"broken JSON", `[{"action":"view",`},
		{"JSON of the wrong shape", `[1,2]`},
		{"not UTF-8", "view, \xff, https://x/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseActions(tt.in)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Code != CodeActionsInvalid || pe.Status() != 400 {
				t.Fatalf("ParseActions(%q) = %+v, %v; want a 40018 ParamError", tt.in, got, err)
			}
			if pe.Msg == "" {
				t.Fatal("the error says nothing")
			}
		})
	}
}
