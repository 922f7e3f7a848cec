package server

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/schedule"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// testEnv is a real Herald server over a real SQLite file in t.TempDir().
type testEnv struct {
	t     testing.TB
	cfg   config.Config
	st    *store.Store
	dsn   string // the database st is on
	s     *Server
	srv   *httptest.Server
	clock *testkit.Clock
	logs  *bytes.Buffer
}

// newTestEnv starts a server on a frozen test clock. Rate limits are high
// unless a test lowers them through configure.
func newTestEnv(t *testing.T, configure ...func(*config.Config)) *testEnv {
	t.Helper()
	e, _ := openTestEnv(t, t.TempDir(), testkit.NewClock(), configure...)
	return e
}

// openTestEnv starts a server over the database in dir. clk is the clock of
// server and store; nil means the real clock (e.clock is then a frozen clock
// nothing reads). stop closes server and store; it also runs at cleanup, so
// a test can re-open dir after stopping.
// rawDB opens env's database for a test's own SQL, which must run on
// SQLite and PostgreSQL alike: $1, $2 ... placeholders in order, which
// SQLite also reads.
func (e *testEnv) rawDB(t testing.TB) *sql.DB {
	t.Helper()
	driver, dsn := "sqlite", "file:"+e.dsn+"?_pragma=busy_timeout(5000)"
	if e.cfg.Database.URL != "" {
		driver, dsn = "pgx", e.dsn
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// dsns remembers the PostgreSQL database given to a data directory, so that
// a test that restarts its server on the same directory finds its data.
var dsns sync.Map

func openTestEnv(t testing.TB, dir string, clk *testkit.Clock, configure ...func(*config.Config)) (e *testEnv, stop func()) {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = dir
	testkit.UnlimitedPlans(&cfg)
	// The tests' callback receivers are httptest servers on 127.0.0.1, and
	// their delivery queues allow loopback: so does the send.
	cfg.Delivery.AllowLoopback = true
	for _, f := range configure {
		f(&cfg)
	}
	var now func() time.Time
	if clk != nil {
		now = clk.Now
	} else {
		clk = testkit.NewClock()
	}
	if d, ok := dsns.Load(cfg.DBPath()); ok {
		cfg.Database.URL = d.(string)
	} else if d := pgtest.Or(t, cfg.DBPath()); d != cfg.DBPath() {
		dsns.Store(cfg.DBPath(), d)
		cfg.Database.URL = d
	}
	dsn := cfg.DatabaseDSN()
	st, err := store.Open(context.Background(), dsn, store.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	var shared SharedLimits
	if cfg.Database.URL != "" {
		shared = st // PostgreSQL, as herald serve does
	}
	logs := &bytes.Buffer{}
	subs, err := service.NewSubscriptions(cfg.Subscriptions, &http.Client{Timeout: 10 * time.Second}, now)
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Config: cfg, Store: st, Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: logs}, nil)), Now: now,
		Version: "test", Subscriptions: subs, StreamBuffer: streamTestBuffer, SharedLimits: shared})
	srv := httptest.NewServer(s.Handler())
	// base_url must point at the test server for webhook_url values.
	s.baseURL = srv.URL
	e = &testEnv{t: t, cfg: cfg, st: st, dsn: dsn, s: s, srv: srv, clock: clk, logs: logs}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = runJobs(ctx, s) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			srv.Close()
			cancel()
			<-done
			if err := st.Close(); err != nil {
				t.Errorf("close store: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return e, stop
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// response is what a test request got back.
type response = testkit.Response

// request sends body (a string is sent as is, anything else as JSON) with an
// optional bearer token.
func (e *testEnv) request(method, path string, body any, token string, headers ...string) response {
	e.t.Helper()
	return e.requestWith(e.srv.Client(), method, path, body, token, headers...)
}

// requestFrom is request from the loopback address ip (127.0.0.2, ...;
// Linux routes all of 127.0.0.0/8 to loopback), on a connection of its own.
func (e *testEnv) requestFrom(ip, method, path string, body any, token string, headers ...string) response {
	e.t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
	return e.requestWith(c, method, path, body, token, headers...)
}

func (e *testEnv) requestWith(c *http.Client, method, path string, body any, token string, headers ...string) response {
	e.t.Helper()
	return testkit.Do(e.t, c, method, e.srv.URL+path, body, token, headers...)
}

// do is request that fails the test unless the status is want.
func (e *testEnv) do(want int, method, path string, body any, token string) response {
	e.t.Helper()
	r := e.request(method, path, body, token)
	if r.Status != want {
		e.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.Status, want, r.Raw)
	}
	return r
}

// wantError checks an error response's status and code.
func wantError(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.Status != status || r.Str("error") != code {
		t.Fatalf("got %d %s, want %d with error %q", r.Status, r.Raw, status, code)
	}
	if r.Str("message") == "" {
		t.Fatalf("error %s has no message", r.Raw)
	}
}

// testUser is a user with a session.
type testUser struct {
	*store.User
	Password string
	Token    string // access token
	Refresh  string
}

// newUser creates a user with a password and signs them in over HTTP.
func (e *testEnv) newUser(email string) *testUser {
	e.t.Helper()
	hash, err := auth.HashPassword(context.Background(), "pw-"+email)
	if err != nil {
		e.t.Fatal(err)
	}
	u := &store.User{Email: email, Name: strings.Split(email, "@")[0], Plan: "free", PasswordHash: hash}
	if err := e.st.CreateUser(context.Background(), u); err != nil {
		e.t.Fatal(err)
	}
	r := e.do(200, "POST", "/v1/auth/local", map[string]string{"email": email, "password": "pw-" + email}, "")
	return &testUser{User: u, Password: "pw-" + email, Token: r.Str("access_token"), Refresh: r.Str("refresh_token")}
}

// apiKey creates an API key for u.
func (e *testEnv) apiKey(u *testUser) string {
	e.t.Helper()
	return e.do(201, "POST", "/v1/keys", map[string]string{"name": "test"}, u.Token).Str("key")
}

// newChannel creates a channel for u and returns its JSON.
func (e *testEnv) newChannel(u *testUser, name string) map[string]any {
	e.t.Helper()
	return e.do(201, "POST", "/v1/channels", map[string]string{"name": name}, u.Token).Body
}

// runJobs runs the background jobs of s and of its rules, as serve does,
// until ctx ends.
func runJobs(ctx context.Context, s *Server) error {
	jobs := schedule.New(s.log)
	s.svc.Schedule(jobs)
	s.Schedule(jobs)
	return jobs.Run(ctx)
}
