package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"text/template"
)

// sample is a body with what JSON can carry, and text that every escaper
// changes.
const sample = `{"s":"a <b> & \"c\" 'd' = é\u2028\u0001\ttab ü+x/y?z","n":12345678901234,"f":-4.5,"b":true,"z":null,
	"l":["x",1,null,false,[],{},[""],["a","b"]],"m":{"k":"v","n":2,"e":{},"l":[null,""]},"e":""}`

func decodeSample(t *testing.T) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(sample))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	v["bad"] = "\xff\xfeok" // not UTF-8, as slice can make
	return v
}

// TestTemplateSizes: the sizes a function is charged before it formats
// are those fmt and encoding/json then make, and printfSize is never
// below what Sprintf makes.
func TestTemplateSizes(t *testing.T) {
	data := decodeSample(t)
	values := []any{data, nil, "", 7, uint8(3), 1e300, true}
	for _, v := range data {
		values = append(values, v)
	}
	for _, v := range values {
		s := sizer{limit: 1 << 30}
		if s.text(v); s.n != len(fmt.Sprint(v)) {
			t.Errorf("text size of %#v = %d, want %d", v, s.n, len(fmt.Sprint(v)))
		}
		want, err := json.Marshal(v)
		if err != nil {
			continue
		}
		s = sizer{limit: 1 << 30}
		if s.json(v); s.n != len(want) {
			t.Errorf("json size of %#v = %d, want %d (%s)", v, s.n, len(want), want)
		}
	}
	args := [][]any{{}, {data["s"], data["n"]}, {1, 2}, {"a", 1, "b"}, {data["n"], data["n"]}, {nil, data["l"], 3}}
	for _, a := range args {
		if got, want := textSize(a, false, 1<<30), len(fmt.Sprint(a...)); got != want {
			t.Errorf("textSize(%v) = %d, want %d", a, got, want)
		}
		if got, want := textSize(a, true, 1<<30), len(fmt.Sprintln(a...)); got != want {
			t.Errorf("textSize(%v, line) = %d, want %d", a, got, want)
		}
	}
	formats := []string{"", "plain", "%v", "%s", "%d", "%q", "%+q", "%#q", "%x", "% x", "%# x", "%X", "%#v", "%T",
		"%5v", "%-9s", "%.3s", "%999v", "%.999f", "%999.999e", "%08b", "%U", "%#U", "%c", "%p", "%t", "%!", "%",
		"%[2]v %[1]q %[1]#v", "%v %v %v %v", "%[3]*d", "%é", "%%", "%5%"}
	for _, f := range formats {
		for _, v := range append(values, data["l"], data["m"]) {
			for _, a := range [][]any{{v}, {v, v}, {}, {v, "x", 2.5}} {
				if bigWidth(f) {
					continue
				}
				if got, want := printfSize(f, a, 1<<30), len(fmt.Sprintf(f, a...)); got < want {
					t.Errorf("printfSize(%q, %#v) = %d, below %d", f, a, got, want)
				}
			}
		}
	}
}

// TestTemplateBuiltinsAsBefore: the charged print, println, printf, js,
// html and urlquery, and the check on what an action prints, give what
// text/template's own give.
func TestTemplateBuiltinsAsBefore(t *testing.T) {
	data := decodeSample(t)
	for _, src := range []string{
		`{{print .s .n .b .z .l .m}}`, `{{print 1 2 "a" .n .n .f}}`, `{{print}}`, `{{print nil .missing}}`,
		`{{println .l .m}}`, `{{.l | println "x"}}`,
		`{{printf "%v|%s|%d|%q|%x|%5v|%-3s|%#v" .s .s .n .s .s .l .s .m}}`, `{{printf "%[2]v %[1]v" 1 2}}`,
		`{{printf "%v"}}`, `{{printf "" 1 .s}}`, `{{printf "%.2f %t" 1.5 true}}`,
		`{{js .s}}`, `{{js .m .s}}`, `{{js .missing}}`, `{{js}}`, `{{js .bad}}`, `{{js .n 1}}`,
		`{{html .s}}`, `{{html .s .missing}}`, `{{html .l}}`, `{{urlquery .s}}`, `{{urlquery .s .n}}`,
		`{{.m}}`, `{{.l}}`, `{{.missing}}`, `{{.z}}`, `{{index .l 0}}`, `{{index .m "nope"}}`, `{{or .missing .s}}`,
		`{{and .b .z}}`, `{{slice .s 0 3}}`, `{{len .l}}`, `{{eq .n .n}}`, `{{1.5}}`, `{{"x"}}`, `{{true}}`,
		`{{$x := .missing}}{{$x}}`, `{{range $k, $v := .m}}{{$k}}={{$v}};{{end}}`, `{{range .e}}{{else}}none{{end}}`,
		`{{with .m}}{{.k}}{{end}}`, `{{range .missing}}x{{end}}`, `{{range 3}}{{.}}{{end}}`,
	} {
		plain, err := template.New("body").Option("missingkey=zero").Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		var want bytes.Buffer
		wantErr := plain.Execute(&want, data)

		tm, err := parseField("body", src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		budget := newRenderBudget(context.Background())
		got, gotErr := execute(tm.Funcs(budget.funcs()), budget, data)
		if got != want.String() || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("%s:\n got %q, %v\nwant %q, %v", src, got, gotErr, want.String(), wantErr)
		}
	}
}

// TestClipAsBefore: Clip, which no longer converts all of its text to
// runes, cuts as it did, bytes that are not UTF-8 included.
func TestClipAsBefore(t *testing.T) {
	old := func(s string, n int) string { // what Clip was, converting all of s
		r := []rune(s)
		if len(r) <= n {
			return s
		}
		return string(r[:n-1]) + "…"
	}
	for _, s := range []string{"", "a", "abc", "héllo wörld", "\xff\xfeabc", "ab\xffcd", "😀😀😀"} {
		for n := 1; n <= 8; n++ {
			if got, want := Clip(s, n), old(s, n); got != want {
				t.Errorf("Clip(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}
