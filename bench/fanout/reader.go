package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The streams are read by one goroutine over epoll, not one goroutine per
// stream through net/http: on a 2-core machine shared with Herald, the
// generator's own CPU is part of the latency it measures, and a goroutine
// per stream costs a wake-up, a parse through the chunked reader and an
// extra read that finds nothing, per event per stream. Each read takes
// whatever a stream has, and its events are timed once, when it returns.

// recorder counts events and keeps each stream's latencies.
type recorder struct {
	// ntfy: the streams are ntfy JSON subscriptions (GET /<token>/json),
	// not GET /v1/stream.
	ntfy        bool
	delivered   atomic.Int64
	closedEarly atomic.Int64
	epfd        int

	mu      sync.Mutex
	streams map[int32]*stream // open ones, by file descriptor
	all     []*stream
}

func newRecorder(ntfy bool) (*recorder, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	return &recorder{ntfy: ntfy, epfd: epfd, streams: map[int32]*stream{}}, nil
}

// stream is one open stream: its connection and the state of its parse.
type stream struct {
	conn    net.Conn
	fd      int
	chunked bool // the body is chunked: size lines, data, CRLFs
	left    int  // data bytes left in the current chunk; -1: a size line is next, -2: the end
	crlf    int  // bytes of the CRLF after a chunk's data still to skip
	size    []byte
	line    []byte // the start of a line the last read did not finish
	conn0   bool   // ": connected" (ntfy: the open event) seen
	lat     []time.Duration
}

var (
	titleMark = []byte(`"title":"fanout `)
	dataMark  = []byte("data: ")
	connMark  = []byte(": connected")
	openMark  = []byte(`"event":"open"`)
)

// open connects stream i of user u and waits for ": connected" (ntfy:
// the open event). An ntfy stream signs in as the ntfy app does for an
// account without a password: Basic with the API key as the password; a
// user whose key is "-" (an ntfy server's anonymous topic) sends none.
func (r *recorder) open(base string, u user, i int) error {
	conn, err := net.Dial("tcp", base)
	if err != nil {
		return err
	}
	fail := func(err error) error { conn.Close(); return fmt.Errorf("stream %d: %w", i, err) }
	req := fmt.Sprintf("GET /v1/stream HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n", base, u.key)
	if r.ntfy {
		auth := ""
		if u.key != "-" {
			auth = "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(":"+u.key)) + "\r\n"
		}
		req = fmt.Sprintf("GET /%s/json HTTP/1.1\r\nHost: %s\r\n%s\r\n", u.token, base, auth)
	}
	if _, err := io.WriteString(conn, req); err != nil {
		return fail(err)
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		return fail(err)
	}
	if res.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("status %d", res.StatusCode))
	}
	s := &stream{conn: conn, chunked: slices.Contains(res.TransferEncoding, "chunked"), left: -1}
	// A read buffer larger than br's takes what br holds, then reads past
	// it, so once connected br holds nothing more.
	buf := make([]byte, 64<<10)
	for !s.conn0 {
		n, err := br.Read(buf)
		if err != nil {
			return fail(err)
		}
		r.feed(s, buf[:n], time.Now())
	}
	raw, err := conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		return fail(err)
	}
	if err := raw.Control(func(fd uintptr) { s.fd = int(fd) }); err != nil {
		return fail(err)
	}
	r.mu.Lock()
	r.streams[int32(s.fd)] = s
	r.all = append(r.all, s)
	r.mu.Unlock()
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(s.fd)}
	if err := syscall.EpollCtl(r.epfd, syscall.EPOLL_CTL_ADD, s.fd, &ev); err != nil {
		return fail(fmt.Errorf("epoll add: %w", err))
	}
	return nil
}

// read reads every stream that has data until stop is closed.
func (r *recorder) read(stop <-chan struct{}) {
	events := make([]syscall.EpollEvent, 256)
	buf := make([]byte, 64<<10)
	for {
		select {
		case <-stop:
			return
		default:
		}
		n, err := syscall.EpollWait(r.epfd, events, 50)
		if err != nil && !errors.Is(err, syscall.EINTR) {
			return
		}
		for _, ev := range events[:max(n, 0)] {
			r.mu.Lock()
			s := r.streams[ev.Fd]
			r.mu.Unlock()
			if s == nil {
				continue
			}
			m, err := syscall.Read(s.fd, buf)
			at := time.Now()
			switch {
			case m > 0:
				r.feed(s, buf[:m], at)
			case errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR):
			default: // the server closed the stream
				r.closedEarly.Add(1)
				_ = syscall.EpollCtl(r.epfd, syscall.EPOLL_CTL_DEL, s.fd, nil)
				r.mu.Lock()
				delete(r.streams, ev.Fd)
				r.mu.Unlock()
			}
		}
	}
}

// close closes every stream.
func (r *recorder) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.streams {
		s.conn.Close()
	}
	syscall.Close(r.epfd)
}

// feed parses bytes read from s at time at: the chunked framing, if any,
// then the stream's lines.
func (r *recorder) feed(s *stream, p []byte, at time.Time) {
	if !s.chunked {
		r.body(s, p, at)
		return
	}
	for len(p) > 0 {
		switch {
		case s.crlf > 0:
			p = p[1:]
			if s.crlf--; s.crlf == 0 {
				s.left = -1
			}
		case s.left == -1: // a size line
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				s.size = append(s.size, p...)
				return
			}
			s.size = append(s.size, p[:i]...)
			p = p[i+1:]
			hex, _, _ := bytes.Cut(bytes.TrimRight(s.size, "\r"), []byte(";"))
			n, err := strconv.ParseInt(string(hex), 16, 64)
			s.size = s.size[:0]
			if err != nil || n == 0 {
				s.left = -2 // the end, or not a size: nothing more is parsed
				return
			}
			s.left = int(n)
		case s.left > 0:
			k := min(s.left, len(p))
			r.body(s, p[:k], at)
			p = p[k:]
			s.left -= k
			if s.left == 0 {
				s.crlf = 2
			}
		default:
			return
		}
	}
}

// body takes the stream's own bytes and records each message.created.
func (r *recorder) body(s *stream, p []byte, at time.Time) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.line = append(s.line, p...)
			return
		}
		line := p[:i]
		if len(s.line) > 0 {
			s.line = append(s.line, line...)
			line = s.line
		}
		r.line(s, line, at)
		s.line = s.line[:0]
		p = p[i+1:]
	}
}

func (r *recorder) line(s *stream, line []byte, at time.Time) {
	if bytes.HasPrefix(line, connMark) || (r.ntfy && bytes.Contains(line, openMark)) {
		s.conn0 = true
		return
	}
	if !r.ntfy && !bytes.HasPrefix(line, dataMark) {
		return
	}
	j := bytes.Index(line, titleMark)
	if j < 0 {
		return
	}
	// "fanout K STAMP"
	rest := line[j+len(titleMark):]
	sp := bytes.IndexByte(rest, ' ')
	if sp < 0 {
		return
	}
	rest = rest[sp+1:]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return
	}
	sent, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	if err != nil {
		return
	}
	r.delivered.Add(1)
	s.lat = append(s.lat, at.Sub(time.Unix(0, sent)))
}

// latencies returns every stream's latencies, sorted; call it once read
// has returned.
func (r *recorder) latencies() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Duration
	for _, s := range r.all {
		out = append(out, s.lat...)
	}
	slices.Sort(out)
	return out
}
