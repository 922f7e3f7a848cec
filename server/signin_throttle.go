package server

import (
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Password sign-in throttles count FAILED attempts only, in three budgets:
//
//   - one client address on one account: tight, so guessing from one place
//     is slow;
//   - one client address across all accounts: against trying one password
//     on many accounts;
//   - one account across all addresses: large, and not applied to an
//     address that has signed in to that account before, so a distributed
//     attacker stays bounded while no one else can lock the owner out.
//
// A budget of burst failures refills one failure every interval. An attempt
// is refused (429) when a budget it counts against has none left; else it is
// counted before the password is checked (so concurrent guesses cannot all
// slip through) and given back unless the password was wrong.
type failBudget struct {
	burst int
	every time.Duration
}

var (
	// 10 failures, then one every 90 s (40 an hour).
	pairBudget = failBudget{burst: 10, every: 90 * time.Second}
	// 50 failures, then 50 an hour.
	addrBudget = failBudget{burst: 50, every: 72 * time.Second}
	// 300 failures, then 300 an hour.
	accountBudget = failBudget{burst: 300, every: 12 * time.Second}
)

const (
	// knownMax bounds the remembered (account, address) pairs that signed
	// in; the oldest is forgotten first.
	knownMax = 10000
	// knownFor is how long a successful sign-in exempts its address from
	// the account budget.
	knownFor = 30 * 24 * time.Hour
)

// signinThrottle holds the failure budgets and the addresses that have
// signed in to each account. Both live in memory: a restart forgets them.
type signinThrottle struct {
	mu      sync.Mutex
	now     func() time.Time
	budgets [3]failBudget // pair, address, account
	buckets map[string]*failBucket
	known   map[string]time.Time // account|address → last successful sign-in
}

// failBucket is the failures counted against one budget, as of at; they
// drain at one per budget interval.
type failBucket struct {
	used float64
	at   time.Time
	b    failBudget
}

func newSigninThrottle(now func() time.Time) *signinThrottle {
	return &signinThrottle{now: now, budgets: [3]failBudget{pairBudget, addrBudget, accountBudget},
		buckets: map[string]*failBucket{}, known: map[string]time.Time{}}
}

// usedAt is the failures still counted at now.
func (b *failBucket) usedAt(now time.Time) float64 {
	return max(0, b.used-float64(now.Sub(b.at))/float64(b.b.every))
}

// throttled is a refusal: which budget, and until when.
type throttled struct {
	which      int
	retryAfter time.Duration
}

// reserve counts one failure against each budget the attempt of address on
// account counts against, and returns the func that gives them back. When a
// budget has none left it counts nothing and says which and for how long.
func (t *signinThrottle) reserve(account, address string) (giveBack func(), refused *throttled) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := []string{"pair|" + account + "|" + address, "addr|" + address, "account|" + account}
	if seen, ok := t.known[account+"|"+address]; ok && now.Sub(seen) < knownFor {
		keys = keys[:2]
	}
	bs := make([]*failBucket, len(keys))
	for i, k := range keys {
		b := t.buckets[k]
		if b == nil {
			b = &failBucket{at: now}
		}
		b.b = t.budgets[i]
		b.used, b.at = b.usedAt(now), now
		if over := b.used + 1 - float64(b.b.burst); over > 0 {
			wait := time.Duration(over * float64(b.b.every))
			if refused == nil || wait > refused.retryAfter {
				refused = &throttled{which: i, retryAfter: wait}
			}
		}
		bs[i] = b
	}
	if refused != nil {
		return nil, refused
	}
	for i, b := range bs {
		b.used++
		t.buckets[keys[i]] = b
	}
	return func() {
		now := t.now()
		t.mu.Lock()
		defer t.mu.Unlock()
		for _, b := range bs {
			b.used, b.at = max(0, b.usedAt(now)-1), now
		}
	}, nil
}

// succeeded remembers that address signed in to account, and forgives the
// failures of that address on that account.
func (t *signinThrottle) succeeded(account, address string) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.buckets, "pair|"+account+"|"+address)
	k := account + "|" + address
	if _, ok := t.known[k]; !ok && len(t.known) >= knownMax {
		oldest, at := "", now
		for kk, seen := range t.known {
			if seen.Before(at) || oldest == "" {
				oldest, at = kk, seen
			}
		}
		delete(t.known, oldest)
	}
	t.known[k] = now
}

// sweep forgets buckets that have drained and known addresses that have
// expired.
func (t *signinThrottle) sweep() {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, b := range t.buckets {
		if b.usedAt(now) == 0 {
			delete(t.buckets, k)
		}
	}
	for k, seen := range t.known {
		if now.Sub(seen) >= knownFor {
			delete(t.known, k)
		}
	}
}

// clientKey is the address the sign-in throttles count by: the peer's IPv4
// address, or its IPv6 /64, since one host commonly has a whole /64 to
// pick addresses from.
func clientKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.Unmap()
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.String()
		}
	}
	return a.String()
}

// errThrottled is the 429 of a refused sign-in, with Retry-After.
func errThrottled(w http.ResponseWriter, th *throttled) error {
	secs := max(1, int(math.Ceil(th.retryAfter.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	what := [...]string{
		"too many failed sign-ins to this account from your address",
		"too many failed sign-ins from your address",
		"too many failed sign-ins to this account from addresses it has not signed in from before",
	}[th.which]
	return newError(http.StatusTooManyRequests, "rate_limited", "%s; retry after %d seconds", what, secs)
}
