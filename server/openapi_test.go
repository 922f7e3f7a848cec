package server

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/heraldhq/herald/docs"
	"github.com/heraldhq/herald/internal/testkit"
)

// contract is docs/openapi.json, loaded once. TestMain makes every request
// a server test sends through testkit check its exchange against it.
var contract *testkit.Contract

func TestMain(m *testing.M) {
	var err error
	if contract, err = testkit.LoadContract(docs.OpenAPI); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	stop := testkit.CheckCalls(contract)
	code := m.Run()
	stop()
	os.Exit(code)
}

// routeRe matches one registration in routes.go: s.public(get, "/v1/...", ...).
var routeRe = regexp.MustCompile(`s\.(?:public|authed|sessionOnly|adminOnly|serviceWorker)\((get|post|put|patch|del), "([^"]+)"`)

// TestOpenAPICoversRoutes checks that every route registered in routes.go
// is an operation of docs/openapi.json, and that every operation there is a
// route (the sign-in names refresh, logout, logout-all and local share the
// /v1/auth/:idp route, so the document lists each as its own path).
func TestOpenAPICoversRoutes(t *testing.T) {
	src, err := os.ReadFile("routes.go")
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]string{"get": "GET", "post": "POST", "put": "PUT", "patch": "PATCH", "del": "DELETE"}
	param := regexp.MustCompile(`:([a-z_]+)`)
	registered := map[string]bool{}
	for _, m := range routeRe.FindAllStringSubmatch(string(src), -1) {
		method, path := methods[m[1]], param.ReplaceAllString(m[2], "{$1}")
		registered[method+" "+path] = true
		item := contract.Doc.Paths.Value(path)
		if item == nil || item.GetOperation(method) == nil {
			t.Errorf("route %s %s (server/routes.go) is not in docs/openapi.json: add its operation", method, path)
		}
	}
	if len(registered) < 50 {
		t.Fatalf("found only %d routes in routes.go; has its form changed?", len(registered))
	}
	sharedAuth := regexp.MustCompile(`^POST /v1/auth/(local|refresh|logout|logout-all)$`)
	var compat []string
	for path, item := range contract.Doc.Paths.Map() {
		for method := range item.Operations() {
			k := method + " " + path
			switch {
			case registered[k] || sharedAuth.MatchString(k):
			case !strings.HasPrefix(path, "/v1/"):
				compat = append(compat, k) // an ntfy or Gotify route: serveCompat's
			default:
				t.Errorf("docs/openapi.json documents %s, which server/routes.go does not register", k)
			}
		}
	}
	if len(compat) < 20 {
		t.Errorf("found only %d ntfy and Gotify operations in docs/openapi.json, want every one of server/compat.go", len(compat))
	}
	e := newTestEnv(t)
	for _, k := range compat {
		method, path, _ := strings.Cut(k, " ")
		if !servedByCompat(t, e, method, compatSample.Replace(path)) {
			t.Errorf("docs/openapi.json documents %s, which neither server/routes.go nor serveCompat (server/compat.go) takes", k)
		}
	}
}

// compatSample fills the ntfy routes' path parameters with values of their
// shape.
var compatSample = strings.NewReplacer("{topic}", "Tk0pic0000000001", "{topics}", "Tk0pic0000000001,Tk0pic0000000002", "{sequence_id}", "seq-1")

// compatRequests are requests that serveCompat takes, one for each case of
// its dispatch.
var compatRequests = [][2]string{
	{"POST", "/message"}, {"GET", "/version"}, {"PUT", "/"}, {"POST", "/"},
	{"PUT", "/T"}, {"POST", "/T"}, {"GET", "/T/publish"}, {"PUT", "/T/send"}, {"POST", "/T/trigger"},
	{"PUT", "/T/S"}, {"POST", "/T/S"}, {"DELETE", "/T/S"}, {"PUT", "/T/S/clear"}, {"POST", "/T/S/read"},
	{"GET", "/T,T2/json"}, {"GET", "/T/sse"}, {"GET", "/T/raw"}, {"GET", "/T/ws"}, {"GET", "/T,T2/auth"},
}

