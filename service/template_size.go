package service

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// sizer measures what a value prints (or encodes) as without making it,
// so that a template function is charged before it formats anything. It
// stops once the count passes limit: the walk itself then costs no more
// than the budget it is checked against.
type sizer struct {
	n     int // bytes so far
	nodes int // values and keys counted, each of which a width pads
	limit int
}

func (s *sizer) over() bool { return s.n > s.limit }

// text adds len(fmt.Sprint(v)), exactly for the values a JSON body
// decodes to.
func (s *sizer) text(v any) {
	if s.over() {
		return
	}
	s.nodes++
	switch v := v.(type) {
	case nil:
		s.n += len("<nil>")
	case string:
		s.n += len(v)
	case json.Number:
		s.n += len(v)
	case bool:
		s.n += len(strconv.FormatBool(v))
	case []any:
		s.n += len("[]") + max(len(v)-1, 0) // brackets, spaces between
		for _, e := range v {
			if s.text(e); s.over() {
				return
			}
		}
	case map[string]any:
		s.n += len("map[]") + max(len(v)-1, 0) + len(v) // spaces between, a colon a key
		for k, e := range v {
			s.n += len(k)
			s.nodes++
			if s.text(e); s.over() {
				return
			}
		}
	default: // a number or byte a template wrote or a function returned
		s.n += len(fmt.Sprint(v))
	}
}

// json adds len(json.Marshal(v)), exactly for the values a JSON body
// decodes to.
func (s *sizer) json(v any) {
	if s.over() {
		return
	}
	switch v := v.(type) {
	case nil:
		s.n += len("null")
	case string:
		s.n += jsonStringSize(v)
	case json.Number:
		s.n += max(len(v), 1) // "" encodes as 0
	case []any:
		if v == nil {
			s.n += len("null")
			return
		}
		s.n += len("[]") + max(len(v)-1, 0)
		for _, e := range v {
			if s.json(e); s.over() {
				return
			}
		}
	case map[string]any:
		if v == nil {
			s.n += len("null")
			return
		}
		s.n += len("{}") + max(len(v)-1, 0) + len(v) // commas, a colon a key
		for k, e := range v {
			s.n += jsonStringSize(k)
			if s.json(e); s.over() {
				return
			}
		}
	default: // a scalar: cheap to encode and measure
		b, _ := json.Marshal(v)
		s.n += len(b)
	}
}

// jsonStringSize is the length of s quoted by encoding/json, which
// escapes HTML characters and U+2028/U+2029 too.
func jsonStringSize(s string) int {
	n := len(`""`)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\\' || c == '"' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += len(`\u0000`)
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += len(`\ufffd`)
		default:
			n += size
		}
		i += size
	}
	return n
}

// textSize is len(fmt.Sprint(args...)) (or Sprintln's), or more than
// limit. fmt puts a space between two operands when neither is a string.
func textSize(args []any, line bool, limit int) int {
	s := sizer{limit: limit}
	for i, a := range args {
		if i > 0 && (line || !isString(a) && !isString(args[i-1])) {
			s.n++
		}
		s.text(a)
	}
	if line {
		s.n++
	}
	return s.n
}

func isString(v any) bool { return v != nil && reflect.TypeOf(v).Kind() == reflect.String }

// Per-directive allowances of printfSize: a verb other than %v may print
// each value with its type (%!d(json.Number=5)) or quoted, and a scalar
// may print long (%f of 1e300).
const (
	verbPerValue = 40
	verbScalar   = 512
)

// printfSize bounds len(fmt.Sprintf(format, args...)) from the sizes of the
// arguments, or is more than limit. Each directive prints one argument (any
// of them when the format numbers its arguments): %v as Sprint does, %q, %x
// and %X up to 4 times larger, # up to 8 times, any other verb with a type
// name a value; a width or precision pads every value. Widths above 999
// and * are refused before (bigWidth).
func printfSize(format string, args []any, limit int) int {
	sizes := make([]sizer, len(args))
	var most sizer
	total := len(format) + len("%!(EXTRA )")
	for i, a := range args {
		sizes[i].limit = limit
		if sizes[i].text(a); sizes[i].over() {
			return limit + 1
		}
		most.n, most.nodes = max(most.n, sizes[i].n), max(most.nodes, sizes[i].nodes)
		total += sizes[i].n + verbPerValue // what %!(EXTRA ...) would add
	}
	numbered := strings.Contains(format, "[")
	next := 0
	for i := 0; i < len(format); {
		if format[i] != '%' {
			i++
			continue
		}
		sharp, pad := false, 0
		for i++; i < len(format) && strings.IndexByte("#0+- ", format[i]) >= 0; i++ {
			sharp = sharp || format[i] == '#'
		}
		num := 0 // every number of the directive counts, whatever it is
		for ; i < len(format) && strings.IndexByte("0123456789.[]", format[i]) >= 0; i++ {
			if c := format[i]; c >= '0' && c <= '9' {
				num = num*10 + int(c-'0')
			} else {
				pad, num = pad+num, 0
			}
		}
		pad += num
		verb, size := utf8.DecodeRuneInString(format[i:])
		i += size
		if verb == '%' {
			continue
		}
		arg := sizer{nodes: 1}
		switch {
		case numbered:
			arg = most
		case next < len(args):
			arg = sizes[next]
			next++
		}
		factor, perValue := 1, 0
		switch {
		case sharp:
			factor, perValue = 8, verbPerValue
		case verb == 'q' || verb == 'x' || verb == 'X':
			factor, perValue = 4, verbPerValue
		case verb != 'v':
			perValue = verbPerValue
		}
		if total += factor*arg.n + (pad+perValue)*arg.nodes + verbScalar; total > limit {
			return limit + 1
		}
	}
	return total
}
