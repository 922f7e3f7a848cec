package server

import (
	"unicode/utf8"

	"github.com/heraldhq/herald/service"
)

// decodeSendQuick decodes the send body most scripts post, one flat JSON
// object of plain strings for title, body, priority and callback_url, by
// scanning it once, without reflection. It reports false for anything
// else: another member, a value that is not a string, a string with an
// escape, a control character or invalid UTF-8, a key not spelled in lower
// case, or a body that is not exactly one object. The full decoder then
// reads the body, with its rules and error messages. Where it reports
// true, p is what the full decoder would have made of the body
// (FuzzDecodeSendQuick holds the two to that); where it reports false, p
// is untouched.
func decodeSendQuick(body []byte, p *service.SendPayload) bool {
	var q service.SendPayload
	if !scanSendBody(body, &q) {
		return false
	}
	*p = q
	return true
}

// scanSendBody is decodeSendQuick's scan, into p as it goes.
func scanSendBody(body []byte, p *service.SendPayload) bool {
	i := skipSpace(body, 0)
	if i == len(body) || body[i] != '{' {
		return false
	}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		return skipSpace(body, i+1) == len(body)
	}
	for {
		key, next, ok := plainString(body, i)
		if !ok {
			return false
		}
		i = skipSpace(body, next)
		if i == len(body) || body[i] != ':' {
			return false
		}
		value, next, ok := plainString(body, skipSpace(body, i+1))
		if !ok {
			return false
		}
		switch string(key) { // no allocation: the compiler compares the bytes
		case "title":
			s := string(value)
			p.Title = &s
		case "body":
			p.Body = string(value)
		case "priority":
			p.Priority = string(value)
		case "callback_url":
			s := string(value)
			p.CallbackURL = &s
		default:
			return false
		}
		i = skipSpace(body, next)
		if i == len(body) {
			return false
		}
		switch body[i] {
		case ',':
			i = skipSpace(body, i+1)
		case '}':
			return skipSpace(body, i+1) == len(body)
		default:
			return false
		}
	}
}

// plainString reads the JSON string that starts at body[i] when it needs no
// decoding: no escape, no control character, valid UTF-8. It returns its
// contents and the index after its closing quote.
func plainString(body []byte, i int) (s []byte, next int, ok bool) {
	if i >= len(body) || body[i] != '"' {
		return nil, 0, false
	}
	ascii := true
	for j := i + 1; j < len(body); j++ {
		switch c := body[j]; {
		case c == '"':
			s = body[i+1 : j]
			if !ascii && !utf8.Valid(s) {
				return nil, 0, false
			}
			return s, j + 1, true
		case c == '\\' || c < 0x20:
			return nil, 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, 0, false
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(body []byte, i int) int {
	for i < len(body) {
		switch body[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
