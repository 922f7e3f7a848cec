package testkit

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Tarpit is a TCP listener on 127.0.0.1 that accepts every connection and
// never answers: no TLS handshake, no HTTP response, until the client
// gives up or the test ends.
type Tarpit struct {
	ln       net.Listener
	accepted atomic.Int64
	mu       sync.Mutex
	conns    []net.Conn
}

// NewTarpit starts a tarpit, closed with its connections at the test's end.
func NewTarpit(t testing.TB) *Tarpit {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tp := &Tarpit{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tp.accepted.Add(1)
			tp.mu.Lock()
			tp.conns = append(tp.conns, c) // held, never read or written
			tp.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		tp.mu.Lock()
		defer tp.mu.Unlock()
		for _, c := range tp.conns {
			c.Close()
		}
	})
	return tp
}

// Addr is the tarpit's "127.0.0.1:port".
func (tp *Tarpit) Addr() string { return tp.ln.Addr().String() }

// Accepted is how many connections it has taken.
func (tp *Tarpit) Accepted() int64 { return tp.accepted.Load() }
