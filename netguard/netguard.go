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

// Policy says which addresses a guarded call may not connect to.
type Policy struct {
	Blocked []netip.Prefix // refused networks
}

// BlockedError is a dial refused because the address is in a blocked network.
type BlockedError struct {
	Addr    netip.Addr
	Network netip.Prefix
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("address %s is in blocked network %s (delivery.blocked_networks)", e.Addr, e.Network)
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
	for _, n := range p.Blocked {
		if n.Contains(ip) {
			return &BlockedError{Addr: ip, Network: n}
		}
	}
	return nil
}

// checkAddr checks the "ip:port" a dialer is about to connect to.
func (p Policy) checkAddr(address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("netguard: unexpected dial address %q: %w", address, err)
	}
	return p.Check(ap.Addr())
}

// Transport returns an HTTP transport whose dialer refuses what p blocks.
// The check runs in the dialer's Control hook on the IP actually being
// connected to, after DNS resolution, so a name that resolves (or
// re-resolves) to a blocked address cannot get through.
func (p Policy) Transport(timeout time.Duration) *http.Transport {
	dialer := &net.Dialer{
		Timeout:   min(timeout, 10*time.Second),
		KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			return p.checkAddr(address)
		},
	}
	return &http.Transport{
		Proxy:                 nil, // a proxy would dial on our behalf and bypass the check
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   min(timeout, 10*time.Second),
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: time.Second,
	}
}

// Client returns an HTTP client over p's Transport that follows no
// redirects: a 3xx is returned as the answer. A followed redirect would be a
// second request the user chose the target of, and the caller could not see
// where it went.
func (p Policy) Client(timeout time.Duration) *http.Client {
	return &http.Client{
		Transport:     p.Transport(timeout),
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
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
