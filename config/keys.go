package config

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// checkKeys refuses keys the Config does not have. BurntSushi/toml matches
// field names case-insensitively, so keys that only match in another case
// ("Listen") are refused as well: the documented spelling is the only one.
func checkKeys(path, data string, md toml.MetaData) error {
	var errs []error
	var reported []toml.Key
	add := func(k toml.Key, msg string) {
		for _, r := range reported {
			if hasPrefix(k, r) { // only the outermost unknown table is worth a line
				return
			}
		}
		reported = append(reported, k)
		if line := lineOf(data, md, k); line > 0 {
			errs = append(errs, fmt.Errorf("config: %s: line %d: %s", path, line, msg))
		} else {
			errs = append(errs, fmt.Errorf("config: %s: %s", path, msg))
		}
	}
	for _, k := range md.Undecoded() {
		add(k, fmt.Sprintf("unknown key %q", k.String()))
	}
	for _, k := range md.Keys() {
		if want, ok := exactKey(reflect.TypeOf(Config{}), k); !ok && want != "" {
			add(k, fmt.Sprintf("unknown key %q (keys are case-sensitive: did you mean %q?)", k.String(), want))
		}
	}
	return errors.Join(errs...)
}

// exactKey walks k through t by toml tags. It returns ok when every piece
// matches exactly; otherwise, if the key matches ignoring case, want is the
// correctly spelled key.
func exactKey(t reflect.Type, k toml.Key) (want string, ok bool) {
	fixed := make([]string, 0, len(k))
	exact := true
	for _, piece := range k {
		for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || t == durationType {
			return "", true // below a leaf: toml reports any mismatch itself
		}
		found := false
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name := tagName(f)
			if strings.EqualFold(name, piece) {
				exact = exact && name == piece
				fixed = append(fixed, name)
				t = f.Type
				found = true
				break
			}
		}
		if !found {
			return "", false // unknown: reported through Undecoded
		}
	}
	if exact {
		return "", true
	}
	return strings.Join(fixed, "."), false
}

// hasPrefix reports whether key k lies inside (or is) key prefix.
func hasPrefix(k, prefix toml.Key) bool {
	if len(k) < len(prefix) {
		return false
	}
	for i := range prefix {
		if k[i] != prefix[i] {
			return false
		}
	}
	return true
}

// lineOf returns the line of key k in data, or 0 when it cannot tell.
//
// BurntSushi/toml records every key's position but does not export it; it
// only shows it in the errors it returns. So this decodes the document again
// into a type built to hold just the path to k, whose leaf always fails to
// unmarshal, and reads the line from the resulting error. For a key inside an
// array of tables that is the first table holding it.
func lineOf(data string, md toml.MetaData, k toml.Key) int {
	if len(k) == 0 {
		return 0
	}
	t := reflect.TypeOf(failer{})
	for i := len(k) - 1; i >= 0; i-- {
		tag := `toml:` + strconv.Quote(k[i])
		if strings.Contains(k[i], ",") {
			return 0 // a comma would be read as a tag option
		}
		if i < len(k)-1 {
			if typ := md.Type(k[:i+1]...); typ == "ArrayHash" || typ == "Array" {
				t = reflect.SliceOf(t)
			}
		}
		t = reflect.StructOf([]reflect.StructField{{Name: "F", Type: t, Tag: reflect.StructTag(tag)}})
	}
	_, err := toml.Decode(data, reflect.New(t).Interface())
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return pe.Position.Line
	}
	return 0
}

// fixLine corrects the line of a toml parse error. The toml lexer counts a
// line off around a backslash at the end of a line or of the file (the next
// line, or the one before: line 0 in a one-line file), and an error at the
// end of a file that ends in a newline can name the empty line after it. An
// error lies no earlier than the start of its token and no later than the
// last byte of the file, so the line is kept between the two.
func fixLine(err error, data string) error {
	var pe toml.ParseError
	if !errors.As(err, &pe) || data == "" || pe.Position.Start < 0 || pe.Position.Start > len(data) {
		return err
	}
	first := 1 + strings.Count(data[:pe.Position.Start], "\n")
	last := 1 + strings.Count(data[:len(data)-1], "\n")
	pe.Position.Line = min(max(pe.Position.Line, first), last)
	return pe
}

// failer fails to unmarshal, which makes toml report its key's position.
type failer struct{}

// UnmarshalTOML always fails; see lineOf.
func (failer) UnmarshalTOML(any) error { return errors.New("located") }

// tagName is the TOML name of a struct field.
func tagName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

var (
	durationType = reflect.TypeOf(Duration{})
	sizeType     = reflect.TypeOf(Size(0))
)
