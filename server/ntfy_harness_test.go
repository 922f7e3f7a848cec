package server

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// ntfyBasic is the Authorization value of Basic user:pass.
func ntfyBasic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// ntfyLine is one JSON line of an ntfy subscription.
type ntfyLine map[string]any

func (l ntfyLine) str(k string) string { s, _ := l[k].(string); return s }

// actions returns the line's actions.
func (l ntfyLine) actions() []map[string]any {
	var out []map[string]any
	as, _ := l["actions"].([]any)
	for _, a := range as {
		out = append(out, a.(map[string]any))
	}
	return out
}

// ntfyStream reads an ntfy JSON stream on its own goroutine.
type ntfyStream struct {
	t      testing.TB
	res    *http.Response
	cancel context.CancelFunc
	lines  chan ntfyLine
	done   chan struct{}
}

// ntfyOpen opens GET path with the Authorization value auth (none when
// "") and extra header pairs, and wants a 200; it closes when the test
// ends.
func ntfyOpen(e *testEnv, path, auth string, headers ...string) *ntfyStream {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		e.t.Fatalf("GET %s: status %d, want 200: %s", path, res.StatusCode, b)
	}
	c := &ntfyStream{t: e.t, res: res, cancel: cancel, lines: make(chan ntfyLine, 100), done: make(chan struct{})}
	go c.read(res.Body)
	e.t.Cleanup(c.close)
	return c
}

func (c *ntfyStream) read(body io.Reader) {
	defer close(c.done)
	defer close(c.lines)
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var l ntfyLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			c.t.Errorf("line %q is not a JSON object: %v", sc.Text(), err)
			return
		}
		c.lines <- l
	}
}

func (c *ntfyStream) close() {
	c.cancel()
	c.res.Body.Close()
	<-c.done
}

// next returns the next line that is not a keepalive.
func (c *ntfyStream) next() ntfyLine {
	c.t.Helper()
	timeout := time.After(streamWait)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				c.t.Fatal("the stream ended")
			}
			if l.str("event") != "keepalive" {
				return l
			}
		case <-timeout:
			c.t.Fatal("no line in time")
		}
	}
}

// ended waits for the stream to end, skipping keepalives.
func (c *ntfyStream) ended() {
	c.t.Helper()
	timeout := time.After(streamWait)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				return
			}
			if e := l.str("event"); e != "keepalive" {
				c.t.Fatalf("got a %s line, want the stream to end", e)
			}
		case <-timeout:
			c.t.Fatal("the stream did not end")
		}
	}
}

// ntfyGet sends GET path with the Authorization value auth (none when
// "") and header pairs, outside testkit's contract check: ntfy's doors are
// ntfy's API, not Herald's.
func ntfyGet(e *testEnv, path, auth string, headers ...string) (int, http.Header, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

// ntfyPoll reads GET path (a poll: it ends) as lines.
func ntfyPoll(e *testEnv, path, auth string) []ntfyLine {
	e.t.Helper()
	status, _, body := ntfyGet(e, path, auth)
	if status != http.StatusOK {
		e.t.Fatalf("GET %s: status %d: %s", path, status, body)
	}
	var out []ntfyLine
	for _, s := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		if s == "" {
			continue
		}
		var l ntfyLine
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			e.t.Fatalf("line %q: %v", s, err)
		}
		out = append(out, l)
	}
	return out
}

// wantLine checks a line's event and sequence id.
func wantLine(t *testing.T, l ntfyLine, event, seq string) {
	t.Helper()
	if l.str("event") != event || l.str("sequence_id") != seq {
		t.Fatalf("got %v, want a %s line of sequence %s", l, event, seq)
	}
}
