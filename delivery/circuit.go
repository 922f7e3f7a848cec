package delivery

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/heraldhq/herald/netguard"
)

// How a host that keeps not answering is given a rest: after hostFailures
// attempts in a row that timed out or could not connect, attempts to it are
// deferred for hostRestBase, then for twice as long after each probe that
// fails again, up to hostRestMax. One attempt (the probe) goes through when
// a rest ends; an answer of any kind ends the rest.
const (
	hostFailures = 3
	hostRestBase = 30 * time.Second
	hostRestMax  = 10 * time.Minute
	// hostsTracked bounds the memory: past it, hosts whose record shows no
	// rest are forgotten, and new ones are not tracked until there is room.
	hostsTracked = 10000
)

// hostOutcome is what an attempt told of its host.
type hostOutcome int

const (
	hostAnswered    hostOutcome = iota // it answered, whatever it said
	hostUnreachable                    // timed out, refused or reset before an answer
	hostUnknown                        // the attempt said nothing of the host (cut short, blocked)
)

// circuit keeps, in memory, the hosts that keep not answering, so that
// their jobs are deferred instead of each holding a worker until it times
// out. One host's record never affects another's. Safe for concurrent use.
type circuit struct {
	now   func() time.Time
	mu    sync.Mutex
	hosts map[string]*hostState
}

type hostState struct {
	fails   int           // attempts in a row that got no answer
	rest    time.Duration // the current rest; 0 while the host is not resting
	until   time.Time     // end of the rest
	probing bool          // the attempt that ends the rest is in flight
}

func newCircuit(now func() time.Time) *circuit {
	return &circuit{now: now, hosts: map[string]*hostState{}}
}

// allow reports whether an attempt to host may go now. When it may not, it
// returns when to try again. An allowed attempt must be followed by done.
func (c *circuit) allow(host string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.hosts[host]
	if st == nil || st.rest == 0 {
		return time.Time{}, true
	}
	now := c.now()
	if now.Before(st.until) || st.probing {
		return st.until, false
	}
	// The rest is over: this attempt probes, and the others wait as if it
	// were going to fail.
	st.probing = true
	st.until = now.Add(st.rest)
	return time.Time{}, true
}

// done records the outcome of an attempt to host that allow let through.
// It reports whether this outcome started or lengthened the host's rest.
func (c *circuit) done(host string, o hostOutcome) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.hosts[host]
	switch o {
	case hostAnswered:
		delete(c.hosts, host)
		return false
	case hostUnknown:
		if st != nil && st.probing {
			st.probing, st.until = false, c.now() // let another attempt probe
		}
		return false
	}
	if st == nil {
		if len(c.hosts) >= hostsTracked && !c.forgetCalm() {
			return false
		}
		st = &hostState{}
		c.hosts[host] = st
	}
	st.fails++
	switch {
	case st.probing:
		st.probing = false
		st.rest = min(2*st.rest, hostRestMax)
	case st.rest == 0 && st.fails >= hostFailures:
		st.rest = hostRestBase
	default:
		return false // not yet, or an attempt that began before the rest
	}
	st.until = c.now().Add(st.rest)
	return true
}

// forgetCalm drops the hosts that are not resting, reporting whether that
// made room.
func (c *circuit) forgetCalm() bool {
	for h, st := range c.hosts {
		if st.rest == 0 {
			delete(c.hosts, h)
		}
	}
	return len(c.hosts) < hostsTracked
}

// hostOf is the key of a URL's host: scheme, name and port, so that two
// services on one machine are kept apart. "" for a URL that does not parse.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// outcomeOf classifies what an attempt that returned err says of its host;
// cut tells that the attempt's own context ended it (a shutdown).
func outcomeOf(err error, cut bool) hostOutcome {
	switch {
	case err == nil:
		return hostAnswered
	case cut, netguard.IsBlocked(err):
		return hostUnknown
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return hostUnreachable
	}
	return hostUnknown
}
