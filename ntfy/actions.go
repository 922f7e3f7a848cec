package ntfy

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// MaxActions is how many buttons ntfy allows a message.
const MaxActions = 3

// Action types.
const (
	ActionView      = "view"
	ActionHTTP      = "http"
	ActionBroadcast = "broadcast"
	ActionCopy      = "copy"
)

// ParseActions reads ntfy's actions parameter: a JSON array when it starts
// with "[", else the short format
//
//	view, Open portal, https://example.com/, clear=true; http, Turn off, https://api.example.com/off, method=PUT, body='{"on": false}'
//
// Actions are separated by ";" and their parts by ","; a part is
// key=value, or a bare value that is, by its place, the action, the label
// and (for view and http) the URL. Values may be quoted with " or ', with
// a backslash before a quote of the same kind inside. Keys are action,
// label, clear, url, method, body, intent, value, headers.<name> and
// extras.<name>.
//
// It checks what ntfy checks (at most MaxActions, a known type, a label,
// a URL for view and http, no body with GET or HEAD) and returns the
// actions with lower-case types and upper-case methods. Whether Herald can
// show each type is the caller's to decide.
func ParseActions(s string) ([]Action, error) {
	s = strings.TrimSpace(s)
	var actions []Action
	var err error
	if strings.HasPrefix(s, "[") {
		if err := json.Unmarshal([]byte(s), &actions); err != nil {
			return nil, paramError(CodeActionsInvalid, "actions: the JSON array could not be read: %v", err)
		}
	} else if actions, err = parseShortActions(s); err != nil {
		return nil, err
	}
	if len(actions) > MaxActions {
		return nil, paramError(CodeActionsInvalid, "actions: %d actions; ntfy allows at most %d", len(actions), MaxActions)
	}
	for i := range actions {
		a := &actions[i]
		a.Action = strings.ToLower(a.Action)
		a.Method = strings.ToUpper(a.Method)
		if err := checkAction(i, a); err != nil {
			return nil, err
		}
	}
	return actions, nil
}

func checkAction(i int, a *Action) error {
	switch a.Action {
	case ActionView, ActionHTTP, ActionBroadcast, ActionCopy:
	default:
		return paramError(CodeActionsInvalid, "actions[%d]: action %q is unknown; use view, http, broadcast or copy", i, a.Action)
	}
	if strings.TrimSpace(a.Label) == "" {
		return paramError(CodeActionsInvalid, "actions[%d]: label is required", i)
	}
	if (a.Action == ActionView || a.Action == ActionHTTP) && a.URL == "" {
		return paramError(CodeActionsInvalid, "actions[%d]: a %s action needs url", i, a.Action)
	}
	if a.Action == ActionHTTP && (a.Method == "GET" || a.Method == "HEAD") && a.Body != "" {
		return paramError(CodeActionsInvalid, "actions[%d]: an http action with method %s takes no body", i, a.Method)
	}
	return nil
}

// parseShortActions reads the short format, one action per ";".
func parseShortActions(s string) ([]Action, error) {
	if !utf8.ValidString(s) {
		return nil, paramError(CodeActionsInvalid, "actions: not UTF-8 text")
	}
	p := shortParser{in: s}
	var actions []Action
	for p.skipSpaces(); p.pos < len(p.in); p.skipSpaces() {
		a, err := p.action(len(actions))
		if err != nil {
			return nil, err
		}
		actions = append(actions, a)
		if len(actions) > MaxActions {
			break // refused by the caller; no need to read on
		}
	}
	return actions, nil
}

// shortParser walks the short format, one part at a time.
type shortParser struct {
	in  string
	pos int
}

// action reads the parts of one action, up to its ";" or the end.
func (p *shortParser) action(n int) (Action, error) {
	a := Action{}
	for part := 0; ; part++ {
		key, value, last, err := p.part()
		if err != nil {
			return a, paramError(CodeActionsInvalid, "actions[%d]: %s", n, err.Error())
		}
		if key == "" {
			switch {
			case part == 0:
				key = "action"
			case part == 1:
				key = "label"
			case part == 2 && (strings.EqualFold(a.Action, ActionView) || strings.EqualFold(a.Action, ActionHTTP)):
				key = "url"
			default:
				return a, paramError(CodeActionsInvalid, "actions[%d]: %q needs a key (key=value)", n, value)
			}
		}
		if err := setActionKey(&a, key, value); err != nil {
			return a, paramError(CodeActionsInvalid, "actions[%d]: %s", n, err.Error())
		}
		if last {
			return a, nil
		}
	}
}