// TestOpenAPICoversCompat checks the other way round: each kind of request
// serveCompat takes is an operation of docs/openapi.json.
func TestOpenAPICoversCompat(t *testing.T) {
	e := newTestEnv(t)
	r := strings.NewReplacer("T2", "Tk0pic0000000002", "T", "Tk0pic0000000001", "S", "seq-1")
	for _, c := range compatRequests {
		path := r.Replace(c[1])
		if !servedByCompat(t, e, c[0], path) {
			t.Errorf("%s %s is not taken by serveCompat: has server/compat.go changed?", c[0], path)
			continue
		}
		req, err := http.NewRequest(c[0], "http://herald.test"+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := contract.Router().FindRoute(req); err != nil {
			t.Errorf("%s %s (serveCompat) is not in docs/openapi.json: %v", c[0], c[1], err)
		}
	}
}

// servedByCompat reports whether a request reaches an ntfy or Gotify front
// door rather than the router's "no route" or "method not allowed". Whatever
// the front door answers (the request has no credentials and names no
// channel), the answer is not one of those.
func servedByCompat(t *testing.T, e *testEnv, method, path string) bool {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	return res.StatusCode != http.StatusMethodNotAllowed && !strings.Contains(string(body), `"no route for `) &&
		!strings.HasPrefix(res.Header.Get("Content-Type"), "text/html")
}

// TestOpenAPIServed checks GET /v1/openapi.json against the embedded file,
// and that the contract check catches an answer that drifted.
func TestOpenAPIServed(t *testing.T) {
	e := newTestEnv(t)
	r := e.do(200, "GET", "/v1/openapi.json", nil, "")
	if string(r.Raw) != string(docs.OpenAPI) || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("served %d bytes (%s), want the embedded document", len(r.Raw), r.Header.Get("Content-Type"))
	}
	if r.Body["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", r.Body["openapi"])
	}

	// The check is real: a channel without its webhook_url, an unknown
	// error code, a route that is not documented and an accepted request
	// with a field the document does not allow are each refused.
	u := e.newUser("drift@example.com")
	good := e.do(200, "GET", "/v1/channels", nil, u.Token)
	for _, c := range []struct {
		name, method, path string
		status             int
		reqBody, body      string
		want               string
	}{
		{"missing field", "GET", "/v1/channels", 200, "", `{"channels":[{"id":"ch_1","name":"x"}]}`, "webhook_url"},
		{"unknown error code", "GET", "/v1/channels", 400, "", `{"error":"oops","message":"m"}`, "oops"},
		{"undocumented route", "GET", "/v1/nowhere", 200, "", `{}`, "is not in docs/openapi.json"},
		{"accepted unknown field", "POST", "/v1/folders", 201, `{"name":"a","colour":"red"}`,
			`{"id":"fld_1","name":"a","position":0,"created_at":"2026-01-02T03:04:05.000Z"}`, "colour"},
	} {
		t.Run(c.name, func(t *testing.T) {
			hreq, err := newRequest(c.method, e.srv.URL+c.path, c.reqBody)
			if err != nil {
				t.Fatal(err)
			}
			h := good.Header.Clone()
			err = contract.Check(hreq, []byte(c.reqBody), c.status, h, []byte(c.body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Check = %v, want an error naming %q", err, c.want)
			}
		})
	}
}

func newRequest(method, url, body string) (*http.Request, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err == nil && body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, err
}

// TestProvidersSetupNeeded: the sign-in page learns that no user exists
// yet, so it can say how to make the first one, and stops saying so once
// one exists.
func TestProvidersSetupNeeded(t *testing.T) {
	e := newTestEnv(t)
	if r := e.do(200, "GET", "/v1/auth/providers", nil, ""); r.Body["setup_needed"] != true {
		t.Fatalf("no users: %s, want setup_needed true", r.Raw)
	}
	e.newUser("first@example.com")
	if r := e.do(200, "GET", "/v1/auth/providers", nil, ""); r.Body["setup_needed"] != false {
		t.Fatalf("one user: %s, want setup_needed false", r.Raw)
	}
}
