package testkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/heraldhq/herald/docs"
)

// Contract is an OpenAPI description that requests and answers are checked
// against.
type Contract struct {
	Doc    *openapi3.T
	router routers.Router
}

// LoadContract reads and validates an OpenAPI document.
func LoadContract(data []byte) (*Contract, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("openapi: load: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi: invalid document: %w", err)
	}
	// Match on paths alone: the test servers listen on ports of their own.
	doc.Servers = nil
	r, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: router: %w", err)
	}
	return &Contract{Doc: doc, router: r}, nil
}

// Router finds a request's operation in the document.
func (c *Contract) Router() routers.Router { return c.router }

func init() {
	// The streams (ntfy's json subscription too) and the HTML signature
	// docs are checked as text.
	openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/x-ndjson", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
}

// Check checks one exchange: the answer always, against the operation's
// response for its status (or its default); the request only when the
// server accepted it (a status under 300), since tests send bad requests on
// purpose to see them refused. A route that is not in the document is an
// error unless the server answered 404 or 405 (a test of an unknown path)
// or 5xx (a test-only route that panics on purpose). OPTIONS is not checked.
func (c *Contract) Check(req *http.Request, reqBody []byte, status int, header http.Header, body []byte) error {
	if req.Method == http.MethodOptions {
		return nil // answered by the router for every path, with Allow
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		if status == http.StatusNotFound || status == http.StatusMethodNotAllowed || status >= 500 {
			return nil // a test of an unknown path, or of a test-only route that fails
		}
		return fmt.Errorf("openapi: %s %s answered %d but is not in docs/openapi.json: add the operation there", req.Method, req.URL.Path, status)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
	if status < 300 {
		r2 := req.Clone(context.Background())
		r2.Body = io.NopCloser(bytes.NewReader(reqBody))
		if len(bytes.TrimSpace(reqBody)) > 0 && !declares(route.Operation, req.Header.Get("Content-Type")) {
			// The send endpoints read JSON whatever the Content-Type.
			r2.Header.Set("Content-Type", "application/json")
		}
		in.Request = r2
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			return fmt.Errorf("openapi: %s %s was accepted (%d), but the request does not match docs/openapi.json: %w\nbody: %s",
				req.Method, req.URL.Path, status, err, clip(reqBody))
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return fmt.Errorf("openapi: the answer to %s %s (%d) does not match docs/openapi.json: %w\nbody: %s",
			req.Method, req.URL.Path, status, err, clip(body))
	}
	return nil
}

// declares reports whether op takes a body of media type ct (Gotify's
// forms, ntfy's text and bytes): such a body is checked as what it is.
func declares(op *openapi3.Operation, ct string) bool {
	if op == nil || op.RequestBody == nil || op.RequestBody.Value == nil || ct == "" {
		return false
	}
	return op.RequestBody.Value.Content.Get(ct) != nil
}

func clip(b []byte) string {
	s := string(b)
	if len(s) > 2000 {
		s = s[:2000] + "..."
	}
	return s
}

// checked is the contract Call checks every exchange against, if any.
var checked atomic.Pointer[Contract]

// CheckCalls makes every Call check its exchange against c, until the
// returned function is called. A test package sets it once, in TestMain:
// then each of its requests through Call or Do is checked, and a mismatch
// is an error that names the operation and what did not match.
func CheckCalls(c *Contract) (stop func()) {
	checked.Store(c)
	return func() { checked.Store(nil) }
}

// RunChecked runs a test package's tests (m.Run) with every Call checked
// against Herald's OpenAPI description, then announces the tests pkg
// skipped for want of a tool. It returns the status for os.Exit.
func RunChecked(m *testing.M, pkg string) int {
	contract, err := LoadContract(docs.OpenAPI)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stop := CheckCalls(contract)
	code := m.Run()
	stop()
	AnnounceSkips(pkg)
	return code
}

// ErrContract marks an exchange that does not match the checked contract.
var ErrContract = errors.New("contract")

// checkCall checks one Call's exchange, if a contract is set. Streams are
// not read to the end by Call's callers, so only finished answers get here.
func checkCall(req *http.Request, reqBody []byte, res *http.Response, body []byte) error {
	c := checked.Load()
	if c == nil || strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		return nil
	}
	if err := c.Check(req, reqBody, res.StatusCode, res.Header, body); err != nil {
		return fmt.Errorf("%w: %w", ErrContract, err)
	}
	return nil
}