// setActionKey sets the field key names to value.
func setActionKey(a *Action, key, value string) error {
	if name, ok := strings.CutPrefix(key, "headers."); ok {
		if a.Headers == nil {
			a.Headers = map[string]string{}
		}
		a.Headers[name] = value
		return nil
	}
	if name, ok := strings.CutPrefix(key, "extras."); ok {
		if a.Extras == nil {
			a.Extras = map[string]string{}
		}
		a.Extras[name] = value
		return nil
	}
	switch strings.ToLower(key) {
	case "action":
		a.Action = value
	case "label":
		a.Label = value
	case "url":
		a.URL = value
	case "method":
		a.Method = value
	case "body":
		a.Body = value
	case "intent":
		a.Intent = value
	case "value":
		a.Value = value
	case "clear":
		b, ok := ParseBool(value)
		if !ok {
			return &ParamError{Code: CodeActionsInvalid, Msg: "clear must be true or false (yes/no, 1/0), not " + quote(value)}
		}
		a.Clear = b
	default:
		return &ParamError{Code: CodeActionsInvalid, Msg: "key " + quote(key) + " is unknown"}
	}
	return nil
}

// part reads one part: an optional "key=" and a value, bare or quoted. It
// consumes the "," or ";" that ends it; last reports a ";" or the end.
func (p *shortParser) part() (key, value string, last bool, err error) {
	p.skipSpaces()
	key = p.key()
	if p.pos < len(p.in) && (p.in[p.pos] == '"' || p.in[p.pos] == '\'') {
		return p.quoted(key)
	}
	start := p.pos
	for p.pos < len(p.in) && p.in[p.pos] != ',' && p.in[p.pos] != ';' {
		p.pos++
	}
	value = strings.TrimSpace(p.in[start:p.pos])
	return key, value, p.end(), nil
}

// key reads "name =" (name of letters, digits, _, - and .) if the input
// continues with one, and returns "" otherwise without moving.
func (p *shortParser) key() string {
	i := p.pos
	for i < len(p.in) && isKeyChar(p.in[i]) {
		i++
	}
	if i == p.pos {
		return ""
	}
	j := i
	for j < len(p.in) && isSpace(p.in[j]) {
		j++
	}
	if j == len(p.in) || p.in[j] != '=' {
		return ""
	}
	key := p.in[p.pos:i]
	p.pos = j + 1
	p.skipSpaces()
	return key
}

// quoted reads a value in quotes, then the "," or ";" after it.
func (p *shortParser) quoted(key string) (string, string, bool, error) {
	q := p.in[p.pos]
	p.pos++
	start := p.pos
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		if c == '\\' && p.pos+1 < len(p.in) && p.in[p.pos+1] == q {
			p.pos += 2
			continue
		}
		if c == q {
			value := strings.ReplaceAll(p.in[start:p.pos], `\`+string(q), string(q))
			p.pos++
			p.skipSpaces()
			if p.pos < len(p.in) && p.in[p.pos] != ',' && p.in[p.pos] != ';' {
				return "", "", false, &ParamError{Code: CodeActionsInvalid,
					Msg: "unexpected " + quote(p.in[p.pos:p.pos+1]) + " after a quoted value"}
			}
			return key, value, p.end(), nil
		}
		p.pos++
	}
	return "", "", false, &ParamError{Code: CodeActionsInvalid, Msg: "a quote is not closed"}
}

// end consumes the "," or ";" at the position and reports whether the
// action ends there.
func (p *shortParser) end() bool {
	if p.pos >= len(p.in) {
		return true
	}
	c := p.in[p.pos]
	p.pos++
	return c == ';' || p.pos >= len(p.in) && c == ','
}

func (p *shortParser) skipSpaces() {
	for p.pos < len(p.in) && isSpace(p.in[p.pos]) {
		p.pos++
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isKeyChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

func quote(s string) string { return `"` + s + `"` }
