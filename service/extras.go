package service

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/heraldhq/herald/ntfy"
)

// Limits of a message's extras, scheduled delivery and http actions
// (docs/sending.md).
const (
	MaxTags       = 10
	MaxTag        = 100
	MaxSequenceID = 64
	// MinDelay and MaxDelay bound how far ahead deliver_at may be, as
	// ntfy's defaults do (message-delay-min is 10 s, -max 3 days).
	MinDelay = 10 * time.Second
	MaxDelay = 72 * time.Hour
	// Bounds of an http action's request.
	MaxRequestHeaders = 10
	MaxHeaderValue    = 1024
	MaxRequestBody    = 4096
)

// checkExtras validates what a message carries beside its title and body.
func checkExtras(e *Extras) error {
	if len(e.Tags) > MaxTags {
		return invalid("%d tags; a message can have at most %d", len(e.Tags), MaxTags)
	}
	for i, t := range e.Tags {
		if strings.TrimSpace(t) == "" {
			return invalid("tags[%d] is empty", i)
		}
		if chars(t) > MaxTag {
			return invalid("tags[%d] is longer than %d characters", i, MaxTag)
		}
		if hasControl(t) {
			return invalid("tags[%d] has a control character", i)
		}
	}
	if e.Click != "" {
		if err := validClick(e.Click); err != nil {
			return err
		}
	}
	if e.Icon != "" {
		if err := ValidHTTPURL("icon_url", e.Icon); err != nil {
			return err
		}
	}
	if e.Attach != "" {
		if err := ValidHTTPURL("attach_url", e.Attach); err != nil {
			return err
		}
	}
	if e.SequenceID != "" && !ValidSequenceID(e.SequenceID) {
		return invalid("sequence_id must be 1 to %d letters, digits, - or _", MaxSequenceID)
	}
	return nil
}

// validClick accepts an http(s) URL, or a mailto: address, as ntfy's
// clients open either.
func validClick(s string) error {
	if !strings.HasPrefix(strings.ToLower(s), "mailto:") {
		return ValidHTTPURL("click_url", s)
	}
	if chars(s) > MaxURL {
		return invalid("click_url is longer than %d characters", MaxURL)
	}
	if u, err := url.Parse(s); err != nil || u.Opaque == "" || hasControl(s) {
		return invalid("click_url must be an http, https or mailto URL")
	}
	return nil
}

// ValidSequenceID reports whether s is in ntfy's alphabet of topics and
// sequence ids: 1 to 64 letters, digits, - and _ (ntfy.ValidID).
func ValidSequenceID(s string) bool { return ntfy.ValidID(s) }

// checkDelivery validates when and how a message goes out, against now.
func checkDelivery(p *SendPayload, now time.Time) error {
	if p.DeliverAt == nil {
		return nil
	}
	if p.Ephemeral {
		return invalid("a message that is not kept cannot be scheduled: it would have nothing to deliver later")
	}
	ahead := p.DeliverAt.Sub(now)
	if ahead < MinDelay {
		return invalid("deliver_at must be at least %s ahead (it is %s)", MinDelay, ahead.Round(time.Second))
	}
	if ahead > MaxDelay {
		return invalid("deliver_at must be at most %s ahead (it is %s)", fmtDays(MaxDelay), ahead.Round(time.Minute))
	}
	return nil
}

func fmtDays(d time.Duration) string { return fmt.Sprintf("%d days", int(d/(24*time.Hour))) }

// httpMethods are the methods an http action may use.
var httpMethods = map[string]bool{http.MethodGet: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodHead: true}

// validHTTPAction checks an http action's URL and request, and sets its
// method to POST when none is given.
func validHTTPAction(at func(string, ...any) error, a *Action) error {
	if err := ValidHTTPURL("value", a.Value); err != nil {
		return at("an http Action needs value, an absolute http or https URL of at most %d characters", MaxURL)
	}
	if len(a.Fields) > 0 {
		return at("an http Action takes no fields")
	}
	if a.Request == nil {
		a.Request = &HTTPRequest{}
	}
	rq := a.Request
	rq.Method = strings.ToUpper(rq.Method)
	if rq.Method == "" {
		rq.Method = http.MethodPost
	}
	if !httpMethods[rq.Method] {
		return at("request.method must be GET, POST, PUT, PATCH, DELETE or HEAD")
	}
	if rq.Body != "" && (rq.Method == http.MethodGet || rq.Method == http.MethodHead) {
		return at("a %s request takes no body", rq.Method)
	}
	if len(rq.Body) > MaxRequestBody {
		return at("request.body is longer than %d bytes", MaxRequestBody)
	}
	if len(rq.Headers) > MaxRequestHeaders {
		return at("request.headers: at most %d", MaxRequestHeaders)
	}
	for k, v := range rq.Headers {
		if !validHeaderName(k) {
			return at("request.headers: %q is not a header name", k)
		}
		if len(v) > MaxHeaderValue || hasControl(v) {
			return at("request.headers: %s must be at most %d characters, without control characters", k, MaxHeaderValue)
		}
		switch strings.ToLower(k) {
		case "host", "content-length", "transfer-encoding", "connection":
			return at("request.headers: %s is set by Herald", k)
		}
	}
	return nil
}

// validHeaderName reports whether s is an HTTP token (RFC 9110).
func validHeaderName(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// hasControl reports whether s holds a control character (tab included).
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return true
		}
	}
	return false
}

// generateKeys gives each http action without a key one of its own,
// unique within the message: http, http-2, http-3, ...
func generateKeys(actions []Action) {
	taken := map[string]bool{}
	for _, a := range actions {
		if a.Key != "" {
			taken[a.Key] = true
		}
	}
	for i := range actions {
		if actions[i].Type != "http" || actions[i].Key != "" {
			continue
		}
		key := "http"
		for n := 2; taken[key]; n++ {
			key = fmt.Sprintf("http-%d", n)
		}
		taken[key] = true
		actions[i].Key = key
	}
}
