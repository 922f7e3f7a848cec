package server

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/signature"
)

const vfSecret = "whsec_0123456789abcdefghijklmnopqrstuvwxyzAB"

// vfBody is a callback body as a receiver gets it: non-ASCII text, escapes
// and a trailing newline, so an example that re-encodes it fails.
const vfBody = `{"event":"response.received","message_id":"msg_abc","channel_id":"ch_def",` +
	`"timestamp":"2026-01-02T03:04:05.678Z","triggered_by":"approve","responses":{"note":"ça va \"ok\" ✓"},"metadata":null}` + "\n"

func TestVerifyGenerate(t *testing.T) {
	e := newTestEnv(t)
	r := e.do(200, "POST", "/v1/verify/generate", map[string]string{"payload": vfBody, "secret": vfSecret}, "")
	cbWantKeys(t, "generate response", r.Body, "signature", "timestamp")
	sig := r.Str("signature")
	m := regexp.MustCompile(`^t=(\d+),v1=[0-9a-f]{64}$`).FindStringSubmatch(sig)
	if m == nil {
		t.Fatalf("signature %q, want t=<unix seconds>,v1=<64 hex>", sig)
	}
	ts, _ := r.Body["timestamp"].(float64)
	if want := e.clock.Now().Unix(); m[1] != strconv.FormatInt(want, 10) || int64(ts) != want {
		t.Errorf("t=%s, timestamp %v; want both %d (now)", m[1], r.Body["timestamp"], want)
	}
	if err := signature.Verify(vfSecret, sig, []byte(vfBody), e.clock.Now(), signature.Tolerance); err != nil {
		t.Errorf("signature.Verify rejects the generated signature: %v", err)
	}
	// It is exactly what the delivery queue would send at that time.
	if want := signature.Sign(vfSecret, e.clock.Now(), []byte(vfBody)); sig != want {
		t.Errorf("signature %q, want %q", sig, want)
	}
	// An empty payload is a payload.
	e.do(200, "POST", "/v1/verify/generate", map[string]string{"payload": "", "secret": vfSecret}, "")

	for _, tt := range []struct {
		name string
		body any
		code string
	}{
		{"no payload", map[string]string{"secret": vfSecret}, "invalid_payload"},
		{"no secret", map[string]string{"payload": vfBody}, "invalid_payload"},
		{"empty secret", map[string]string{"payload": vfBody, "secret": ""}, "invalid_payload"},
		{"payload not a string", map[string]any{"payload": map[string]int{"a": 1}, "secret": vfSecret}, "invalid_payload"},
		{"empty body", "", "invalid_json"},
		{"invalid JSON", `{"payload": "x", "secret": }`, "invalid_json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.request("POST", "/v1/verify/generate", tt.body, ""), 400, tt.code)
		})
	}
}

