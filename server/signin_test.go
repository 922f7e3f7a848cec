package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/internal/testkit"
)

// floodAnswer is what one sign-in of a flood got back.
type floodAnswer struct {
	status     int
	code       string
	message    string
	retryAfter string
	err        error
}

// floodSignIn sends one sign-in from the loopback address ip on a connection
// of its own. Unlike testEnv.request it is safe to call from any goroutine.
func floodSignIn(base, ip, email, password string) floodAnswer {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	res, err := c.Post(base+"/v1/auth/local", "application/json", bytes.NewReader(body))
	if err != nil {
		return floodAnswer{err: err}
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var e struct{ Error, Message string }
	_ = json.Unmarshal(raw, &e)
	return floodAnswer{status: res.StatusCode, code: e.Error, message: e.Message, retryAfter: res.Header.Get("Retry-After")}
}

// TestSignInFloodBounded fires many concurrent wrong-password sign-ins for
// unknown emails from four addresses: each gets 401 or 503 server_busy with
// Retry-After, no more password checks run at once than there are slots, and
// the server keeps answering meanwhile. Not parallel: the bound is the
// process's, and other tests' checks would share it.
func TestSignInFloodBounded(t *testing.T) {
	env := newTestEnv(t)
	owner := env.newUser("owner@example.com")
	const n = 60
	answers := make([]floodAnswer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i] = floodSignIn(env.srv.URL, fmt.Sprintf("127.0.0.%d", 1+i%4), fmt.Sprintf("nobody-%d@example.com", i), "wrong")
		}()
	}
	close(start)
	time.Sleep(20 * time.Millisecond)
	began := time.Now()
	if got := env.authMe(owner.Token); got != 200 {
		t.Errorf("GET /v1/auth/me during the flood: %d, want 200", got)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("GET /v1/auth/me during the flood took %s", d)
	}
	wg.Wait()

	counts := map[int]int{}
	for i, a := range answers {
		if a.err != nil {
			t.Fatalf("sign-in %d: %v", i, a.err)
		}
		counts[a.status]++
		switch a.status {
		case 401:
		case 503:
			if a.code != "server_busy" || a.message == "" || a.retryAfter != "1" {
				t.Errorf("503 answer: error %q, message %q, Retry-After %q; want server_busy, a message, 1", a.code, a.message, a.retryAfter)
			}
		default:
			t.Errorf("sign-in %d: status %d (%s), want 401 or 503", i, a.status, a.code)
		}
	}
	t.Logf("%d concurrent sign-ins: %v; %+v", n, counts, auth.Stats())
	if counts[503] == 0 {
		t.Errorf("no sign-in was refused as overload: %v", counts)
	}
	if st := auth.Stats(); st.Peak > st.Slots {
		t.Errorf("%d password checks ran at once, want at most %d", st.Peak, st.Slots)
	}
	// Overload answers cost nothing: the owner signs in afterwards.
	env.do(200, "POST", "/v1/auth/local", map[string]string{"email": owner.Email, "password": owner.Password}, "")
}

// setBudgets replaces the failure budgets, for tests that would otherwise
// need hundreds of password checks.
func (t *signinThrottle) setBudgets(pair, addr, account failBudget) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.budgets = [3]failBudget{pair, addr, account}
}

// signInFrom signs u in from ip with password.
func (e *testEnv) signInFrom(ip, email, password string) response {
	e.t.Helper()
	return e.requestFrom(ip, "POST", "/v1/auth/local", map[string]string{"email": email, "password": password}, "")
}

// wantThrottled checks a 429 rate_limited with a Retry-After of 1..max seconds.
func wantThrottled(t *testing.T, r response, max int) {
	t.Helper()
	wantError(t, r, 429, "rate_limited")
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || secs < 1 || secs > max {
		t.Fatalf("Retry-After = %q, want 1..%d", r.Header.Get("Retry-After"), max)
	}
	if r.Str("access_token") != "" {
		t.Fatalf("a throttled sign-in carries a token: %s", r.Raw)
	}
}

