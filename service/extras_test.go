package service

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestCheckSendExtras covers the rules of the extras and http actions at
// their edges.
func TestCheckSendExtras(t *testing.T) {
	httpAction := func(rq *HTTPRequest) Action {
		return Action{Type: "http", Label: "Go", Value: "https://example.com/hook", Request: rq}
	}
	tags := func(n int) []string { return strings.Split(strings.Repeat("t,", n)[:2*n-1], ",") }
	cases := []struct {
		name string
		p    SendPayload
		want string
	}{
		{"ten tags", SendPayload{Extras: Extras{Tags: tags(10)}}, ""},
		{"eleven tags", SendPayload{Extras: Extras{Tags: tags(11)}}, "at most 10"},
		{"tag of 100", SendPayload{Extras: Extras{Tags: []string{n(100)}}}, ""},
		{"tag of 101", SendPayload{Extras: Extras{Tags: []string{n(101)}}}, "longer than 100"},
		{"empty tag", SendPayload{Extras: Extras{Tags: []string{" "}}}, "empty"},
		{"tab in tag", SendPayload{Extras: Extras{Tags: []string{"a\tb"}}}, "control"},
		{"https click", SendPayload{Extras: Extras{Click: "https://example.com"}}, ""},
		{"mailto click", SendPayload{Extras: Extras{Click: "mailto:a@example.com"}}, ""},
		{"javascript click", SendPayload{Extras: Extras{Click: "javascript:alert(1)"}}, "click_url"},
		{"data icon", SendPayload{Extras: Extras{Icon: "data:image/png;base64,AA"}}, "icon_url"},
		{"long attach", SendPayload{Extras: Extras{Attach: "https://example.com/" + strings.Repeat("a", MaxURL)}}, "attach_url"},
		{"sequence of 64", SendPayload{Extras: Extras{SequenceID: strings.Repeat("a", 64)}}, ""},
		{"sequence of 65", SendPayload{Extras: Extras{SequenceID: strings.Repeat("a", 65)}}, "sequence_id"},
		{"sequence with dot", SendPayload{Extras: Extras{SequenceID: "a.b"}}, "sequence_id"},
		{"http default", SendPayload{Actions: []Action{httpAction(nil)}}, ""},
		{"http PUT with body", SendPayload{Actions: []Action{httpAction(&HTTPRequest{Method: "put", Body: "x"})}}, ""},
		{"http HEAD with body", SendPayload{Actions: []Action{httpAction(&HTTPRequest{Method: "HEAD", Body: "x"})}}, "no body"},
		{"http CONNECT", SendPayload{Actions: []Action{httpAction(&HTTPRequest{Method: "CONNECT"})}}, "method"},
		{"http body too long", SendPayload{Actions: []Action{httpAction(&HTTPRequest{Body: strings.Repeat("x", MaxRequestBody+1)})}}, "body"},
		{"http header name", SendPayload{Actions: []Action{httpAction(&HTTPRequest{Headers: map[string]string{"a:b": "x"}})}}, "header name"},
		{"http header newline", SendPayload{Actions: []Action{httpAction(&HTTPRequest{Headers: map[string]string{"X-A": "a\r\nb"}})}}, "control"},
		{"http host header", SendPayload{Actions: []Action{httpAction(&HTTPRequest{Headers: map[string]string{"Host": "x"}})}}, "set by Herald"},
		{"http relative url", SendPayload{Actions: []Action{{Type: "http", Label: "Go", Value: "/hook"}}}, "absolute"},
		{"request on a button", SendPayload{Actions: []Action{{Type: "button", Label: "Go", Key: "k", Request: &HTTPRequest{}}}}, "only an http"},
	}
	for _, c := range cases {
		c.p.Title = ptr("t")
		wantInvalid(t, c.name, CheckSend(&c.p), c.want)
	}
}

// TestHTTPActionKeys: http actions without a key get one that no other
// action of the message has, and POST when they name no method.
func TestHTTPActionKeys(t *testing.T) {
	p := SendPayload{Title: ptr("t"), Actions: []Action{
		{Type: "http", Label: "A", Value: "https://example.com/a"},
		{Type: "button", Label: "B", Key: "http"},
		{Type: "http", Label: "C", Value: "https://example.com/c", Request: &HTTPRequest{Method: "delete"}},
	}}
	if err := CheckSend(&p); err != nil {
		t.Fatal(err)
	}
	if got := []string{p.Actions[0].Key, p.Actions[2].Key}; !reflect.DeepEqual(got, []string{"http-2", "http-3"}) {
		t.Errorf("generated keys %v, want [http-2 http-3]", got)
	}
	if got := []string{p.Actions[0].Request.Method, p.Actions[2].Request.Method}; !reflect.DeepEqual(got, []string{"POST", "DELETE"}) {
		t.Errorf("methods %v, want [POST DELETE]", got)
	}
}

// TestCheckDelivery: deliver_at is 10 s to 3 days ahead, and never on a
// message that is not kept.
func TestCheckDelivery(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	for _, c := range []struct {
		name string
		p    SendPayload
		want string
	}{
		{"now", SendPayload{}, ""},
		{"10 s", SendPayload{DeliverAt: at(MinDelay)}, ""},
		{"9 s", SendPayload{DeliverAt: at(MinDelay - time.Second)}, "at least"},
		{"in the past", SendPayload{DeliverAt: at(-time.Hour)}, "at least"},
		{"3 days", SendPayload{DeliverAt: at(MaxDelay)}, ""},
		{"3 days and a second", SendPayload{DeliverAt: at(MaxDelay + time.Second)}, "at most"},
		{"ephemeral", SendPayload{DeliverAt: at(time.Minute), Ephemeral: true}, "not kept"},
	} {
		wantInvalid(t, c.name, checkDelivery(&c.p, now), c.want)
	}
}
