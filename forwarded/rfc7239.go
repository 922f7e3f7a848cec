package forwarded

import (
	"net/http"
	"strings"
)

// rfc7239 reads the Forwarded header lines (RFC 7239): one element per
// proxy, in order, each "key=value" pairs separated by ";". It returns each
// element's for= value and its proto= value ("" when absent), so the two
// lists have the same length. A quoted value may hold "," and ";".
func rfc7239(h http.Header) (hops, schemes []string) {
	for _, line := range h.Values("Forwarded") {
		for _, elem := range splitQuoted(line, ',') {
			var hop, scheme string
			for _, pair := range splitQuoted(elem, ';') {
				k, v, ok := strings.Cut(pair, "=")
				if !ok {
					continue
				}
				v = unquote(strings.TrimSpace(v))
				switch strings.ToLower(strings.TrimSpace(k)) {
				case "for":
					hop = v
				case "proto":
					scheme = v
				}
			}
			if strings.TrimSpace(elem) == "" {
				continue
			}
			// An element without for= still counts as a hop: one that
			// names no address, which ends the walk there.
			hops, schemes = append(hops, hop), append(schemes, scheme)
		}
	}
	return hops, schemes
}

// splitQuoted splits s at sep outside double quotes.
func splitQuoted(s string, sep byte) []string {
	var out []string
	quoted, escaped, start := false, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case escaped:
			escaped = false
		case quoted && c == '\\':
			escaped = true
		case c == '"':
			quoted = !quoted
		case c == sep && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// unquote removes the quotes of a quoted-string and its backslash escapes.
func unquote(v string) string {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return v
	}
	var b strings.Builder
	v = v[1 : len(v)-1]
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}
