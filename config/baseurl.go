package config

import (
	"net"
	"net/url"
	"strings"
)

// BaseURLFor is the base_url that follows from listen when none is set:
// the scheme Herald serves (https with [tls]), the first ACME domain or
// else the listen host, and the port unless it is the scheme's default. A
// listen address that accepts every interface ("0.0.0.0", "::" or no host)
// names no reachable host, so it gives 127.0.0.1: right on this machine,
// wrong for any other, which is what UnreachableBaseURL reports. A listen
// value that is not host:port gives "", and validation names listen.
func BaseURLFor(listen string, tls TLS) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return ""
	}
	scheme, defaultPort := "http", "80"
	if tls.Enabled() {
		scheme, defaultPort = "https", "443"
	}
	if len(tls.ACMEDomains) > 0 {
		// The CA reaches the name on 443, which is what a browser uses.
		return scheme + "://" + tls.ACMEDomains[0]
	}
	if unspecifiedHost(host) {
		host = "127.0.0.1"
	}
	if port == defaultPort {
		if strings.Contains(host, ":") {
			return scheme + "://[" + host + "]"
		}
		return scheme + "://" + host
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// UnreachableBaseURL reports whether base_url names this machine only
// (a loopback host) while listen accepts connections from other hosts: the
// webhook_url values Herald hands out then work only on the server itself.
// It is the usual slip of a container or a LAN install that sets
// listen = "0.0.0.0:8080" and no base_url.
func (c Config) UnreachableBaseURL() bool {
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil || !unspecifiedHost(host) {
		return false
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// unspecifiedHost reports whether a listen host accepts every interface.
func unspecifiedHost(host string) bool {
	if host == "" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}
