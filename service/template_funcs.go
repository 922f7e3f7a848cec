package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"text/template"
)

// errBudget is a render whose calls read and made more than
// MaxTemplateBytes.
var errBudget = fmt.Errorf("its functions read and make more than %d KiB in all", MaxTemplateBytes>>10)

// renderBudget is what one render may still spend, over all its fields:
// bytes read and made, loop iterations, and time (its context, checked
// before any work). Its functions replace text/template's builtins that
// make text (print, println, printf, js, html, urlquery) and wrap every
// helper, so that a template cannot grow a value by assigning it to
// itself or burn CPU on a large body after its answer. The others (and,
// or, not, the comparisons, len, index, slice) return one of their
// arguments, a part of one that shares its memory, a number or a boolean.
// A render runs on one goroutine, so the budget needs no lock.
type renderBudget struct {
	ctx        context.Context
	bytes      int // still allowed
	iterations int
	out        *cappedWriter // the field being written
}

func newRenderBudget(ctx context.Context) *renderBudget {
	return &renderBudget{ctx: ctx, bytes: MaxTemplateBytes}
}

// spend checks the deadline, then takes n bytes.
func (b *renderBudget) spend(n int) error {
	if err := b.ctx.Err(); err != nil {
		return err
	}
	if n > b.bytes {
		b.bytes = 0
		return errBudget
	}
	b.bytes -= n
	return nil
}

// settle turns a charge made before the work (an estimate or a bound)
// into what the work made: it gives back the rest or takes the excess.
func (b *renderBudget) settle(charged, made int) error {
	if made <= charged {
		b.bytes += charged - made
		return nil
	}
	return b.spend(made - charged)
}

// funcs are the functions a render calls, bound to this budget.
func (b *renderBudget) funcs() template.FuncMap {
	return template.FuncMap{
		"print":    func(args ...any) (string, error) { return b.sprint(args, false) },
		"println":  func(args ...any) (string, error) { return b.sprint(args, true) },
		"printf":   b.printf,
		"js":       b.escaper(6, template.JSEscapeString), // \u003C for <
		"html":     b.escaper(5, template.HTMLEscapeString),
		"urlquery": b.escaper(3, url.QueryEscape),
		"default":  b.defaultTo,
		"upper":    b.mapText(strings.ToUpper),
		"lower":    b.mapText(strings.ToLower),
		"trim":     b.mapText(strings.TrimSpace),
		"truncate": b.truncate,
		"join":     b.join,
		"json":     b.toJSON,
		"contains": func(sub, s any) (bool, error) {
			t, err := b.texts(sub, s)
			return err == nil && strings.Contains(t[1], t[0]), err
		},
		"hasPrefix": func(p, s any) (bool, error) {
			t, err := b.texts(p, s)
			return err == nil && strings.HasPrefix(t[1], t[0]), err
		},
		"_tick":  b.tick,
		"_out":   b.room,
		"_range": b.rangeOver,
	}
}

// parseFuncs name every function for parsing. A render replaces them all
// with its own; these never run, and would fail at once if they did.
var parseFuncs = func() template.FuncMap {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return newRenderBudget(ctx).funcs()
}()

// sprint is print (fmt.Sprint) or println, charged for reading its
// arguments and for the text, before making it.
func (b *renderBudget) sprint(args []any, line bool) (string, error) {
	n := textSize(args, line, b.bytes)
	if err := b.spend(2 * n); err != nil {
		return "", err
	}
	format := fmt.Sprint
	if line {
		format = fmt.Sprintln
	}
	s := format(args...)
	return s, b.settle(2*n, n+len(s))
}

// text is v as the helpers see it: a string as it is, charged for reading
// it, anything else as fmt.Sprint prints it.
func (b *renderBudget) text(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, b.spend(len(s))
	}
	return b.sprint([]any{v}, false)
}

