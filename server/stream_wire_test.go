package server

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// TestStreamUnchunked checks the bytes of an HTTP/1.1 stream on the wire:
// the frames as they are, with no chunked framing around each write (which
// costs a formatted chunk header, an allocation and more bytes per event
// for every stream), the end of the stream marked by closing the connection.
func TestStreamUnchunked(t *testing.T) {
	env := newTestEnv(t)
	ann := env.newUser("ann@example.com")
	_, token := streamChannel(env, ann, "ops")

	conn, err := net.Dial("tcp", env.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET /v1/stream HTTP/1.1\r\nHost: herald\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n", ann.Token); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(streamWait)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", res.StatusCode)
	}
	if te := res.TransferEncoding; len(te) != 0 {
		t.Errorf("Transfer-Encoding %v, want none: the frames go out as they are", te)
	}
	if !res.Close {
		t.Errorf("Connection: %q, want close: the end of an unchunked stream is the end of the connection", res.Header.Get("Connection"))
	}

	// The body straight from the connection, not through ReadResponse's
	// decoding: it starts with the stream's first bytes, not a chunk size.
	readUntil := func(end string) string {
		t.Helper()
		var b strings.Builder
		for !strings.HasSuffix(b.String(), end) {
			c, err := br.ReadByte()
			if err != nil {
				t.Fatalf("after %q: %v", b.String(), err)
			}
			b.WriteByte(c)
		}
		return b.String()
	}
	if got, want := readUntil(": connected\n\n"), "retry: 2000\n: connected\n\n"; got != want {
		t.Fatalf("stream starts %q, want %q", got, want)
	}
	if got := readUntil("\n\n"); !strings.HasPrefix(got, "id: ") {
		t.Fatalf("start of stream event %q, want id: N", got)
	}
	id := streamSend(env, token, "Disk full")
	frame := readUntil("\n\n")
	lines := strings.Split(strings.TrimSuffix(frame, "\n\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "id: ") || lines[1] != "event: message.created" ||
		!strings.HasPrefix(lines[2], `data: {"id":"`+id+`"`) {
		t.Fatalf("frame %q, want id, event: message.created and data of message %s, with nothing between", frame, id)
	}
}

// TestStreamHeartbeats: an idle stream gets a heartbeat comment every
// interval, not only once, and events still arrive between them.
func TestStreamHeartbeats(t *testing.T) {
	env := newTestEnv(t)
	env.s.heartbeat.Store(int64(20 * time.Millisecond))
	ann := env.newUser("ann@example.com")
	_, token := streamChannel(env, ann, "ops")
	c := streamOpen(env, ann.Token)
	beats := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := 0
		for _, s := range c.comments {
			if s == "heartbeat" {
				n++
			}
		}
		return n
	}
	waitBeats := func(n int) {
		t.Helper()
		testkit.Eventually(t, streamWait, func() error {
			if got := beats(); got < n {
				return fmt.Errorf("%d heartbeats, want %d", got, n)
			}
			return nil
		})
	}
	waitBeats(3)
	id := streamSend(env, token, "Disk full")
	streamWantEvent(t, c.next(streamWait), "message.created", id)
	waitBeats(beats() + 2)
}
