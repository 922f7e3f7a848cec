package netguard

import (
	"fmt"
	"net/netip"
	"strings"
)

// CheckHost checks the host of a URL a user gives, before anything dials
// it, so that a request the policy is sure to refuse can be refused at
// once: a literal IP address (IPv6 in brackets or not, with or without a
// zone) the policy blocks, or "localhost" and its subdomains (RFC 6761:
// always loopback) when the policy blocks both 127.0.0.1 and ::1. Any
// other name resolves later and is checked at dial time; CheckHost lets it
// pass.
func (p Policy) CheckHost(host string) error {
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		v4, v6 := p.match(netip.AddrFrom4([4]byte{127, 0, 0, 1})), p.match(netip.IPv6Loopback())
		if v4 == nil || v6 == nil {
			return nil // the dial may take the address that is allowed
		}
		v4.Host = host
		return v4
	}
	ip, err := netip.ParseAddr(h)
	if err != nil {
		return nil
	}
	if err := p.Check(ip); err != nil {
		e := err.(*BlockedError)
		e.Host = host
		return e
	}
	return nil
}

// Explain says, for the person who chose the address, why the call was
// refused and which setting would change that; calls names what was
// refused ("callbacks"). It names the address only when it is a loopback
// one, or when the person wrote it themselves (Host): what a name resolved
// to in a private or listed network would map the networks behind Herald
// for whoever can choose a callback URL.
func (e *BlockedError) Explain(calls string) string {
	addr := e.Host
	if addr == "" {
		addr = e.Addr.String()
	}
	switch e.Rule {
	case ruleLoopback:
		return fmt.Sprintf("%s is a loopback address; set delivery.allow_loopback = true to allow %s to this host", addr, calls)
	case rulePrivate:
		if e.Host == "" {
			addr = "the address"
		}
		return fmt.Sprintf("%s is in a private network, which delivery.block_private = true refuses to %s", addr, calls)
	case ruleListed:
		if e.Host == "" {
			addr = "the address"
		}
		return fmt.Sprintf("%s is in delivery.blocked_networks, which %s may not reach", addr, calls)
	}
	if e.Host == "" {
		addr = "the address"
	}
	return fmt.Sprintf("%s is unspecified, link-local or a cloud metadata service, which %s never reach", addr, calls)
}