func (b *renderBudget) texts(a, c any) ([2]string, error) {
	s, err := b.text(a)
	if err != nil {
		return [2]string{}, err
	}
	t, err := b.text(c)
	return [2]string{s, t}, err
}

// argsText is the text js, html and urlquery escape: their one string
// argument, or the arguments printed, a missing value as "<no value>".
func (b *renderBudget) argsText(args []any) (string, error) {
	if len(args) == 1 {
		if s, ok := args[0].(string); ok {
			return s, b.spend(len(s))
		}
	}
	for i, a := range args {
		if a == nil {
			args[i] = "<no value>"
		}
	}
	return b.sprint(args, false)
}

// escaper is js, html or urlquery: escape makes at most grow bytes of
// each byte it is given, and is charged that much before it runs.
func (b *renderBudget) escaper(grow int, escape func(string) string) func(...any) (string, error) {
	return func(args ...any) (string, error) {
		s, err := b.argsText(args)
		if err != nil {
			return "", err
		}
		bound := grow * len(s)
		if err := b.spend(bound); err != nil {
			return "", err
		}
		out := escape(s)
		return out, b.settle(bound, len(out))
	}
}

// printf is fmt.Sprintf with widths and precisions of at most 3 digits,
// charged for its arguments and for a bound of its text before making it.
func (b *renderBudget) printf(format string, args ...any) (string, error) {
	if bigWidth(format) {
		return "", errors.New("printf: widths and precisions are limited to 3 digits, and * is not allowed")
	}
	read := textSize(args, false, b.bytes)
	if err := b.spend(read); err != nil {
		return "", err
	}
	bound := printfSize(format, args, b.bytes)
	if err := b.spend(bound); err != nil {
		return "", err
	}
	s := fmt.Sprintf(format, args...)
	return s, b.settle(bound, len(s))
}

func (b *renderBudget) defaultTo(def, v any) (any, error) {
	return cond(isEmpty(v), def, v), b.spend(0)
}

// mapText is upper, lower or trim, charged for the text it makes (which
// f may grow by half: ToUpper("ɐ") is three bytes).
func (b *renderBudget) mapText(f func(string) string) func(any) (string, error) {
	return func(v any) (string, error) {
		s, err := b.text(v)
		if err != nil {
			return "", err
		}
		bound := len(s) + len(s)/2
		if err := b.spend(bound); err != nil {
			return "", err
		}
		out := f(s)
		return out, b.settle(bound, len(out))
	}
}

// truncate reads a string only as far as it keeps it (Clip).
func (b *renderBudget) truncate(n int, v any) (string, error) {
	n = max(n, 1)
	s, ok := v.(string)
	if !ok {
		var err error
		if s, err = b.text(v); err != nil {
			return "", err
		}
	}
	bound := min(len(s), 4*n) + len("…")
	if err := b.spend(bound); err != nil {
		return "", err
	}
	out := Clip(s, n)
	return out, b.settle(bound, len(out))
}

func (b *renderBudget) join(sep string, list any) (string, error) {
	l, ok := list.([]any)
	if !ok {
		return "", fmt.Errorf("join: want a list, got %T", list)
	}
	n := len(sep) * max(len(l)-1, 0)
	if err := b.spend(n + 16*len(l)); err != nil { // the parts' headers
		return "", err
	}
	parts := make([]string, len(l))
	for i, v := range l {
		s, err := b.text(v)
		if err != nil {
			return "", err
		}
		parts[i], n = s, n+len(s)
	}
	if err := b.spend(n); err != nil {
		return "", err
	}
	return strings.Join(parts, sep), nil
}

// toJSON is charged for reading v and for its encoding, measured exactly
// before it is made.
func (b *renderBudget) toJSON(v any) (string, error) {
	s := sizer{limit: b.bytes}
	if s.json(v); s.over() {
		return "", errBudget
	}
	if err := b.spend(2 * s.n); err != nil {
		return "", err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(out), b.settle(2*s.n, s.n+len(out))
}