// TestSignInAttackerCannotLockOutOwner: one address guessing at an account
// is throttled, and neither the owner (who signed in from 127.0.0.1 before)
// nor a fresh address with the right password is held back by it.
func TestSignInAttackerCannotLockOutOwner(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	owner := env.newUser("owner@example.com") // signed in from 127.0.0.1
	const attacker = "127.0.0.2"

	for i := range pairBudget.burst {
		if r := env.signInFrom(attacker, owner.Email, fmt.Sprintf("guess-%d", i)); r.Status != 401 {
			t.Fatalf("guess %d: %d %s, want 401", i+1, r.Status, r.Raw)
		}
	}
	wantThrottled(t, env.signInFrom(attacker, owner.Email, "guess-x"), int(pairBudget.every/time.Second))
	// Throttled before the check: even the right password is refused.
	wantThrottled(t, env.signInFrom(attacker, owner.Email, owner.Password), int(pairBudget.every/time.Second))

	// The owner, at the address that signed in before, and at a fresh one.
	env.do(200, "POST", "/v1/auth/local", map[string]string{"email": owner.Email, "password": owner.Password}, "")
	if r := env.signInFrom("127.0.0.3", owner.Email, owner.Password); r.Status != 200 {
		t.Fatalf("owner from a fresh address: %d %s, want 200", r.Status, r.Raw)
	}

	// The attacker gets one more guess per interval.
	env.clock.Advance(pairBudget.every)
	wantError(t, env.signInFrom(attacker, owner.Email, "guess-y"), 401, "invalid_token")
	wantThrottled(t, env.signInFrom(attacker, owner.Email, "guess-z"), int(pairBudget.every/time.Second))
}

// TestSignInOnlyFailuresCount: successes are never throttled, and a success
// forgives that address's earlier failures on the account.
func TestSignInOnlyFailuresCount(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	u := env.newUser("often@example.com")
	const ip = "127.0.0.4"
	for i := range pairBudget.burst - 1 {
		wantError(t, env.signInFrom(ip, u.Email, fmt.Sprintf("typo-%d", i)), 401, "invalid_token")
	}
	for i := range pairBudget.burst + 2 {
		if r := env.signInFrom(ip, u.Email, u.Password); r.Status != 200 {
			t.Fatalf("sign-in %d: %d %s, want 200", i+1, r.Status, r.Raw)
		}
	}
	// The failures before the success are forgiven.
	for i := range pairBudget.burst {
		wantError(t, env.signInFrom(ip, u.Email, fmt.Sprintf("typo-again-%d", i)), 401, "invalid_token")
	}
	wantThrottled(t, env.signInFrom(ip, u.Email, "one too many"), int(pairBudget.every/time.Second))
}

// TestSignInConcurrentGuesses: guesses sent all at once from one address
// get no more checks than the budget allows.
func TestSignInConcurrentGuesses(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.s.signins.setBudgets(failBudget{burst: 3, every: time.Hour}, addrBudget, accountBudget)
	u := env.newUser("target@example.com")
	const n = 12
	answers := make([]floodAnswer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = floodSignIn(env.srv.URL, "127.0.0.5", u.Email, fmt.Sprintf("guess-%d", i))
		}()
	}
	wg.Wait()
	counts := map[int]int{}
	for _, a := range answers {
		if a.err != nil {
			t.Fatal(a.err)
		}
		counts[a.status]++
	}
	if counts[401] > 3 || counts[401]+counts[429]+counts[503] != n || counts[429] < n-3-counts[503] {
		t.Errorf("%d concurrent guesses with a budget of 3: %v; want at most 3 checked (401), the rest 429 or 503", n, counts)
	}
}

// TestSignInAccountBudget: failures from many addresses exhaust the
// account's budget for addresses that never signed in to it, not for the
// address that did.
func TestSignInAccountBudget(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.s.signins.setBudgets(pairBudget, addrBudget, failBudget{burst: 3, every: time.Minute})
	owner := env.newUser("owner@example.com") // signed in from 127.0.0.1
	for _, ip := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		wantError(t, env.signInFrom(ip, owner.Email, "guess"), 401, "invalid_token")
	}
	r := env.signInFrom("127.0.0.5", owner.Email, owner.Password)
	wantThrottled(t, r, 60)
	if !strings.Contains(r.Str("message"), "account") {
		t.Errorf("message %q does not say the account's budget ran out", r.Str("message"))
	}
	// An unknown email has a budget too, so a 429 tells nothing about
	// whether the account exists.
	for _, ip := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		wantError(t, env.signInFrom(ip, "nobody@example.com", "guess"), 401, "invalid_token")
	}
	wantThrottled(t, env.signInFrom("127.0.0.5", "nobody@example.com", "guess"), 60)

	env.do(200, "POST", "/v1/auth/local", map[string]string{"email": owner.Email, "password": owner.Password}, "")
	env.clock.Advance(time.Minute)
	if r := env.signInFrom("127.0.0.5", owner.Email, owner.Password); r.Status != 200 {
		t.Fatalf("fresh address once the budget refilled: %d %s, want 200", r.Status, r.Raw)
	}
}

