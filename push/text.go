package push

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

var (
	mdLink   = regexp.MustCompile(`\[([^\]]*)\]\(([^)\s]*)\)`)
	mdBold   = regexp.MustCompile(`(\*\*|__)(.+?)(\*\*|__)`)
	mdItalic = regexp.MustCompile(`(^|[\s(])[*_]([^*_\s][^*_]*?)[*_]([\s).,!?:;]|$)`)
	mdCode   = regexp.MustCompile("`([^`]*)`")
)

// PlainText renders Herald's Markdown subset as plain text for a lock
// screen: bold, italic and code lose their marks; a link keeps its label.
func PlainText(md string) string {
	s := mdCode.ReplaceAllString(md, "$1")
	s = mdLink.ReplaceAllString(s, "$1")
	s = mdBold.ReplaceAllString(s, "$2")
	s = mdItalic.ReplaceAllString(s, "$1$2$3")
	return strings.TrimSpace(s)
}

// Truncate cuts s to at most max bytes on a character boundary, ending in
// an ellipsis when it cut.
func Truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const ell = "…"
	cut := max - len(ell)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if cut <= 0 {
		return ""
	}
	return s[:cut] + ell
}
