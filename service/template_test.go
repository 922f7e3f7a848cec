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
		{"megabytes", "x", `{{range .a}}{{range $.a}}0123456789{{end}}{{end}}`, big, "template.body failed: produces more than 64 KiB"},
		{"printf width", "x", `{{printf "%999999999d" 1}}`, `{}`, "widths and precisions are limited"},
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
	} {
		if err := CheckTemplate(&c.tm); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.tm, err, c.want)
		}
	}
}
