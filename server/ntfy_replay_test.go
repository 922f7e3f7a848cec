package server

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/ntfy"
)

// The ntfy Android app's calls (ntfy-android 1.25: util/Util.kt builds the
// URLs, util/HttpUtil.kt the requests, OkHttp adds the rest), replayed
// byte for byte on a raw connection.

// androidUA is the app's User-Agent.
const androidUA = "ntfy/1.25.0 (fdroid; Android 14; SDK 34)"

// androidRequest writes the app's GET of target with auth and returns the
// answer, whose body the caller reads.
func androidRequest(t *testing.T, e *testEnv, target, auth string) (*http.Response, net.Conn) {
	t.Helper()
	host := strings.TrimPrefix(e.srv.URL, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	req := "GET " + target + " HTTP/1.1\r\n" +
		"User-Agent: " + androidUA + "\r\n" +
		"Authorization: " + auth + "\r\n" +
		"Host: " + host + "\r\n" +
		"Connection: Keep-Alive\r\n" +
		"Accept-Encoding: gzip\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res, conn
}

// lineReader reads JSON lines from r on its own goroutine.
func lineReader(t *testing.T, r io.Reader) <-chan ntfyLine {
	out := make(chan ntfyLine, 100)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var l ntfyLine
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				t.Errorf("line %q is not JSON", sc.Text())
				return
			}
			if l.str("event") != ntfy.EventKeepalive {
				out <- l
			}
		}
	}()
	return out
}

func nextLine(t *testing.T, lines <-chan ntfyLine) ntfyLine {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatal("the stream ended")
		}
		return l
	case <-time.After(streamWait):
		t.Fatal("no line in time")
	}
	return nil
}

// TestNtfyAndroidApp replays the app: adding the subscription (auth), the
// periodic poll, the long-lived JSON stream resumed with since=<the last
// id>, and a WebSocket, with the user's email and password.
func TestNtfyAndroidApp(t *testing.T) {
	t.Parallel()
	f := ntfySetup(t)
	env := f.env
	first := streamSend(env, f.token, "first")

	res, _ := androidRequest(t, env, "/"+f.token+"/auth", f.auth)
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || strings.TrimSpace(string(body)) != `{"success":true}` {
		t.Fatalf("auth: %d %s", res.StatusCode, body)
	}

	res, _ = androidRequest(t, env, "/"+f.token+"/json?poll=1&since=all", f.auth)
	polled := lineReader(t, res.Body)
	l := nextLine(t, polled)
	wantLine(t, l, ntfy.EventMessage, first)
	if _, ok := <-polled; ok || res.Header.Get("Content-Type") != "application/x-ndjson; charset=utf-8" {
		t.Fatalf("poll: more than one line, or Content-Type %q", res.Header.Get("Content-Type"))
	}
	lastID := l.str("id")

	// Sent while the app was away: the stream resumes after lastID.
	missed := streamSend(env, f.token, "missed")
	res, conn := androidRequest(t, env, "/"+f.token+"/json?since="+lastID, f.auth)
	if res.StatusCode != 200 {
		t.Fatalf("stream: %d", res.StatusCode)
	}
	lines := lineReader(t, res.Body)
	if open := nextLine(t, lines); open.str("event") != ntfy.EventOpen || open.str("topic") != f.token {
		t.Fatalf("first line %v, want open", open)
	}
	wantLine(t, nextLine(t, lines), ntfy.EventMessage, missed)
	live := streamSend(env, f.token, "live")
	wantLine(t, nextLine(t, lines), ntfy.EventMessage, live)
	conn.Close()

	// The WebSocket, as the app opens it (Authorization header) and as a
	// browser does (?auth=).
	raw := base64.RawURLEncoding.EncodeToString([]byte(f.auth))
	for name, dial := range map[string]struct {
		path   string
		header http.Header
	}{
		"header": {"/" + f.token + "/ws?since=none", http.Header{"Authorization": {f.auth}, "User-Agent": {androidUA}}},
		"query":  {"/" + f.token + "/ws?since=none&auth=" + raw, nil},
	} {
		t.Run("ws "+name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), streamWait)
			defer cancel()
			c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(env.srv.URL, "http")+dial.path,
				&websocket.DialOptions{HTTPHeader: dial.header})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			read := func() ntfyLine {
				for {
					_, b, err := c.Read(ctx)
					if err != nil {
						t.Fatal(err)
					}
					var l ntfyLine
					if err := json.Unmarshal(b, &l); err != nil {
						t.Fatal(err)
					}
					if l.str("event") != ntfy.EventKeepalive {
						return l
					}
				}
			}
			if open := read(); open.str("event") != ntfy.EventOpen {
				t.Fatalf("first message %v, want open", open)
			}
			id := streamSend(env, f.token, "over ws "+name)
			wantLine(t, read(), ntfy.EventMessage, id)
		})
	}
	if _, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(env.srv.URL, "http")+"/"+f.token+"/ws", nil); err == nil ||
		!strings.Contains(err.Error(), "401") {
		t.Fatalf("a WebSocket without credential: %v, want 401", err)
	}
}

// TestNtfyAcrossReplicas: a subscription on one server gets what another
// server on the same PostgreSQL database commits, and resumes there with
// since=<the last id> without loss or repeats.
func TestNtfyAcrossReplicas(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	dsns.Store(filepath.Join(dir, "herald.db"), dsn)
	a, _ := openTestEnv(t, dir, nil)
	b, _ := openTestEnv(t, dir, nil)
	ann := a.newUser("ann@example.com")
	_, token := streamChannel(a, ann, "ops")
	auth := ntfyBasic(ann.Email, ann.Password)

	onA := ntfyOpen(a, "/"+token+"/json", auth)
	onA.next() // open
	var last string
	for i := range 3 {
		id := streamSend(b, token, fmt.Sprintf("from b %d", i))
		l := onA.next()
		wantLine(t, l, ntfy.EventMessage, id)
		last = l.str("id")
	}
	onA.close()
	var missed []string
	for i := range 3 {
		missed = append(missed, streamSend(a, token, fmt.Sprintf("while away %d", i)))
	}
	onB := ntfyOpen(b, "/"+token+"/json?since="+last, auth)
	onB.next() // open
	for _, id := range missed {
		wantLine(t, onB.next(), ntfy.EventMessage, id)
	}
	id := streamSend(a, token, "live again")
	wantLine(t, onB.next(), ntfy.EventMessage, id)
}
