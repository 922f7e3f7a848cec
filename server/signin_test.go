package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
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
