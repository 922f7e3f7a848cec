package push

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPlainText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bold stars", "**bold**", "bold"},
		{"bold underscores", "__bold__", "bold"},
		{"italic star", "*italic*", "italic"},
		{"italic underscore", "_italic_", "italic"},
		{"code", "`code`", "code"},
		{"link keeps its label", "[label](https://x)", "label"},
		{"two links", "see [a](https://x) and [b](https://y)", "see a and b"},
		{"mixed", "**Disk** is *almost* full on `db1`", "Disk is almost full on db1"},
		{"inside a sentence", "x **y** z", "x y z"},
		{"before punctuation", "end *x*.", "end x."},
		{"in parentheses", "(*paren*)", "(paren)"},
		{"adjacent italics", "*a* *b* *c* *d*", "a b c d"},
		{"adjacent underscores", "_a_ _b_", "a b"},
		{"mixed bold marks are not a pair", "a__b **c**", "a__b c"},
		{"bold of bold", "**__x__**", "x"},
		{"snake_case stays", "snake_case_words", "snake_case_words"},
		{"snake_case beside italic", "my_var_name and *x*", "my_var_name and x"},
		{"file name stays", "file_name_here.txt", "file_name_here.txt"},
		// Products: an italic mark needs a space or "(" before it, so 2*3*4
		// stays as written.
		{"product", "2*3*4", "2*3*4"},
		{"spaced product", "5 * 3 = 15 and 2 * 2", "5 * 3 = 15 and 2 * 2"},
		{"intraword star", "*a*b", "*a*b"},
		{"unclosed bold", "**unclosed", "**unclosed"},
		{"brackets without a link", "[no link]", "[no link]"},
		{"list and heading marks stay", "# Heading\n- item\n* item", "# Heading\n- item\n* item"},
		{"lines kept", "line1\nline2", "line1\nline2"},
		{"trimmed", "  padded  ", "padded"},
		// Documented limits of the regex renderer, as CommonMark would
		// also render the first one: a dunder name is bold.
		{"dunder is bold", "__init__.py", "init.py"},
		{"marks inside code are still stripped", "`**x**`", "x"},
		{"bold does not span lines", "**multi\nline**", "**multi\nline**"},
		{"image keeps its bang", "![img](https://x/a.png)", "!img"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PlainText(tt.in); got != tt.want {
				t.Errorf("PlainText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exact", 5, "exact"},
		{"abcdef", 4, "a…"},
		{"abcdef", 3, "…"}, // only the ellipsis fits
		{"abcdef", 2, ""},  // not even that
		{"abcdef", 0, ""},
		{"héllo wörld", 5, "h…"},  // 'é' is two bytes: cutting at 2 would split it
		{"héllo wörld", 6, "hé…"}, // the whole rune fits
		{"日本語", 9, "日本語"},
		{"日本語", 8, "日…"},
		{"日本語", 6, "日…"},
		{"日本語", 5, "…"},
		{"日本語テキスト", 7, "日…"},
		{"🙂🙂🙂", 8, "🙂…"},
		{"🙂🙂🙂", 6, "…"},
	}
	for _, tt := range tests {
		got := Truncate(tt.in, tt.max)
		if got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
		if len(got) > max(tt.max, 0) {
			t.Errorf("Truncate(%q, %d) is %d bytes", tt.in, tt.max, len(got))
		}
		if !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) = %q splits a rune", tt.in, tt.max, got)
		}
	}
}

// TestTruncateEveryBoundary cuts a string of one-, two-, three- and
// four-byte runes at every length: the result is always valid UTF-8, fits,
// is a prefix of the input, and ends with "…" whenever it cut.
func TestTruncateEveryBoundary(t *testing.T) {
	s := strings.Repeat("aé日🙂", 8)
	for n := 0; n <= len(s)+1; n++ {
		got := Truncate(s, n)
		if len(got) > n || !utf8.ValidString(got) {
			t.Fatalf("Truncate(s, %d) = %q (%d bytes)", n, got, len(got))
		}
		if n >= len(s) {
			if got != s {
				t.Fatalf("Truncate(s, %d) cut a string that fits", n)
			}
			continue
		}
		if n >= len("…") && !strings.HasSuffix(got, "…") {
			t.Fatalf("Truncate(s, %d) = %q does not end with …", n, got)
		}
		if !strings.HasPrefix(s, strings.TrimSuffix(got, "…")) {
			t.Fatalf("Truncate(s, %d) = %q is not a prefix", n, got)
		}
		// It keeps as much as fits: one more rune would not.
		kept := len(strings.TrimSuffix(got, "…"))
		if n >= len("…") && kept < len(s) {
			_, size := utf8.DecodeRuneInString(s[kept:])
			if kept+size+len("…") <= n {
				t.Fatalf("Truncate(s, %d) kept %d bytes; the next rune would have fit", n, kept)
			}
		}
	}
}