// TestSignInAddressBudget: one address failing on many accounts is
// throttled on every account; other addresses are not.
func TestSignInAddressBudget(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.s.signins.setBudgets(pairBudget, failBudget{burst: 3, every: time.Hour}, accountBudget)
	u := env.newUser("someone@example.com")
	for i := range 3 {
		wantError(t, env.signInFrom("127.0.0.2", fmt.Sprintf("user%d@example.com", i), "guess"), 401, "invalid_token")
	}
	wantThrottled(t, env.signInFrom("127.0.0.2", u.Email, u.Password), 3600)
	if r := env.signInFrom("127.0.0.3", u.Email, u.Password); r.Status != 200 {
		t.Fatalf("another address: %d %s, want 200", r.Status, r.Raw)
	}
}

func TestClientKey(t *testing.T) {
	t.Parallel()
	for remote, want := range map[string]string{
		"192.0.2.7:5555":                       "192.0.2.7",
		"[::ffff:192.0.2.7]:5555":              "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:443":           "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::9]:443":           "2001:db8:1:2::/64",
		"[fe80::1%eth0]:80":                    "fe80::/64",
		"not an address":                       "not an address",
		"[2001:db8:1:3:3:4:5:6]:443":           "2001:db8:1:3::/64",
		"[2001:0db8:0001:0002::1]:65535":       "2001:db8:1:2::/64",
		"198.51.100.1:1":                       "198.51.100.1",
		"[::1]:8080":                           "::/64",
		"127.0.0.2:40000":                      "127.0.0.2",
		"[2001:db8::]:1":                       "2001:db8::/64",
		"[2001:db8:0:0:ffff:ffff:ffff:ffff]:1": "2001:db8::/64",
	} {
		if got := clientKey(&http.Request{RemoteAddr: remote}); got != want {
			t.Errorf("clientKey(%q) = %q, want %q", remote, got, want)
		}
	}
}

// TestSigninThrottleMemory: drained buckets and expired addresses are
// swept, and the remembered addresses are bounded.
func TestSigninThrottleMemory(t *testing.T) {
	t.Parallel()
	clk := testkit.NewClock()
	th := newSigninThrottle(clk.Now)
	for i := range 100 {
		if _, refused := th.reserve(fmt.Sprintf("u%d@example.com", i), fmt.Sprintf("192.0.2.%d", i)); refused != nil {
			t.Fatalf("reserve %d refused", i)
		}
	}
	for i := range knownMax + 5 {
		clk.Advance(time.Millisecond)
		th.succeeded(fmt.Sprintf("k%d@example.com", i), "192.0.2.2")
	}
	if got := len(th.known); got != knownMax {
		t.Errorf("%d remembered addresses, want the cap %d", got, knownMax)
	}
	if _, ok := th.known["k0@example.com|192.0.2.2"]; ok {
		t.Error("the oldest remembered address was kept")
	}
	if _, ok := th.known[fmt.Sprintf("k%d@example.com|192.0.2.2", knownMax+4)]; !ok {
		t.Error("the newest remembered address was dropped")
	}
	clk.Advance(time.Duration(addrBudget.burst) * addrBudget.every)
	th.sweep()
	if got := len(th.buckets); got != 0 {
		t.Errorf("%d buckets after they drained, want 0", got)
	}
	clk.Advance(knownFor)
	th.sweep()
	if got := len(th.known); got != 0 {
		t.Errorf("%d remembered addresses after %s, want 0", got, knownFor)
	}
}
