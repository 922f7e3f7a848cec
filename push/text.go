package push

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

var (
	mdLink = regexp.MustCompile(`\[([^\]]*)\]\(([^)\s]*)\)`)
	// Two patterns, not (\*\*|__)…(\*\*|__): RE2 has no backreferences, and
	// mixed marks would pair "__" with a later "**" ("a__b **c**").
	mdBold   = regexp.MustCompile(`\*\*(.+?)\*\*`)
	mdBold2  = regexp.MustCompile(`__(.+?)__`)
	mdItalic = regexp.MustCompile(`(^|[\s(])[*_]([^*_\s][^*_]*?)[*_]([\s).,!?:;]|$)`)
	mdCode   = regexp.MustCompile("`([^`]*)`")
)

// PlainText renders Herald's Markdown subset as plain text for a lock
// screen: bold, italic and code lose their marks; a link keeps its label.
func PlainText(md string) string {
	s := mdCode.ReplaceAllString(md, "$1")
	s = mdLink.ReplaceAllString(s, "$1")
	s = mdBold.ReplaceAllString(s, "$1")
	s = mdBold2.ReplaceAllString(s, "$1")
	// A match consumes the space after it, which the next one needs before
	// it ("*a* *b*"), so repeat until nothing changes; each pass removes marks.
	for {
		next := mdItalic.ReplaceAllString(s, "$1$2$3")
		if next == s {
			break
		}
		s = next
	}
	return strings.TrimSpace(s)
}

// Truncate cuts s to at most max bytes on a character boundary, ending in
// an ellipsis when it cut (just the ellipsis when no character fits beside
// it, and "" when not even that fits).
func Truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const ell = "…"
	if max < len(ell) {
		return ""
	}
	cut := max - len(ell)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ell
}
