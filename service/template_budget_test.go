package service

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
)

// bigBody is a webhook body of about size bytes (the request limit is 1 MiB):
// objects with numbers, text and lists, as a real payload has.
func bigBody(size int) string {
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"item-%06d","ok":true,"tags":["a<b","c&d"]}`, i, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

func repeat(action string, n int) string { return strings.Repeat(action, n) }

// TestTemplateRunaway: templates written to grow memory or burn CPU on a
// webhook stop with a 400 naming the field, allocate a few MiB at most,
// answer within a second (even under the race detector), and leave no
// goroutine running.
func TestTemplateRunaway(t *testing.T) {
	small := `{"a":"` + strings.Repeat("x", 1000) + `"}`
	big, medium := bigBody(1_000_000), bigBody(100_000)
	over := "its functions read and make more than 1024 KiB"
	cases := []struct {
		name, body, input, want string
	}{
		{"doubling a variable", `{{$x := printf "%v" .}}` + repeat(`{{$x = print $x $x}}`, 24) + `{{len $x}}`, small, over},
		{"print of a large body, 499 times", `{{$x := 0}}` + repeat(`{{$x = print .}}`, 499), big, over},
		{"println, 450 times", `{{$x := 0}}` + repeat(`{{$x = println .}}`, 450), big, over},
		{"js, 499 times", `{{$x := 0}}` + repeat(`{{$x = js .}}`, 499), big, over},
		{"html, 499 times", `{{$x := 0}}` + repeat(`{{$x = html .}}`, 499), big, over},
		{"urlquery, 420 times", `{{$x := 0}}` + repeat(`{{$x = urlquery .}}`, 420), big, over},
		{"json, 499 times", `{{$x := 0}}` + repeat(`{{$x = json .}}`, 499), big, over},
		{"join, 330 times", `{{$x := 0}}` + repeat(`{{$x = join "," .items}}`, 330), big, over},
		{"helpers, mixed", `{{$x := 0}}` + repeat(`{{$x = upper .}}{{$x = truncate 900000 .}}{{$x = trim .}}{{$x = lower .}}`, 100), big, over},
		{"js, html, urlquery, json, join of 100 kB", `{{$x := 0}}` + repeat(`{{$x = js .}}{{$x = html .}}{{$x = urlquery .}}{{$x = json .}}{{$x = join "," .items}}`, 90), medium, over},
		{"print of 100 kB, 499 times", `{{$x := 0}}` + repeat(`{{$x = print .}}`, 499), medium, over},
		{"contains reads the body", repeat(`{{if contains "zz" .}}{{end}}`, 250), big, over},
		{"escapers of a doubled text", `{{$x := print .}}` + repeat(`{{$x = js (html (urlquery $x $x))}}`, 40), small, over},
		{"printf reusing an argument", `{{printf "` + repeat(`%[1]v`, 1600) + `" .}}`, small, over},
		{"printf padding every value", `{{printf "%999v" .items}}`, big, over},
		{"ranges over an object", `{{range .a}}{{range $.o}}{{break}}{{end}}{{end}}`,
			`{"a":[` + strings.Repeat("0,", 5000) + `0],"o":{` + objectKeys(30000) + `}}`, over},
		{"printing a large body", repeat(`{{.}}`, 1000), big, "produces more than 64 KiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tm := &store.Template{Title: "t", Body: c.body}
			if err := CheckTemplate(tm); err != nil {
				t.Fatalf("CheckTemplate: %v", err)
			}
			// What decoding the body allocates, measured with a template
			// that does nothing with it.
			start := time.Now()
			decoding := allocated(func() {
				_, _ = RenderTemplate(context.Background(), &store.Template{Title: "t", Body: "b"}, []byte(c.input))
			})
			decodingTook := time.Since(start)
			goroutines := runtime.NumGoroutine()
			var err error
			start = time.Now()
			alloc := allocated(func() { _, err = RenderTemplate(context.Background(), tm, []byte(c.input)) })
			took := time.Since(start)
			var e *Error
			if !errors.As(err, &e) || e.Kind != Invalid {
				t.Fatalf("err = %#v, want an Invalid *Error", err)
			}
			// A slow machine may reach the deadline first; either is a stop.
			if !strings.HasPrefix(e.Message, "template.body failed: ") ||
				!strings.Contains(e.Message, c.want) && !strings.Contains(e.Message, "ran longer than") {
				t.Fatalf("err = %q, want template.body failed: ...%s", e.Message, c.want)
			}
			// The 250 ms deadline bounds the template; decoding 1 MB under
			// the race detector on a busy machine may take long itself.
			if took-decodingTook > time.Second {
				t.Errorf("took %s, %s beyond decoding the body; want under 1s", took, took-decodingTook)
			}
			// Everything the template allocated, freed or not, beyond
			// decoding the body (13 MiB for the 1 MB one, whatever the
			// template).
			if beyond := alloc - decoding; beyond > 8<<20 {
				t.Errorf("allocated %.1f MiB beyond decoding the body; want under 8 MiB", mib(beyond))
			}
			waitGoroutines(t, goroutines)
			t.Logf("%s in %s, %.1f MiB allocated beyond decoding", e.Message, took, mib(alloc-decoding))
		})
	}
}

// allocated is how many bytes f allocates, freed or not.
func allocated(f func()) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc)
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

func objectKeys(n int) string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf(`"k%d":0`, i)
	}
	return strings.Join(keys, ",")
}

// waitGoroutines waits briefly for the goroutine count to come back to n.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, %d before the render", runtime.NumGoroutine(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTemplateDeadlineStopsRender: a render cut by its deadline has
// stopped when RenderTemplate returns, within a few milliseconds of it.
func TestTemplateDeadlineStopsRender(t *testing.T) {
	// Each iteration is cheap and within every budget but time: only the
	// deadline stops this (the iteration budget is far away).
	tm := &store.Template{Title: "t", Body: `{{range .a}}{{range $.a}}{{if eq . "x"}}{{end}}{{end}}{{end}}`}
	input := `{"a":[` + strings.Repeat(`"y",`, 299) + `"y"]}`
	// The whole render, for scale: a busy machine under the race detector
	// runs both renders slower alike.
	defer func(d time.Duration) { renderTimeout = d }(renderTimeout)
	renderTimeout = time.Minute
	start := time.Now()
	if _, err := RenderTemplate(context.Background(), tm, []byte(input)); err != nil {
		t.Fatalf("the whole render: %v", err)
	}
	full := time.Since(start)
	renderTimeout = TemplateTimeout
	goroutines := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err := RenderTemplate(ctx, tm, []byte(input))
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "template.body failed: ") {
		t.Fatalf("err = %v, want template.body failed", err)
	}
	if bound := max(full/2, 20*time.Millisecond+50*time.Millisecond); took > bound {
		t.Errorf("returned %s after a 20ms deadline, the whole render taking %s; want under %s", took, full, bound)
	}
	waitGoroutines(t, goroutines)
}

// TestTemplateBudgetFitsOrdinaryUse: a payload of 200 kB still renders
// with ranges, printf, join, json (of all of it, truncated), len, index
// and slice, well within the budget.
func TestTemplateBudgetFitsOrdinaryUse(t *testing.T) {
	// The byte budget is under test, not the time: under the race detector
	// on a busy machine this render can take longer than TemplateTimeout.
	// Not parallel, so no other render sees the longer deadline.
	defer func(d time.Duration) { renderTimeout = d }(renderTimeout)
	renderTimeout = time.Minute
	input := bigBody(200_000)
	tm := &store.Template{
		Title: `{{len .items}} items, first {{(index .items 0).name}}`,
		Body: `{{range $i, $e := .items}}{{if lt $i 3}}{{printf "%s=%v " $e.name $e.id}}{{end}}{{end}}` +
			`{{join "," (index .items 1).tags}} {{truncate 30 (json .)}} {{upper (slice (print .items) 0 12)}}`,
		Priority: `{{if gt (len .items) 1000}}high{{end}}`,
	}
	if err := CheckTemplate(tm); err != nil {
		t.Fatal(err)
	}
	m, err := RenderTemplate(context.Background(), tm, []byte(input))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.Title, "3") || !strings.HasSuffix(m.Title, "items, first item-000000") || m.Priority != "high" {
		t.Errorf("title %q, priority %q", m.Title, m.Priority)
	}
	if want := `item-000000=0 item-000001=1 item-000002=2 a<b,c&d {"items":[{"id":0,"name":"ite… [MAP[ID:0 NA`; m.Body != want {
		t.Errorf("body %q, want %q", m.Body, want)
	}
}
