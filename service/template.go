package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/template"
	"text/template/parse"
	"time"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/transform"
)

// Bounds of a channel template. A template runs on input a stranger may
// send, so it must stop however it is written: every range body counts
// iterations against a budget and checks a deadline, each field's output is
// capped, and no helper can make more than its input.
const (
	MaxTemplateField      = 8 << 10  // characters of one field's source
	MaxTemplateOutput     = 64 << 10 // bytes one field may produce
	MaxTemplateIterations = 100_000  // range iterations over all fields
	TemplateTimeout       = 250 * time.Millisecond
)

// templateFuncs are the helpers besides text/template's own. printf is
// replaced by one that refuses large widths (fmt pads "%999999999d" in
// memory); the rest never produce more than they are given.
var templateFuncs = template.FuncMap{
	"printf":    safePrintf,
	"default":   func(def, v any) any { return cond(isEmpty(v), def, v) },
	"upper":     func(s any) string { return strings.ToUpper(fmt.Sprint(s)) },
	"lower":     func(s any) string { return strings.ToLower(fmt.Sprint(s)) },
	"trim":      func(s any) string { return strings.TrimSpace(fmt.Sprint(s)) },
	"truncate":  truncate,
	"join":      join,
	"json":      toJSON,
	"contains":  func(sub, s any) bool { return strings.Contains(fmt.Sprint(s), fmt.Sprint(sub)) },
	"hasPrefix": func(p, s any) bool { return strings.HasPrefix(fmt.Sprint(s), fmt.Sprint(p)) },
	"_tick":     func() string { return "" }, // replaced per run; here for parsing
}

func safePrintf(format string, args ...any) (string, error) {
	if bigWidth(format) {
		return "", errors.New("printf: widths and precisions are limited to 3 digits, and * is not allowed")
	}
	return fmt.Sprintf(format, args...), nil
}

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

func truncate(n int, s any) string { return Clip(fmt.Sprint(s), max(n, 1)) }

func join(sep string, list any) (string, error) {
	l, ok := list.([]any)
	if !ok {
		return "", fmt.Errorf("join: want a list, got %T", list)
	}
	parts := make([]string, len(l))
	for i, v := range l {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, sep), nil
}

func toJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
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

func parseField(name, src string) (*template.Template, error) {
	if n := len([]rune(src)); n > MaxTemplateField {
		return nil, invalid("template.%s is %d characters; the limit is %d", name, n, MaxTemplateField)
	}
	tm, err := template.New(name).Funcs(templateFuncs).Option("missingkey=zero").Parse(src)
	if err != nil {
		return nil, invalid("template.%s does not parse: %s", name, strings.TrimPrefix(err.Error(), "template: "))
	}
	if len(tm.Templates()) > 1 {
		return nil, invalid("template.%s: define and block are not allowed", name)
	}
	if tm.Tree == nil {
		return tm, nil
	}
	tick := tickNode()
	var walkErr error
	walk(tm.Tree.Root, func(n parse.Node) {
		switch n := n.(type) {
		case *parse.TemplateNode:
			walkErr = invalid("template.%s: {{template}} is not allowed", name)
		case *parse.RangeNode:
			// Every iteration first calls _tick, which enforces the budget
			// and the deadline even in a loop that writes nothing.
			n.List.Nodes = append([]parse.Node{tick}, n.List.Nodes...)
		}
	})
	return tm, walkErr
}

func tickNode() parse.Node {
	t := template.Must(template.New("tick").Funcs(templateFuncs).Parse("{{_tick}}"))
	return t.Tree.Root.Nodes[0]
}

// walk calls f on every node under n, lists before their nodes change.
func walk(n parse.Node, f func(parse.Node)) {
	if n == nil {
		return
	}
	f(n)
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walk(c, f)
		}
	case *parse.IfNode:
		walk(n.List, f)
		walk(n.ElseList, f)
	case *parse.RangeNode:
		walk(n.List, f)
		walk(n.ElseList, f)
	case *parse.WithNode:
		walk(n.List, f)
		walk(n.ElseList, f)
	}
}

// errOutput is a field that produced more than MaxTemplateOutput.
var errOutput = fmt.Errorf("produces more than %d KiB", MaxTemplateOutput>>10)

// cappedWriter stops a template that writes too much or runs too long.
type cappedWriter struct {
	ctx context.Context
	buf bytes.Buffer
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if err := w.ctx.Err(); err != nil {
		return 0, err
	}
	if w.buf.Len()+len(p) > MaxTemplateOutput {
		return 0, errOutput
	}
	return w.buf.Write(p)
}

// RenderTemplate runs a channel's template over a JSON body and returns the
// message it makes. Any failure is an Invalid *Error naming the field and
// the problem.
func RenderTemplate(ctx context.Context, t *store.Template, body []byte) (*transform.Message, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // ids and counts print as sent, not as 1e+06
	var data any
	if err := dec.Decode(&data); err != nil {
		return nil, invalid("the body is not JSON: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, TemplateTimeout)
	defer cancel()
	iterations := 0
	tick := func() (string, error) {
		iterations++
		if iterations > MaxTemplateIterations {
			return "", fmt.Errorf("more than %d loop iterations", MaxTemplateIterations)
		}
		return "", ctx.Err()
	}
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
		tm.Funcs(template.FuncMap{"_tick": tick})
		s, err := execute(ctx, tm, data)
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

// execute runs tm in a goroutine and gives up at ctx's deadline. The
// goroutine then stops at its next write or loop iteration, since both
// check ctx.
func execute(ctx context.Context, tm *template.Template, data any) (string, error) {
	w := &cappedWriter{ctx: ctx}
	done := make(chan error, 1)
	go func() { done <- tm.Execute(w, data) }()
	select {
	case err := <-done:
		return w.buf.String(), err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func describeExec(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("it ran longer than %s", TemplateTimeout)
	case errors.Is(err, errOutput):
		return errOutput.Error()
	}
	return strings.TrimPrefix(err.Error(), "template: ")
}