func TestVerifySignature(t *testing.T) {
	e := newTestEnv(t)
	now := e.clock.Now()
	good := signature.Sign(vfSecret, now, []byte(vfBody))
	check := func(payload, sig, secret string) response {
		t.Helper()
		return e.do(200, "POST", "/v1/verify/signature", map[string]string{"payload": payload, "signature": sig, "secret": secret}, "")
	}

	r := check(vfBody, good, vfSecret)
	if !reflect.DeepEqual(r.Body, map[string]any{"valid": true}) {
		t.Errorf("valid signature: %s, want {\"valid\":true}", r.Raw)
	}
	// (t is whole seconds, so 299 s is the last age safe from rounding.)
	for _, age := range []time.Duration{-299 * time.Second, 299 * time.Second} {
		if r := check(vfBody, signature.Sign(vfSecret, now.Add(age), []byte(vfBody)), vfSecret); r.Body["valid"] != true {
			t.Errorf("signature made %s from now (at the tolerance): %s, want valid", age, r.Raw)
		}
	}

	for _, tt := range []struct {
		name, payload, sig, secret, reason string
	}{
		{"wrong secret", vfBody, good, vfSecret + "x", "match"},
		{"changed payload", strings.Replace(vfBody, "approve", "reject", 1), good, vfSecret, "match"},
		{"payload re-encoded", strings.TrimSuffix(vfBody, "\n"), good, vfSecret, "match"},
		{"stale", vfBody, signature.Sign(vfSecret, now.Add(-301*time.Second), []byte(vfBody)), vfSecret, "timestamp"},
		{"future", vfBody, signature.Sign(vfSecret, now.Add(301*time.Second), []byte(vfBody)), vfSecret, "timestamp"},
		{"garbage", vfBody, "not a signature", vfSecret, "format"},
		{"no v1", vfBody, "t=" + strconv.FormatInt(now.Unix(), 10), vfSecret, "format"},
		{"no t", vfBody, good[strings.Index(good, "v1="):], vfSecret, "format"},
		{"short hex", vfBody, good[:len(good)-2], vfSecret, "format"},
		{"empty", vfBody, "", vfSecret, "format"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := check(tt.payload, tt.sig, tt.secret)
			cbWantKeys(t, "invalid result", r.Body, "valid", "reason")
			if r.Body["valid"] != false || !strings.Contains(strings.ToLower(r.Str("reason")), tt.reason) {
				t.Errorf("%s, want valid:false with a reason mentioning %q", r.Raw, tt.reason)
			}
		})
	}

	full := map[string]string{"payload": vfBody, "signature": good, "secret": vfSecret}
	for _, missing := range []string{"payload", "signature", "secret"} {
		body := map[string]string{}
		for k, v := range full {
			if k != missing {
				body[k] = v
			}
		}
		r := e.request("POST", "/v1/verify/signature", body, "")
		wantError(t, r, 400, "invalid_payload")
		if !strings.Contains(r.Str("message"), missing) {
			t.Errorf("missing %s: message %q does not name it", missing, r.Str("message"))
		}
	}
	wantError(t, e.request("POST", "/v1/verify/signature", `{"payload":`, ""), 400, "invalid_json")
}

// vfDocs fetches the JSON documentation.
func vfDocs(e *testEnv) response {
	e.t.Helper()
	return e.do(200, "GET", "/v1/verify/docs", nil, "")
}

func TestVerifyDocs(t *testing.T) {
	e := newTestEnv(t)
	r := vfDocs(e)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want JSON", ct)
	}
	for _, k := range []string{"algorithm", "header_name", "format", "tolerance_seconds", "steps", "examples"} {
		if _, ok := r.Body[k]; !ok {
			t.Errorf("docs lack %q: %s", k, r.Raw)
		}
	}
	if r.Str("algorithm") != "HMAC-SHA256" || r.Str("header_name") != "X-Service-Signature" || r.Body["tolerance_seconds"] != 300.0 {
		t.Errorf("algorithm %q header_name %q tolerance %v", r.Str("algorithm"), r.Str("header_name"), r.Body["tolerance_seconds"])
	}
	if f := r.Str("format"); !strings.Contains(f, "t=") || !strings.Contains(f, "v1=") {
		t.Errorf("format %q", f)
	}
	steps, _ := r.Body["steps"].([]any)
	if len(steps) < 3 {
		t.Errorf("steps %v", r.Body["steps"])
	}
	for _, s := range steps {
		if s, ok := s.(string); !ok || s == "" {
			t.Errorf("step %v is not text", s)
		}
	}
	ex, _ := r.Body["examples"].(map[string]any)
	cbWantKeys(t, "examples", ex, "go", "python", "node", "shell")
	for lang, code := range ex {
		if s, _ := code.(string); !strings.Contains(s, "HERALD_SIGNATURE") || !strings.Contains(s, "300") {
			t.Errorf("%s example does not read HERALD_SIGNATURE or check the 300 s tolerance", lang)
		}
	}

	for _, tt := range []struct {
		accept string
		html   bool
	}{
		{"", false},
		{"*/*", false},
		{"application/json", false},
		{"text/html", true},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true}, // a browser
		{"application/json, text/html", false},
		{"text/html;q=0.5, application/json", false},
		{"application/json;q=0.5, text/html", true},
		{"text/html;q=0, */*", false},
		{"Text/HTML ; q=0.9 , application/json ; q=0.8", true},
	} {
		t.Run(tt.accept, func(t *testing.T) {
			r := e.request("GET", "/v1/verify/docs", nil, "", "Accept", tt.accept)
			ct := r.Header.Get("Content-Type")
			if r.Status != 200 || strings.HasPrefix(ct, "text/html") != tt.html {
				t.Fatalf("Accept %q: %d %s, want HTML %v", tt.accept, r.Status, ct, tt.html)
			}
			if tt.html && (!bytes.Contains(r.Raw, []byte("X-Service-Signature")) || !bytes.Contains(r.Raw, []byte("<html"))) {
				t.Errorf("HTML page does not name the header: %s", r.Raw)
			}
		})
	}
}

