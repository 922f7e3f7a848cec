package ntfy

import (
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Publish is what a publish request asks for, read from its headers and
// query the way ntfy reads them. The body (the message, unless Message is
// set and the body is empty) is the caller's to read.
type Publish struct {
	Message    string // X-Message; "\n" written as a backslash and n is a newline
	Title      string
	Priority   int      // 0 (none given) or 1-5
	Tags       []string // as sent, trimmed, empty ones dropped
	Click      string
	Icon       string
	Attach     string // a URL
	Filename   string // set: the body is a file (an upload)
	Actions    []Action
	Delay      *time.Time // when to deliver; nil: now
	Markdown   bool
	NoCache    bool // cache=no
	NoFirebase bool // firebase=no
	SequenceID string
	Email      string
	Call       string
	Template   bool
}

// A param is one publish parameter: its header names (canonical form) and
// its query names (lower case), in the order ntfy tries them.
type param struct {
	headers []string
	query   []string
}

// The parameters, from ntfy's parsePublishParams; X-Sequence-ID is ntfy
// 2.16's.
var (
	pMessage    = param{[]string{"X-Message", "Message", "M"}, []string{"x-message", "message", "m"}}
	pTitle      = param{[]string{"X-Title", "Title", "T"}, []string{"x-title", "title", "t"}}
	pPriority   = param{[]string{"X-Priority", "Priority", "Prio", "P"}, []string{"x-priority", "priority", "prio", "p"}}
	pTags       = param{[]string{"X-Tags", "Tags", "Tag", "Ta"}, []string{"x-tags", "tags", "tag", "ta"}}
	pClick      = param{[]string{"X-Click", "Click"}, []string{"x-click", "click"}}
	pIcon       = param{[]string{"X-Icon", "Icon"}, []string{"x-icon", "icon"}}
	pAttach     = param{[]string{"X-Attach", "Attach", "A"}, []string{"x-attach", "attach", "a"}}
	pFilename   = param{[]string{"X-Filename", "Filename", "File", "F"}, []string{"x-filename", "filename", "file", "f"}}
	pActions    = param{[]string{"X-Actions", "Actions", "Action"}, []string{"x-actions", "actions", "action"}}
	pDelay      = param{[]string{"X-Delay", "Delay", "X-At", "At", "X-In", "In"}, []string{"x-delay", "delay", "x-at", "at", "x-in", "in"}}
	pMarkdown   = param{[]string{"X-Markdown", "Markdown", "Md"}, []string{"x-markdown", "markdown", "md"}}
	pType       = param{[]string{"Content-Type"}, []string{"content-type", "content_type"}}
	pCache      = param{[]string{"X-Cache", "Cache"}, []string{"x-cache", "cache"}}
	pFirebase   = param{[]string{"X-Firebase", "Firebase"}, []string{"x-firebase", "firebase"}}
	pSequenceID = param{[]string{"X-Sequence-Id", "Sequence-Id", "Sid"}, []string{"x-sequence-id", "sequence-id", "sequence_id", "sid"}}
	pEmail      = param{[]string{"X-Email", "X-E-Mail", "Email", "E-Mail", "Mail", "E"}, []string{"x-email", "x-e-mail", "email", "e-mail", "mail", "e"}}
	pCall       = param{[]string{"X-Call", "Call"}, []string{"x-call", "call"}}
	pTemplate   = param{[]string{"X-Template", "Template", "Tpl"}, []string{"x-template", "template", "tpl"}}
)

// Request is where a publish request's parameters are read from.
type Request struct {
	Header http.Header
	Query  url.Values // nil when the URL has no query
}

// get reads p as ntfy does: the first header that has a value (RFC 2047
// encoded words decoded), else the first query parameter that has one;
// both trimmed.
func (r Request) get(p param) string {
	for _, name := range p.headers {
		if vs := r.Header[name]; len(vs) > 0 {
			v := strings.TrimSpace(decodeHeader(vs[0]))
			if name == "Priority" && rfc9218Priority(v) {
				continue // the HTTP priority signal a proxy may add, not ntfy's
			}
			if v != "" {
				return v
			}
		}
	}
	if r.Query == nil {
		return ""
	}
	for _, name := range p.query {
		if v := strings.TrimSpace(r.Query.Get(name)); v != "" {
			return v
		}
	}
	return ""
}

// decodeHeader decodes RFC 2047 encoded words (=?UTF-8?B?...?=), as ntfy
// does for every header: HTTP headers cannot carry UTF-8 otherwise. A
// value that is not well formed is taken as it is.
func decodeHeader(v string) string {
	if !strings.Contains(v, "=?") {
		return v
	}
	var dec mime.WordDecoder
	if d, err := dec.DecodeHeader(v); err == nil {
		return d
	}
	return v
}

// rfc9218Priority reports whether v is RFC 9218's Priority header ("u=3",
// "u=3, i"), which some proxies add to requests they forward.
func rfc9218Priority(v string) bool {
	return len(v) >= 3 && v[0] == 'u' && v[1] == '=' && '0' <= v[2] && v[2] <= '9'
}

// ParseBool reads ntfy's booleans: 1, yes, true and 0, no, false, in any
// case.
func ParseBool(s string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "yes", "true":
		return true, true
	case "0", "no", "false":
		return false, true
	}
	return false, false
}

