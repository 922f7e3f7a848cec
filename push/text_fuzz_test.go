package push

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzPlainText renders fuzzed Markdown. Rendering only removes marks, so
// the text is a subsequence of the Markdown, valid UTF-8 when that is, and
// the Markdown itself when it has no marks at all.
func FuzzPlainText(f *testing.F) {
	for _, md := range []string{
		"**Disk** is *almost* full on `db1`",
		"Deploy of **web** (production): error\n\nBuild failed: see [the log](https://ci.example.com/run/1)",
		"- `0123456` Fix bug\n- and 3 more",
		"*a* *b* *c* *d*", "a__b **c**", "__init__.py", "2*3*4", "**multi\nline**",
		"![img](https://x/a.png) [a](b) [no link]", "_ _ * * `` [](", "é*ü*ö _✓_ `日本`",
		"\xff**\xfe**", "  padded\t\n",
	} {
		f.Add(md)
	}
	f.Fuzz(func(t *testing.T, md string) {
		got := PlainText(md)
		if !isSubsequence(got, md) {
			t.Fatalf("PlainText(%q) = %q adds text", md, got)
		}
		if utf8.ValidString(md) && !utf8.ValidString(got) {
			t.Fatalf("PlainText(%q) = %q is not valid UTF-8", md, got)
		}
		if !strings.ContainsAny(md, "*_`[") && got != strings.TrimSpace(md) {
			t.Fatalf("PlainText(%q) = %q; want the text as it is", md, got)
		}
	})
}

// FuzzTruncate cuts fuzzed strings: the result fits in limit bytes, is s
// when s fits, and otherwise the longest prefix of whole characters that
// fits beside the ellipsis, then the ellipsis.
func FuzzTruncate(f *testing.F) {
	for _, c := range []struct {
		s     string
		limit int
	}{
		{"Disk is almost full on db1", 4096}, {"abcdef", 4}, {"abcdef", 3}, {"abcdef", 2}, {"abcdef", 0},
		{"héllo wörld", 5}, {"héllo wörld", 6}, {"日本語のテキスト", 10}, {"🙂🙂🙂", 7}, {"x", -1}, {"\xff\xfe\xfd\xfc", 3},
	} {
		f.Add(c.s, c.limit)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		const ell = "…"
		got := Truncate(s, limit)
		switch {
		case len(s) <= limit:
			if got != s {
				t.Fatalf("Truncate(%q, %d) = %q; it fits, want it whole", s, limit, got)
			}
			return
		case limit < len(ell):
			if got != "" {
				t.Fatalf("Truncate(%q, %d) = %q; want \"\"", s, limit, got)
			}
			return
		}
		if len(got) > limit {
			t.Fatalf("Truncate(%q, %d) = %q is %d bytes", s, limit, got, len(got))
		}
		prefix, ok := strings.CutSuffix(got, ell)
		if !ok || !strings.HasPrefix(s, prefix) {
			t.Fatalf("Truncate(%q, %d) = %q; want a prefix of s and an ellipsis", s, limit, got)
		}
		if k := len(prefix); k > 0 && k < len(s) && !utf8.RuneStart(s[k]) {
			t.Fatalf("Truncate(%q, %d) = %q splits a character", s, limit, got)
		}
		if utf8.ValidString(s) {
			if !utf8.ValidString(got) {
				t.Fatalf("Truncate(%q, %d) = %q is not valid UTF-8", s, limit, got)
			}
			if _, size := utf8.DecodeRuneInString(s[len(prefix):]); len(prefix)+size <= limit-len(ell) {
				t.Fatalf("Truncate(%q, %d) = %q; the next character fits too", s, limit, got)
			}
		}
	})
}

// isSubsequence reports whether sub can be had from s by deleting bytes.
func isSubsequence(sub, s string) bool {
	i := 0
	for j := 0; i < len(sub) && j < len(s); j++ {
		if sub[i] == s[j] {
			i++
		}
	}
	return i == len(sub)
}
