package service

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
)

func TestRenderTemplate(t *testing.T) {
	tm := &store.Template{
		Title:    `{{.repo | upper}}: {{.status}}`,
		Body:     `{{range .items}}- {{.name}}{{"\n"}}{{end}}{{join ", " .tags}} {{default "none" .missing}} {{.id}}`,
		Priority: `{{if eq .status "failed"}}high{{else}}low{{end}}`,
		URL:      `https://ci.example.com/{{.id}}`,
	}
	if err := CheckTemplate(tm); err != nil {
		t.Fatal(err)
	}
	m, err := RenderTemplate(context.Background(), tm,
		[]byte(`{"repo":"web","status":"failed","items":[{"name":"a"},{"name":"b"}],"tags":["x","y"],"id":12345678901234}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Title != "WEB: failed" || m.Body != "- a\n- b\nx, y none 12345678901234" || m.Priority != "high" || m.URL != "https://ci.example.com/12345678901234" {
		t.Fatalf("got %+v", m)
	}
}

// TestTemplateBounds: whatever a template does, it stops with an error
// that names the field and the problem.
func TestTemplateBounds(t *testing.T) {
	big := `{"a":[` + strings.Repeat(`1,`, 999) + `1]}`
	cases := []struct {
		name, title, body, input, want string
	}{
		{"huge literal range", "x", `{{range 1000000000}}{{end}}`, `{}`, "template.body failed: "},
		{"nested ranges", "x", `{{range .a}}{{range $.a}}{{range $.a}}{{end}}{{end}}{{end}}`, big, "template.body failed: "},
		{"megabytes", "x", `{{range .a}}` + strings.Repeat("0123456789", 100) + `{{end}}`, big, "template.body failed: produces more than 64 KiB"},
		{"printf width", "x", `{{printf "%999999999d" 1}}`, `{}`, "widths and precisions are limited"},
		{"printf precision", "x", `{{printf "%.99999f" 1.5}}`, `{}`, "widths and precisions are limited"},
		{"printf star", "x", `{{printf "%[1]*d" 100000000 1}}`, `{}`, "widths and precisions are limited"},
		{"bad priority", "x", `y`, `{}`, ""},
		{"missing field in function", `{{join "," .nope}}`, "b", `{}`, "template.title failed"},
		{"not JSON", "x", "y", `nope`, "the body is not JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tm := &store.Template{Title: c.title, Body: c.body}
			if c.name == "bad priority" {
				tm.Priority, c.want = "urgent", `template.priority gave "urgent"`
			}
			start := time.Now()
			_, err := RenderTemplate(context.Background(), tm, []byte(c.input))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			// A loop stops at the iteration budget or, on a slow machine
			// (the race detector), at the deadline: either names itself.
			if strings.HasSuffix(c.want, "failed: ") && !strings.Contains(err.Error(), "loop iterations") && !strings.Contains(err.Error(), "ran longer than") {
				t.Fatalf("err = %v, want the loop budget or the deadline", err)
			}
			if e, ok := err.(*Error); !ok || e.Kind != Invalid {
				t.Fatalf("err = %#v, want an Invalid *Error", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("took %s", d)
			}
		})
	}
}

func TestSafePrintf(t *testing.T) {
	for format, big := range map[string]bool{
		"version 1.2345 %d": false, "%5.2f": false, "%999d": false, "%%1000d": false,
		"%1000d": true, "%.1000f": true, "%-01000s": true, "%*d": true, "%[2]*[1]d": true,
		// Any letter ends a directive, the first and last of each case
		// included: digits after it are text, not a width.
		"%a1234": false, "%z1234": false, "%A1234": false, "%Z1234": false, "%v1234": false,
		"%[1234": true, "%{1234": true, "%@1234": true,
	} {
		if got := bigWidth(format); got != big {
			t.Errorf("bigWidth(%q) = %v, want %v", format, got, big)
		}
	}
}

func TestCheckTemplate(t *testing.T) {
	for _, c := range []struct {
		tm   store.Template
		want string
	}{
		{store.Template{Title: "", Body: "b"}, "template.title and template.body are required"},
		{store.Template{Title: "{{.x", Body: "b"}, "template.title does not parse"},
		{store.Template{Title: "t", Body: `{{define "x"}}y{{end}}`}, "define and block are not allowed"},
		{store.Template{Title: "t", Body: `{{template "x"}}`}, "{{template}} is not allowed"},
		{store.Template{Title: "t", Body: "b", URL: "{{nosuchfunc}}"}, "template.url does not parse"},
		{store.Template{Title: strings.Repeat("x", MaxTemplateField+1), Body: "b"}, "the limit is 8192"},
		{store.Template{Title: "t", Body: `{{call .f 1}}`}, "template.body: call is not allowed"},
		{store.Template{Title: "t", Body: `{{if true}}{{_tick}}{{end}}`}, "template.body: _tick is not allowed"},
		{store.Template{Title: "t", Body: `{{.n.Float64}}`}, "template.body: .Float64 is not allowed"},
		{store.Template{Title: "t", Body: `{{range .l}}{{printf "%v" (.).Int64}}{{end}}`}, "template.body: .Int64 is not allowed"},
		{store.Template{Title: "t", Body: `{{with $n := .n}}{{$n.Float64}}{{end}}`}, "template.body: .Float64 is not allowed"},
	} {
		if err := CheckTemplate(&c.tm); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.tm, err, c.want)
		}
	}
}

// TestTemplateDocExamples runs the three worked examples of
// docs/integrations.md as they are written there.
func TestTemplateDocExamples(t *testing.T) {
	cases := []struct {
		name  string
		tm    store.Template
		input string
		want  [4]string // title, body, priority, url
	}{
		{"backup", store.Template{
			Title:    `Backup {{.job}} {{if .ok}}done{{else}}FAILED{{end}}`,
			Body:     "{{.files}} files, {{.bytes}} bytes{{range .warnings}}\n- {{.}}{{end}}",
			Priority: `{{if not .ok}}high{{end}}`,
			URL:      `{{.log_url}}`,
		}, `{"job":"nas","ok":false,"files":1200,"bytes":734003200,"warnings":["disk 2 slow"],"log_url":"https://backup.lan/log/7"}`,
			[4]string{"Backup nas FAILED", "1200 files, 734003200 bytes\n- disk 2 slow", "high", "https://backup.lan/log/7"}},
		{"sensor", store.Template{
			Title:    `{{.sensor.name}} at {{.value}}{{.unit}}`,
			Body:     `{{.sensor.name | upper}} in the {{default "house" .sensor.room}} is above its limit of {{.limit}}{{.unit}}.`,
			Priority: "high",
		}, `{"sensor":{"name":"Freezer","room":"garage"},"value":-4.5,"limit":-12,"unit":"°C"}`,
			[4]string{"Freezer at -4.5°C", "FREEZER in the garage is above its limit of -12°C.", "high", ""}},
		{"ci", store.Template{
			Title:    `{{.project}}: {{len .failed}} test(s) failed`,
			Body:     "{{range $i, $t := .failed}}{{if lt $i 5}}- `{{$t.name}}`: {{truncate 60 $t.error}}\n{{end}}{{end}}{{if gt (len .failed) 5}}… and more{{end}}",
			Priority: `{{if .main}}high{{else}}normal{{end}}`,
			URL:      `{{.run_url}}`,
		}, `{"project":"web","main":true,"run_url":"https://ci.lan/run/42","failed":[{"name":"TestLogin","error":"timeout after 30s"}]}`,
			[4]string{"web: 1 test(s) failed", "- `TestLogin`: timeout after 30s", "high", "https://ci.lan/run/42"}},
		{"missing field", store.Template{Title: `x {{.nope}}`, Body: `{{default "none" .nope}}`}, `{}`,
			[4]string{"x <no value>", "none", "normal", ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := CheckTemplate(&c.tm); err != nil {
				t.Fatal(err)
			}
			m, err := RenderTemplate(context.Background(), &c.tm, []byte(c.input))
			if err != nil {
				t.Fatal(err)
			}
			if got := [4]string{m.Title, m.Body, m.Priority, m.URL}; got != c.want {
				t.Fatalf("got %q\nwant %q", got, c.want)
			}
		})
	}
}
