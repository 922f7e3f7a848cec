package ntfy

import (
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"testing"
	"time"
)

var testNow = time.Date(2026, 3, 10, 14, 0, 0, 0, time.UTC)

// req builds a Request from header pairs and a raw query.
func req(t *testing.T, query string, headers ...string) Request {
	t.Helper()
	h := http.Header{}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Add(headers[i], headers[i+1])
	}
	r := Request{Header: h}
	if query != "" {
		q, err := url.ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		r.Query = q
	}
	return r
}

func TestReadPublish(t *testing.T) {
	in30m := testNow.Add(30 * time.Minute)
	tests := []struct {
		name    string
		query   string
		headers []string
		want    Publish
	}{
		{"nothing", "", nil, Publish{}},
		{"canonical headers", "", []string{"X-Title", "Backup", "X-Message", "done", "X-Priority", "5", "X-Tags", "warning, skull ,,cd",
			"X-Click", "https://x.example/", "X-Icon", "https://x.example/i.png", "X-Attach", "https://x.example/a.jpg"},
			Publish{Title: "Backup", Message: "done", Priority: 5, Tags: []string{"warning", "skull", "cd"},
				Click: "https://x.example/", Icon: "https://x.example/i.png", Attach: "https://x.example/a.jpg"}},
		{"aliases as headers, any case", "", []string{"title", "T1", "prio", "high", "ta", "a,b", "md", "YES"},
			Publish{Title: "T1", Priority: 4, Tags: []string{"a", "b"}, Markdown: true}},
		{"one-letter header aliases", "", []string{"t", "Hi", "m", "body", "p", "min"},
			Publish{Title: "Hi", Message: "body", Priority: 1}},
		{"the first header alias with a value wins", "", []string{"X-Title", " ", "Title", "second", "T", "third"},
			Publish{Title: "second"}},
		{"headers before the query", "title=fromquery&priority=2", []string{"Title", "fromheader"},
			Publish{Title: "fromheader", Priority: 2}},
		{"lower-case query names", "t=Hi&m=a%5Cnb&p=urgent&ta=x&click=https%3A%2F%2Fc%2F&md=1&sid=seq-1",
			nil, Publish{Title: "Hi", Message: "a\nb", Priority: 5, Tags: []string{"x"}, Click: "https://c/", Markdown: true, SequenceID: "seq-1"}},
		{"query names are not case-folded", "Title=x", nil, Publish{}},
		{"RFC 2047 base64 title", "", []string{"Title", "=?UTF-8?B?8J+agCBEZXBsb3llZA==?="}, Publish{Title: "🚀 Deployed"}},
		{"RFC 2047 quoted-printable", "", []string{"X-Message", "=?utf-8?q?Caf=C3=A9_ouvert?="}, Publish{Message: "Café ouvert"}},
		{"a broken encoded word is taken as is", "", []string{"Title", "=?UTF-8?B?@@@?="}, Publish{Title: "=?UTF-8?B?@@@?="}},
		{"RFC 9218 priority header is not ntfy's", "", []string{"Priority", "u=3, i"}, Publish{}},
		{"RFC 9218 priority falls through to the query", "p=high", []string{"Priority", "u=1"}, Publish{Priority: 4}},
		{"cache and firebase no", "", []string{"Cache", "no", "Firebase", "0"}, Publish{NoCache: true, NoFirebase: true}},
		{"cache yes", "cache=yes&firebase=true", nil, Publish{}},
		{"markdown by content type", "", []string{"Content-Type", "text/markdown; charset=utf-8"}, Publish{Markdown: true}},
		{"markdown false", "markdown=false", nil, Publish{}},
		{"delay as duration", "", []string{"X-Delay", "30m"}, Publish{Delay: &in30m}},
		{"in alias", "in=30min", nil, Publish{Delay: &in30m}},
		{"sequence id header", "", []string{"X-Sequence-ID", "backup-1"}, Publish{SequenceID: "backup-1"}},
		{"actions", "", []string{"Actions", "view, Open, https://x/"},
			Publish{Actions: []Action{{Action: "view", Label: "Open", URL: "https://x/"}}}},
		{"filename", "filename=a.txt", nil, Publish{Filename: "a.txt"}},
		{"unknown parameters ignored", "foo=bar&up=0&poll-id=", []string{"X-Unknown", "1"}, Publish{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadPublish(req(t, tt.query, tt.headers...), testNow)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Fatalf("\n got %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

func TestReadPublishRefuses(t *testing.T) {
	tests := []struct {
		name    string
		query   string
		headers []string
		code    int
	}{
		{"email", "", []string{"X-Email", "a@b.example"}, CodeEmailDisabled},
		{"e-mail alias in query", "e=a@b.example", nil, CodeEmailDisabled},
		{"call", "", []string{"Call", "yes"}, CodeCallsDisabled},
		{"template", "tpl=yes", nil, CodeTemplateDisallowed},
		{"priority", "", []string{"X-Priority", "6"}, CodePriorityInvalid},
		{"priority word", "priority=loud", nil, CodePriorityInvalid},
		{"attach not http", "", []string{"Attach", "ftp://x/a.jpg"}, CodeAttachURLInvalid},
		{"icon not http", "icon=javascript:alert(1)", nil, CodeIconURLInvalid},
		{"delay with cache=no", "", []string{"Delay", "1h", "Cache", "no"}, CodeDelayNoCache},
		{"delay not understood", "delay=next+monday", nil, CodeDelayCannotParse},
		{"delay in the past", "at=1000", nil, CodeDelayTooSmall},
		{"actions", "", []string{"Actions", "dance, Go"}, CodeActionsInvalid},
		{"sequence id alphabet", "sid=a/b", nil, CodeBadRequest},
		{"title not UTF-8", "", []string{"Title", "\xff\xfe"}, CodeMessageNotUTF8},
		{"NUL in a message", "m=a%00b", nil, CodeMessageNotUTF8},
		{"NUL in a tag", "tags=a%00", nil, CodeMessageNotUTF8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadPublish(req(t, tt.query, tt.headers...), testNow)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Code != tt.code {
				t.Fatalf("got %+v, %v; want a ParamError %d", got, err, tt.code)
			}
		})
	}
}

func TestParsePriority(t *testing.T) {
	for in, want := range map[string]int{"": 0, "1": 1, "min": 1, "MIN": 1, "2": 2, "low": 2, "3": 3, "default": 3,
		"4": 4, "High": 4, " 5 ": 5, "max": 5, "urgent": 5} {
		if got, err := ParsePriority(in); err != nil || got != want {
			t.Errorf("ParsePriority(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "6", "-1", "normal", "3.0"} {
		if _, err := ParsePriority(in); err == nil {
			t.Errorf("ParsePriority(%q) accepted", in)
		}
	}
}

func TestLevel(t *testing.T) {
	for p, want := range map[int]string{0: "normal", 1: "low", 2: "low", 3: "normal", 4: "high", 5: "high"} {
		if got := Level(p); got != want {
			t.Errorf("Level(%d) = %q, want %q", p, got, want)
		}
	}
}

func TestFromGotify(t *testing.T) {
	for p, want := range map[int]int{-2: 1, 0: 1, 1: 2, 3: 2, 4: 3, 7: 3, 8: 4, 9: 4, 10: 5, 15: 5} {
		if got := FromGotify(p); got != want {
			t.Errorf("FromGotify(%d) = %d, want %d", p, got, want)
		}
	}
}

func TestParseBool(t *testing.T) {
	for in, want := range map[string][2]bool{"1": {true, true}, "yes": {true, true}, "TRUE": {true, true},
		"0": {false, true}, "no": {false, true}, "False": {false, true}, "maybe": {false, false}, "": {false, false}} {
		if v, ok := ParseBool(in); v != want[0] || ok != want[1] {
			t.Errorf("ParseBool(%q) = %v, %v; want %v", in, v, ok, want)
		}
	}
}

func TestValidID(t *testing.T) {
	for in, want := range map[string]bool{"a": true, "Ab-9_z": true, "": false, "a b": false, "a/b": false, "é": false,
		string(make([]byte, 65)): false, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": true} {
		if got := ValidID(in); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", in, got, want)
		}
	}
}
