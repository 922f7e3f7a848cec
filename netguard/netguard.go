// Package netguard keeps the outbound calls Herald makes on a user's behalf
// (callbacks to callback_url, Web Push to a browser's endpoint) away from
// networks they must not reach. The check runs at dial time, on the IP
// actually being connected to, so no URL, DNS name or redirect can get
// around it.
package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Policy says which addresses a guarded call may not connect to. Its zero
// value is the safe default: every built-in network but the private ranges
// is refused. The rule, checked on the IP being dialled:
//
//   - always refused: the unspecified addresses (0.0.0.0/8, ::/128),
//     link-local (169.254.0.0/16, fe80::/10) and the cloud metadata
//     services (169.254.169.254 is link-local; fd00:ec2::254,
//     100.100.100.200);
//   - loopback (127.0.0.0/8, ::1/128) is refused unless AllowLoopback;
//   - private ranges (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16,
//     100.64.0.0/10, fc00::/7) are refused only with BlockPrivate;
//   - every network in Blocked is refused as well. The list only adds:
//     nothing in it can lift a built-in block, and AllowLoopback does not
//     lift a loopback network listed there.
//
// An IPv6 address that carries an IPv4 address (IPv4-mapped ::ffff:0:0/96,
// NAT64 64:ff9b::/96, 6to4 2002::/16, IPv4-compatible ::/96) is refused when
// the IPv4 address it carries would be.
type Policy struct {
	Blocked       []netip.Prefix // the operator's own networks, refused on top of the built-in ones
	AllowLoopback bool           // let calls reach loopback, for receivers on the same host
	BlockPrivate  bool           // refuse the private ranges too, for instances shared with strangers
}

// The built-in networks (see Policy).
var (
	alwaysBlocked = mustPrefixes("0.0.0.0/8", "::/128", "169.254.0.0/16", "fe80::/10",
		"fd00:ec2::254/128", "100.100.100.200/32")
	loopback = mustPrefixes("127.0.0.0/8", "::1/128")
	private  = mustPrefixes("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7")

	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	v4compat  = netip.MustParsePrefix("::/96")
)

// BlockedError is a dial refused because the address is in a blocked network.
type BlockedError struct {
	Addr     netip.Addr   // the address dialled
	Embedded netip.Addr   // the IPv4 address Addr carries, when that is what was refused
	Network  netip.Prefix // the network that refused it
	Rule     string       // which part of the policy: built-in, loopback, private or blocked_networks
	Host     string       // the host as a URL named it, when CheckHost refused it
}

// The Rule of a BlockedError.
const (
	ruleBuiltIn  = "built-in"
	ruleLoopback = "loopback; delivery.allow_loopback"
	rulePrivate  = "private; delivery.block_private"
	ruleListed   = "delivery.blocked_networks"
)

func (e *BlockedError) Error() string {
	addr := e.Addr.String()
	if e.Embedded.IsValid() {
		addr += " (carrying " + e.Embedded.String() + ")"
	}
	return fmt.Sprintf("address %s is in blocked network %s (%s)", addr, e.Network, e.Rule)
}

// IsBlocked reports whether err is, or wraps, a dial refused by a Policy.
func IsBlocked(err error) bool {
	var be *BlockedError
	return errors.As(err, &be)
}

// Check returns a *BlockedError if ip may not be reached.
func (p Policy) Check(ip netip.Addr) error {
	// Unmap so ::ffff:127.0.0.1 meets 127.0.0.0/8; drop the zone because
	// Prefix.Contains is false for any zoned address (fe80::1%eth0 would
	// otherwise pass fe80::/10).
	ip = ip.Unmap().WithZone("")
	if e := p.match(ip); e != nil {
		return e
	}
	if v4, ok := embeddedIPv4(ip); ok {
		if e := p.match(v4); e != nil {
			e.Addr, e.Embedded = ip, v4
			return e
		}
	}
	return nil
}

func (p Policy) match(ip netip.Addr) *BlockedError {
	lists := []struct {
		nets []netip.Prefix
		on   bool
		rule string
	}{
		{alwaysBlocked, true, ruleBuiltIn},
		{loopback, !p.AllowLoopback, ruleLoopback},
		{private, p.BlockPrivate, rulePrivate},
		{p.Blocked, true, ruleListed},
	}
	for _, l := range lists {
		if !l.on {
			continue
		}
		for _, n := range l.nets {
			if n.Contains(ip) {
				return &BlockedError{Addr: ip, Network: n, Rule: l.rule}
			}
		}
	}
	return nil
}

