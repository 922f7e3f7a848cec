package delivery

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// BlockedError is a dial refused because the address is in a blocked network.
type BlockedError struct {
	Addr    netip.Addr
	Network netip.Prefix
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("callback address %s is in blocked network %s (delivery.blocked_networks)", e.Addr, e.Network)
}

// NewTransport returns an HTTP transport whose dialer refuses blocked
// networks. The check runs in the dialer's Control hook on the IP actually
// being connected to, after DNS resolution, so a name that resolves (or
// re-resolves) to a blocked address cannot get through.
func NewTransport(blocked []netip.Prefix, timeout time.Duration) *http.Transport {
	dialer := &net.Dialer{
		Timeout:   min(timeout, 10*time.Second),
		KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			return checkAddr(blocked, address)
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

func checkAddr(blocked []netip.Prefix, address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("delivery: unexpected dial address %q: %w", address, err)
	}
	// Unmap so ::ffff:127.0.0.1 meets 127.0.0.0/8; drop the zone because
	// Prefix.Contains is false for any zoned address (fe80::1%eth0 would
	// otherwise pass fe80::/10).
	ip := ap.Addr().Unmap().WithZone("")
	for _, p := range blocked {
		if p.Contains(ip) {
			return &BlockedError{Addr: ip, Network: p}
		}
	}
	return nil
}

// ParsePrefixes parses CIDR strings (validated already by config).
func ParsePrefixes(cidrs []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(cidrs))
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, fmt.Errorf("delivery: blocked network %q: %w", c, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
