package netguard

import (
	"net/netip"
	"testing"
)

// TestCheckHost: a URL's host is refused before any dial when it is a
// literal address the policy blocks, or localhost while loopback is
// blocked; every other name is left to the dial-time check.
func TestCheckHost(t *testing.T) {
	listed, err := ParsePrefixes([]string{"203.0.113.0/24", "127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	var (
		byDefault    = Policy{}
		withLoopback = Policy{AllowLoopback: true}
		shared       = Policy{BlockPrivate: true}
		operators    = Policy{Blocked: listed, AllowLoopback: true}
	)
	for _, tt := range []struct {
		policy Policy
		host   string
		rule   string // "" = let through
	}{
		{byDefault, "127.0.0.1", ruleLoopback},
		{byDefault, "127.3.2.1", ruleLoopback},
		{byDefault, "[::1]", ruleLoopback},
		{byDefault, "::1", ruleLoopback},
		{byDefault, "[::ffff:127.0.0.1]", ruleLoopback},
		{byDefault, "localhost", ruleLoopback},
		{byDefault, "LocalHost.", ruleLoopback},
		{byDefault, "app.localhost", ruleLoopback},
		{byDefault, "0.0.0.0", ruleBuiltIn},
		{byDefault, "169.254.169.254", ruleBuiltIn},
		{byDefault, "[fe80::1%25eth0]", ruleBuiltIn},
		{byDefault, "10.0.0.5", ""},
		{byDefault, "203.0.113.9", ""},
		{byDefault, "example.com", ""},
		{byDefault, "localhost.example.com", ""},
		{byDefault, "notlocalhost", ""},
		{byDefault, "", ""},
		{withLoopback, "127.0.0.1", ""},
		{withLoopback, "localhost", ""},
		{withLoopback, "[::1]", ""},
		{withLoopback, "0.0.0.0", ruleBuiltIn},
		{shared, "10.0.0.5", rulePrivate},
		{shared, "[fd00::1]", rulePrivate},
		{operators, "203.0.113.9", ruleListed},
		{operators, "127.0.0.1", ruleListed},
		{operators, "localhost", ""}, // ::1 is still allowed: the dial decides
		{operators, "[::1]", ""},
	} {
		err := tt.policy.CheckHost(tt.host)
		var got string
		if err != nil {
			be, ok := err.(*BlockedError)
			if !ok {
				t.Fatalf("%+v.CheckHost(%q) = %T %v, want a *BlockedError", tt.policy, tt.host, err, err)
			}
			got = be.Rule
			if be.Host != tt.host {
				t.Errorf("CheckHost(%q): Host = %q, want the host as given", tt.host, be.Host)
			}
		}
		if got != tt.rule {
			t.Errorf("%+v.CheckHost(%q) = %v, want rule %q", tt.policy, tt.host, err, tt.rule)
		}
	}
}

// TestExplain: what the person who chose the address reads. A loopback
// address is named with the setting that allows it; an address resolved
// from a name in a private or listed network is not named, an address the
// person wrote is.
func TestExplain(t *testing.T) {
	dialled := func(p Policy, addr string) *BlockedError {
		t.Helper()
		err := p.Check(netip.MustParseAddr(addr))
		if err == nil {
			t.Fatalf("%s is allowed", addr)
		}
		return err.(*BlockedError)
	}
	written := func(p Policy, host string) *BlockedError {
		t.Helper()
		err := p.CheckHost(host)
		if err == nil {
			t.Fatalf("%s is allowed", host)
		}
		return err.(*BlockedError)
	}
	listed := Policy{Blocked: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}}
	for _, tt := range []struct {
		e    *BlockedError
		want string
	}{
		{dialled(Policy{}, "127.0.0.1"), "127.0.0.1 is a loopback address; set delivery.allow_loopback = true to allow callbacks to this host"},
		{written(Policy{}, "localhost"), "localhost is a loopback address; set delivery.allow_loopback = true to allow callbacks to this host"},
		{dialled(Policy{BlockPrivate: true}, "10.1.2.3"), "the address is in a private network, which delivery.block_private = true refuses to callbacks"},
		{written(Policy{BlockPrivate: true}, "10.1.2.3"), "10.1.2.3 is in a private network, which delivery.block_private = true refuses to callbacks"},
		{dialled(listed, "203.0.113.7"), "the address is in delivery.blocked_networks, which callbacks may not reach"},
		{written(listed, "203.0.113.7"), "203.0.113.7 is in delivery.blocked_networks, which callbacks may not reach"},
		{dialled(Policy{}, "169.254.169.254"), "the address is unspecified, link-local or a cloud metadata service, which callbacks never reach"},
		{written(Policy{}, "0.0.0.0"), "0.0.0.0 is unspecified, link-local or a cloud metadata service, which callbacks never reach"},
	} {
		if got := tt.e.Explain("callbacks"); got != tt.want {
			t.Errorf("Explain = %q\n          want %q", got, tt.want)
		}
	}
}
