// Package testkit is what Herald's tests share to talk to a server over
// HTTP and to set one up, whatever they test: the handlers in process
// (server), the real binary (process, crash and CLI tests) or the admin UI
// (web). One request helper, one answer type, one set of fixtures.
package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/heraldhq/herald/config"
)

// Response is what a request got back.
type Response struct {
	Status int
	Header http.Header
	Body   map[string]any // the answer, when it is a JSON object
	Raw    []byte
}

// Str returns a top-level string field of the body.
func (r Response) Str(key string) string { s, _ := r.Body[key].(string); return s }

// Call sends a request to url with client c and returns the answer. body
// nil sends none; a string or []byte is sent as it is; anything else as
// JSON. A body goes with Content-Type: application/json, token (when set)
// as a bearer token, and headers as name, value pairs. An answer that is a
// JSON object is decoded into Body. It fails only when the request cannot
// be made or answered, so it is safe from any goroutine.
func Call(c *http.Client, method, url string, body any, token string, headers ...string) (Response, error) {
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			return Response{}, err
		}
		raw = buf
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return Response{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer res.Body.Close()
	reqRaw := raw
	respRaw, err := io.ReadAll(res.Body)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: read body: %w", method, url, err)
	}
	if err := checkCall(req, reqRaw, res, respRaw); err != nil {
		return Response{Status: res.StatusCode, Header: res.Header, Raw: respRaw}, err
	}
	raw = respRaw
	out := Response{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &out.Body); err != nil {
			return out, fmt.Errorf("%s %s: bad JSON %q: %w", method, url, raw, err)
		}
	}
	return out, nil
}

// Do is Call that fails t when the request cannot be made.
func Do(t testing.TB, c *http.Client, method, url string, body any, token string, headers ...string) Response {
	t.Helper()
	r, err := Call(c, method, url, body, token, headers...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// UnlimitedPlans raises both plans' limits so far that no test is rate
// limited unless it sets limits of its own.
func UnlimitedPlans(cfg *config.Config) {
	cfg.Plans.Free = config.Plan{SendPerMinute: 100000, APIPerMinute: 100000}
	cfg.Plans.Pro = config.Plan{SendPerMinute: 100000, APIPerMinute: 100000}
}