// TestVerifyExamples runs each published example against a real signature:
// valid exits 0 and prints "valid"; a tampered body, another secret and a
// stale timestamp exit non-zero.
func TestVerifyExamples(t *testing.T) {
	e := newTestEnv(t)
	ex, _ := vfDocs(e).Body["examples"].(map[string]any)
	now := time.Now()
	cases := []struct {
		name   string
		body   string
		sig    string
		secret string
		valid  bool
	}{
		{"valid", vfBody, signature.Sign(vfSecret, now, []byte(vfBody)), vfSecret, true},
		{"tampered body", strings.Replace(vfBody, "approve", "reject", 1), signature.Sign(vfSecret, now, []byte(vfBody)), vfSecret, false},
		{"other secret", vfBody, signature.Sign(vfSecret, now, []byte(vfBody)), vfSecret + "x", false},
		{"stale timestamp", vfBody, signature.Sign(vfSecret, now.Add(-10*time.Minute), []byte(vfBody)), vfSecret, false},
		{"future timestamp", vfBody, signature.Sign(vfSecret, now.Add(10*time.Minute), []byte(vfBody)), vfSecret, false},
	}
	vfEach(t, ex, func(t *testing.T, dir, bin string, args []string) {
		for _, c := range cases {
			out, exit := vfRun(t, dir, c.body, c.secret, c.sig, bin, args...)
			if c.valid && (exit != 0 || strings.TrimSpace(out) != "valid") {
				t.Errorf("%s: exit %d, output %q; want 0 and \"valid\"", c.name, exit, out)
			}
			if !c.valid && exit == 0 {
				t.Errorf("%s: exit 0 (output %q), want non-zero", c.name, out)
			}
		}
	})
}

// vfEach writes each language's example from ex (the docs' examples
// object) to a fresh directory and calls run there with the command that
// runs it; a language whose tool is not installed is skipped.
func vfEach(t *testing.T, ex map[string]any, run func(t *testing.T, dir, bin string, args []string)) {
	t.Helper()
	for _, lang := range []struct {
		key, file, tool string
		args            []string
	}{
		{"go", "verify.go", "go", []string{"run", "verify.go"}},
		{"shell", "verify.sh", "openssl", []string{"verify.sh"}},
		{"python", "verify.py", "python3", []string{"verify.py"}},
		{"node", "verify.js", "node", []string{"verify.js"}},
	} {
		t.Run(lang.key, func(t *testing.T) {
			if _, err := exec.LookPath(lang.tool); err != nil {
				// CI installs every tool (.ci/run): there a missing one
				// is a failure, not an example left untried.
				if os.Getenv("CI") == "true" {
					t.Fatalf("%s not installed; CI must run the %s example", lang.tool, lang.key)
				}
				t.Skipf("%s not installed", lang.tool)
			}
			code, _ := ex[lang.key].(string)
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, lang.file), []byte(code), 0o644); err != nil {
				t.Fatal(err)
			}
			bin := lang.tool
			if lang.key == "shell" {
				bin = "sh"
			}
			run(t, dir, bin, lang.args)
		})
	}
}

// vfRun runs an example with the body on stdin and returns its stdout and
// exit status.
func vfRun(t *testing.T, dir, body, secret, sig, bin string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HERALD_SECRET="+secret, "HERALD_SIGNATURE="+sig)
	cmd.Stdin = strings.NewReader(body)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), 0
	case errors.As(err, &exit):
		if stdout.Len() == 0 && stderr.Len() > 0 && !strings.Contains(stderr.String(), "invalid") {
			t.Logf("%s %v stderr: %s", bin, args, stderr.String())
		}
		return stdout.String(), exit.ExitCode()
	default:
		t.Fatalf("%s %v: %v\n%s", bin, args, err, stderr.String())
		return "", -1
	}
}
