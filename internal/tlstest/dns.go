package tlstest

import (
	"encoding/binary"
	"io"
	"net"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// startDNS runs a DNS server on a loopback port that answers every A query
// with 127.0.0.1 and every other query with no records, and returns its
// address. Pebble asks its -dnsserver over TCP only, so that is all it
// serves.
func startDNS(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go serveDNS(conn)
		}
	}()
	return ln.Addr().String()
}

// serveDNS answers the length-prefixed queries of one TCP connection.
func serveDNS(conn net.Conn) {
	defer conn.Close()
	for {
		var n uint16
		if err := binary.Read(conn, binary.BigEndian, &n); err != nil {
			return
		}
		q := make([]byte, n)
		if _, err := io.ReadFull(conn, q); err != nil {
			return
		}
		a, err := answer(q)
		if err != nil {
			return
		}
		out := binary.BigEndian.AppendUint16(nil, uint16(len(a)))
		if _, err := conn.Write(append(out, a...)); err != nil {
			return
		}
	}
}

func answer(query []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if q.Type == dnsmessage.TypeA {
		rh := dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 0}
		if err := b.AResource(rh, dnsmessage.AResource{A: [4]byte{127, 0, 0, 1}}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}