// embeddedIPv4 returns the IPv4 address an IPv6 address carries by one of
// the translation or tunnelling schemes a host may route, if any. A dial to
// 64:ff9b::7f00:1 through a NAT64 gateway is a dial to 127.0.0.1 there.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() {
		return netip.Addr{}, false
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	case v4compat.Contains(ip) && ip != netip.IPv6Unspecified() && ip != netip.IPv6Loopback():
		return netip.AddrFrom4([4]byte(b[12:16])), true
	}
	return netip.Addr{}, false
}

// checkAddr checks the "ip:port" a dialer is about to connect to.
func (p Policy) checkAddr(address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("netguard: unexpected dial address %q: %w", address, err)
	}
	return p.Check(ap.Addr())
}

// The stages of a guarded call have bounds of their own, well inside a
// whole attempt's: an address that accepts a connection and never answers
// (a tarpit) holds a worker for seconds, not for the attempt's timeout.
const (
	ConnectTimeout   = 3 * time.Second // the TCP connection
	HandshakeTimeout = 5 * time.Second // the TLS handshake
	FirstByteTimeout = 5 * time.Second // from the request sent to the answer's headers
)

// Limits bound a guarded call. A zero stage takes its default above, and no
// stage is longer than Total, the whole call with the answer's body.
type Limits struct {
	Connect, Handshake, FirstByte time.Duration
	Total                         time.Duration
}

func (l Limits) resolved() Limits {
	stage := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			d = def
		}
		if l.Total > 0 {
			d = min(d, l.Total)
		}
		return d
	}
	l.Connect = stage(l.Connect, ConnectTimeout)
	l.Handshake = stage(l.Handshake, HandshakeTimeout)
	l.FirstByte = stage(l.FirstByte, FirstByteTimeout)
	return l
}

// Transport returns an HTTP transport whose dialer refuses what p blocks,
// with the default bounds of each stage within timeout (TransportWith).
func (p Policy) Transport(timeout time.Duration) *http.Transport {
	return p.TransportWith(Limits{Total: timeout})
}

// TransportWith returns an HTTP transport whose dialer refuses what p
// blocks and whose stages end within l. The check runs in the dialer's
// Control hook on the IP actually being connected to, after DNS
// resolution, so a name that resolves (or re-resolves) to a blocked
// address cannot get through.
func (p Policy) TransportWith(l Limits) *http.Transport {
	l = l.resolved()
	return &http.Transport{
		Proxy:                 nil, // a proxy would dial on our behalf and bypass the check
		DialContext:           p.dialer(l.Connect).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   l.Handshake,
		ResponseHeaderTimeout: l.FirstByte,
		ExpectContinueTimeout: time.Second,
	}
}

// dialer connects only where p allows, giving up on a connection after
// connect.
func (p Policy) dialer(connect time.Duration) *net.Dialer {
	return &net.Dialer{
		Timeout:   connect,
		KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			return p.checkAddr(address)
		},
	}
}

// Client returns ClientWith the default bounds of each stage within
// timeout, the whole call's.
func (p Policy) Client(timeout time.Duration) *http.Client {
	return p.ClientWith(Limits{Total: timeout})
}

// ClientWith returns an HTTP client over p's TransportWith(l) that follows
// no redirects: a 3xx is returned as the answer. A followed redirect would
// be a second request the user chose the target of, and the caller could
// not see where it went.
func (p Policy) ClientWith(l Limits) *http.Client {
	return &http.Client{
		Transport:     p.TransportWith(l),
		Timeout:       l.Total,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func mustPrefixes(cidrs ...string) []netip.Prefix {
	out, err := ParsePrefixes(cidrs)
	if err != nil {
		panic(err)
	}
	return out
}

// ParsePrefixes parses CIDR strings (validated already by config).
func ParsePrefixes(cidrs []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(cidrs))
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, fmt.Errorf("netguard: blocked network %q: %w", c, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
