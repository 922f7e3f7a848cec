// Package forwarded finds the client of a request that reached Herald
// through reverse proxies. X-Forwarded-For, X-Forwarded-Proto and RFC 7239
// Forwarded are written by whoever sends the request, so they are believed
// only when the TCP peer is a proxy the operator trusts, and only up to the
// right-most address that is not such a proxy: everything left of it was
// written by the client and may be forged.
package forwarded

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Proxies are the networks of the trusted reverse proxies.
type Proxies struct {
	nets []netip.Prefix
}

// Parse reads CIDRs ("10.0.0.0/8") and single addresses ("127.0.0.1").
func Parse(list []string) (Proxies, error) {
	var p Proxies
	for _, s := range list {
		if pfx, err := netip.ParsePrefix(s); err == nil {
			p.nets = append(p.nets, pfx.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return Proxies{}, fmt.Errorf("forwarded: %q is not a CIDR or an IP address", s)
		}
		a = a.Unmap()
		p.nets = append(p.nets, netip.PrefixFrom(a, a.BitLen()))
	}
	return p, nil
}

// Trusts reports whether a is the address of a trusted proxy.
func (p Proxies) Trusts(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, n := range p.nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// Client returns the address of the request's client and the scheme
// ("http" or "https") it used, as far as the trusted proxies tell; scheme
// is "" when no trusted proxy said. The client is the right-most hop of
// X-Forwarded-For (or, when the request has none, of Forwarded) that is
// not a trusted proxy. A hop that is no address ("unknown", an obfuscated
// name, garbage) ends the walk: the client is then the hop to its right.
// ok is false when the TCP peer is not a trusted proxy: the headers are
// then ignored.
func (p Proxies) Client(r *http.Request) (client netip.Addr, scheme string, ok bool) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !p.Trusts(peer) {
		return netip.Addr{}, "", false
	}
	client = peer.Unmap()
	hops, schemes := xForwarded(r.Header)
	if len(hops) == 0 {
		if fh, fs := rfc7239(r.Header); len(fh) > 0 {
			hops, schemes = fh, fs
		}
	}
	at := -1 // index of the hop taken as the client
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			break
		}
		client, at = a, i
		if !p.Trusts(a) {
			break
		}
	}
	switch {
	case len(schemes) == len(hops) && at >= 0:
		scheme = schemes[at] // Forwarded's proto of that hop, or a matching X-Forwarded-Proto list
	case len(schemes) > 0:
		scheme = schemes[len(schemes)-1] // what the trusted peer itself said
	}
	switch scheme = strings.ToLower(scheme); scheme {
	case "http", "https":
	default:
		scheme = ""
	}
	return client, scheme, true
}

type ctxKey struct{}

// Handler sets r.RemoteAddr to the client's address (the IP alone: a
// forwarded hop carries no port) when the request came through a trusted
// proxy, and remembers the scheme that proxy reported for HTTPS. With no
// trusted proxies it returns next itself.
func (p Proxies) Handler(next http.Handler) http.Handler {
	if len(p.nets) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if client, scheme, ok := p.Client(r); ok {
			r2 := *r
			r2.RemoteAddr = client.String()
			if scheme != "" {
				r2 = *r2.WithContext(context.WithValue(r.Context(), ctxKey{}, scheme))
			}
			r = &r2
		}
		next.ServeHTTP(w, r)
	})
}

// HTTPS reports whether the client reached Herald over HTTPS: what a
// trusted proxy said, if one did (through Handler), else whether this
// connection is TLS.
func HTTPS(r *http.Request) bool {
	if scheme, ok := r.Context().Value(ctxKey{}).(string); ok {
		return scheme == "https"
	}
	return r.TLS != nil
}

// xForwarded is the X-Forwarded-For hops and X-Forwarded-Proto values, in
// order, over all header lines.
func xForwarded(h http.Header) (hops, schemes []string) {
	return splitList(h.Values("X-Forwarded-For")), splitList(h.Values("X-Forwarded-Proto"))
}

func splitList(lines []string) []string {
	var out []string
	for _, line := range lines {
		for _, v := range strings.Split(line, ",") {
			if v = strings.TrimSpace(v); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// parseHop reads one hop: an IP address, with or without a port, IPv6
// with or without brackets.
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}