// flag reads a boolean parameter: def when absent, and (as ntfy does)
// false for any value that is not a true one.
func (r Request) flag(p param, def bool) bool {
	v := r.get(p)
	if v == "" {
		return def
	}
	b, _ := ParseBool(v)
	return b
}

// ReadPublish reads a publish request's parameters at time now. Unknown
// parameters are ignored. What Herald cannot do (e-mail, phone calls,
// templates) is refused with a ParamError, as is a value ntfy would refuse.
func ReadPublish(r Request, now time.Time) (*Publish, error) {
	p := &Publish{
		Title:      r.get(pTitle),
		Click:      r.get(pClick),
		Icon:       r.get(pIcon),
		Attach:     r.get(pAttach),
		Filename:   r.get(pFilename),
		SequenceID: r.get(pSequenceID),
		Email:      r.get(pEmail),
		Call:       r.get(pCall),
		NoCache:    !r.flag(pCache, true),
		NoFirebase: !r.flag(pFirebase, true),
		Template:   r.flag(pTemplate, false),
	}
	if p.Email != "" {
		return nil, paramError(CodeEmailDisabled, "Herald does not send e-mail: leave out the email parameter")
	}
	if p.Call != "" {
		return nil, paramError(CodeCallsDisabled, "Herald does not make phone calls: leave out the call parameter")
	}
	if p.Template {
		return nil, paramError(CodeTemplateDisallowed,
			"Herald does not render ntfy templates: send the message itself, or use a Herald webhook template")
	}
	if p.Attach != "" && !httpURL(p.Attach) {
		return nil, paramError(CodeAttachURLInvalid, "attach must be an http or https URL")
	}
	if p.Icon != "" && !httpURL(p.Icon) {
		return nil, paramError(CodeIconURLInvalid, "icon must be an http or https URL")
	}
	if p.SequenceID != "" && !ValidID(p.SequenceID) {
		return nil, paramError(CodeBadRequest, "sequence id must be 1-64 letters, digits, - or _")
	}
	p.Message = strings.ReplaceAll(r.get(pMessage), `\n`, "\n")
	var err error
	if p.Priority, err = ParsePriority(r.get(pPriority)); err != nil {
		return nil, err
	}
	if tags := r.get(pTags); tags != "" {
		for t := range strings.SplitSeq(tags, ",") {
			if t = strings.TrimSpace(t); t != "" {
				p.Tags = append(p.Tags, t)
			}
		}
	}
	if s := r.get(pDelay); s != "" {
		if p.NoCache {
			return nil, paramError(CodeDelayNoCache, "a scheduled message cannot be sent with cache=no")
		}
		at, err := ParseFutureTime(s, now)
		if err != nil {
			return nil, err
		}
		p.Delay = &at
	}
	if s := r.get(pActions); s != "" {
		if p.Actions, err = ParseActions(s); err != nil {
			return nil, err
		}
	}
	p.Markdown = r.flag(pMarkdown, false) || strings.EqualFold(mediaType(r.get(pType)), "text/markdown")
	if err := p.checkText(); err != nil {
		return nil, err
	}
	return p, nil
}

// mediaType is a Content-Type without its parameters.
func mediaType(ct string) string {
	t, _, _ := strings.Cut(ct, ";")
	return strings.TrimSpace(t)
}

// checkText refuses text that cannot be stored: invalid UTF-8 or a NUL.
func (p *Publish) checkText() error {
	for _, s := range [...]string{p.Message, p.Title, p.Click, p.Icon, p.Attach, p.Filename} {
		if !Text(s) {
			return paramError(CodeMessageNotUTF8, "parameters must be UTF-8 text without NUL characters")
		}
	}
	for _, t := range p.Tags {
		if !Text(t) {
			return paramError(CodeMessageNotUTF8, "tags must be UTF-8 text without NUL characters")
		}
	}
	for _, a := range p.Actions {
		for _, s := range [...]string{a.Label, a.URL, a.Method, a.Body, a.Value} {
			if !Text(s) {
				return paramError(CodeActionsInvalid, "actions must be UTF-8 text without NUL characters")
			}
		}
		for k, v := range a.Headers {
			if !Text(k) || !Text(v) {
				return paramError(CodeActionsInvalid, "actions must be UTF-8 text without NUL characters")
			}
		}
	}
	return nil
}

// Text reports whether s can be stored as text: valid UTF-8 without NUL.
func Text(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// httpURL reports whether s starts like an http or https URL, as ntfy
// requires of attach and icon.
func httpURL(s string) bool {
	return hasPrefixFold(s, "http://") || hasPrefixFold(s, "https://")
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// ValidID reports whether s is in ntfy's topic and sequence id alphabet:
// letters, digits, - and _, 1-64 long.
func ValidID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
