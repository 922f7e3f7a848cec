package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/template"
	"time"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/transform"
)

// Bounds of a channel template. A template runs on input a stranger may
// send, so it must stop however it is written: every range body counts
// iterations against a budget, every function is charged for the bytes it
// reads and makes against another, both check a deadline, and each field's
// output is capped.
const (
	MaxTemplateField      = 8 << 10  // characters of one field's source
	MaxTemplateOutput     = 64 << 10 // bytes one field may produce
	MaxTemplateIterations = 100_000  // range iterations over all fields
	MaxTemplateBytes      = 1 << 20  // bytes read and made by functions and output, over all fields
	TemplateTimeout       = 250 * time.Millisecond
)

// bigWidth reports whether a verb of format asks for a width or precision
// of four digits or more, or takes one from an argument (*).
func bigWidth(format string) bool {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		digits := 0
		for i++; i < len(format); i++ {
			c := format[i]
			if c == '%' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				break // the verb ends the directive
			}
			switch {
			case c == '*':
				return true
			case c >= '0' && c <= '9':
				if digits++; digits > 3 {
					return true
				}
			default:
				digits = 0
			}
		}
	}
	return false
}

func cond(c bool, a, b any) any {
	if c {
		return a
	}
	return b
}

func isEmpty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case json.Number:
		return v == "" || v == "0"
	case bool:
		return !v
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// templateFields names a template's fields in the order they run.
var templateFields = []string{"title", "body", "priority", "url"}

func fieldsOf(t *store.Template) []string { return []string{t.Title, t.Body, t.Priority, t.URL} }

// CheckTemplate validates a template as it is saved: a title and a body,
// each field within MaxTemplateField and parsing, with no define, template
// or block actions.
func CheckTemplate(t *store.Template) error {
	if strings.TrimSpace(t.Title) == "" || strings.TrimSpace(t.Body) == "" {
		return invalid("template.title and template.body are required")
	}
	for i, src := range fieldsOf(t) {
		if _, err := parseField(templateFields[i], src); err != nil {
			return err
		}
	}
	return nil
}

// errOutput is a field that produced more than MaxTemplateOutput.
var errOutput = fmt.Errorf("produces more than %d KiB", MaxTemplateOutput>>10)

// cappedWriter is a field's output: it stops a template that writes too
// much or runs too long, and charges what is written to the render's
// budget.
type cappedWriter struct {
	budget *renderBudget
	buf    bytes.Buffer
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > MaxTemplateOutput {
		return 0, errOutput
	}
	if err := w.budget.spend(len(p)); err != nil {
		return 0, err
	}
	return w.buf.Write(p)
}

// renderTimeout is TemplateTimeout; a test of the byte budget alone, which
// must not fail on a slow machine, lengthens it.
var renderTimeout = TemplateTimeout

// RenderTemplate runs a channel's template over a JSON body and returns the
// message it makes. Any failure is an Invalid *Error naming the field and
// the problem. Its fields share one renderBudget and one deadline, and run
// on the caller's goroutine: once it returns, nothing of it runs on.
func RenderTemplate(ctx context.Context, t *store.Template, body []byte) (*transform.Message, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // ids and counts print as sent, not as 1e+06
	var data any
	if err := dec.Decode(&data); err != nil {
		return nil, invalid("the body is not JSON: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, renderTimeout)
	defer cancel()
	budget := newRenderBudget(ctx)
	funcs := budget.funcs()
	out := make([]string, len(templateFields))
	for i, src := range fieldsOf(t) {
		name := templateFields[i]
		if src == "" {
			continue
		}
		tm, err := parseField(name, src)
		if err != nil {
			return nil, err
		}
		s, err := execute(tm.Funcs(funcs), budget, data)
		if err != nil {
			return nil, invalid("template.%s failed: %s", name, describeExec(err))
		}
		out[i] = strings.TrimSpace(s)
	}
	m := &transform.Message{Title: out[0], Body: out[1], Priority: strings.ToLower(out[2]), URL: out[3], URLLabel: "Open"}
	switch m.Priority {
	case "":
		m.Priority = "normal"
	case "low", "normal", "high":
	default:
		return nil, invalid("template.priority gave %q; it must give low, normal or high", Clip(out[2], 40))
	}
	if m.Title == "" {
		return nil, invalid("template.title gave an empty title")
	}
	if m.URL != "" && ValidHTTPURL("url", m.URL) != nil {
		return nil, invalid("template.url gave %q; it must give an absolute http(s) URL", Clip(m.URL, 80))
	}
	return m, nil
}

// execute runs one field on the caller's goroutine. It needs no goroutine
// of its own to honour the deadline: every function, range iteration and
// write checks it first, and none works on more than the budget, so a run
// stops within one such step of the deadline.
func execute(tm *template.Template, budget *renderBudget, data any) (string, error) {
	w := &cappedWriter{budget: budget}
	budget.out = w
	err := tm.Execute(w, data)
	return w.buf.String(), err
}

func describeExec(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("it ran longer than %s", TemplateTimeout)
	}
	for _, bound := range []error{errOutput, errBudget, errIterations} {
		if errors.Is(err, bound) {
			return bound.Error()
		}
	}
	return strings.TrimPrefix(err.Error(), "template: ")
}
