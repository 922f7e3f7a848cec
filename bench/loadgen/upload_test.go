package main

import (
	"bytes"
	"fmt"
	"image/jpeg"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestMakeJPEG: the picture is a 1280×720 JPEG of at most the size asked
// and not much less, the same bytes every time.
func TestMakeJPEG(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jpg"), filepath.Join(dir, "b.jpg")
	for _, p := range []string{a, b} {
		if err := makeJPEG([]string{"200", p}); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(data); n > 200*1024 || n < 150*1024 {
		t.Errorf("%d bytes, want 150 to 200 KB", n)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width != 1280 || cfg.Height != 720 {
		t.Errorf("DecodeConfig = %+v, %v; want a 1280×720 JPEG", cfg, err)
	}
	if other, _ := os.ReadFile(b); !bytes.Equal(data, other) {
		t.Error("two runs made different files")
	}
	if err := makeJPEG([]string{"3", a}); err == nil {
		t.Error("3 KB was accepted")
	}
}

// TestMeasureUpload: with -file every request is a multipart send whose
// payload part is the JSON and whose file part is the file, byte for byte;
// the ceiling reads such a send too.
func TestMeasureUpload(t *testing.T) {
	dir := t.TempDir()
	pic := filepath.Join(dir, "snapshot.jpg")
	if err := makeJPEG([]string{"50", pic}); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(pic)
	var bad atomic.Value
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		var payload, name string
		var file []byte
		mr, err := r.MultipartReader()
		for err == nil {
			p, perr := mr.NextPart()
			if perr != nil {
				break
			}
			data, _ := io.ReadAll(p)
			switch p.FormName() {
			case "payload":
				payload = string(data)
			case "file":
				file, name = data, p.FileName()
			}
		}
		if err != nil || payload != `{"title":"Person at the gate"}` || name != "snapshot.jpg" || !bytes.Equal(file, want) {
			bad.Store(fmt.Sprintf("err %v, payload %q, file %q of %d bytes", err, payload, name, len(file)))
		}
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	o, err := parseFlags([]string{"-url", srv.URL + "/v1/send/tok", "-file", pic, "-body", `{"title":"Person at the gate"}`})
	if err != nil {
		t.Fatal(err)
	}
	o.duration, o.warmup = 200*time.Millisecond, 0
	r := measure("image", o.urls, 2, o)
	if v := bad.Load(); v != nil {
		t.Fatalf("the server got %s", v)
	}
	if r.OK == 0 || r.Errs != 0 || int64(r.OK) != n.Load() {
		t.Fatalf("ok=%d errors=%d of %d (%s)", r.OK, r.Errs, n.Load(), r.FirstErr)
	}
	ceiling, stop, err := startCeiling()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if r := measure("ceiling", []string{ceiling}, 2, o); r.OK == 0 || r.Errs != 0 {
		t.Fatalf("ceiling: ok=%d errors=%d (%s)", r.OK, r.Errs, r.FirstErr)
	}
	if _, err := parseFlags([]string{"-url", srv.URL + "/v1/send/tok", "-file", filepath.Join(dir, "missing.jpg")}); err == nil {
		t.Error("a missing -file was accepted")
	}
}

// TestReportUpload: an upload run is shown beside the text send (its share
// of it), not against the text ceiling, and held to a memory bound instead
// of the text send's latency.
func TestReportUpload(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs.jsonl")
	for _, r := range []result{
		{Target: "ceiling", Conns: 8, OK: 4000, Elapsed: time.Second},
		{Target: "POST /v1/send", Conns: 8, OK: 1000, Elapsed: time.Second, RSSKB: 40 * 1024},
		{Target: "image 200 KB", Conns: 8, OK: 100, Elapsed: time.Second, P99: 300 * time.Millisecond, RSSKB: 120 * 1024},
	} {
		if err := appendJSON(runs, r); err != nil {
			t.Fatal(err)
		}
	}
	out := captureStdout(t, func() {
		if err := report([]string{runs}); err != nil {
			t.Fatal(err)
		}
	})
	for _, want := range []string{
		"| image 200 KB | 8 | 100 | 0 | 100 | 0.00 | 300.00 |  | 10% |  | 120.0 |",
		"- peak RSS < 100 MB: 120.0 MB (MISSED)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "p99 < 25 ms: 300.00") {
		t.Errorf("the upload is held to the text send's p99:\n%s", out)
	}
}
