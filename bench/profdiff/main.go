// Command profdiff compares the CPU profiles of two Herald builds taken
// under the same send load (bench/profile.sh): where a send's CPU goes, in
// µs a send, part by part, side by side.
//
//	profdiff -ref BIN:SENDS:PROFILE[,PROFILE...] -work BIN:SENDS:PROFILE[,PROFILE...]
//
// BIN is the executable a profile was taken of, SENDS how many sends were
// answered while its profiles ran (all of them together), and the profiles
// are merged. It reads the samples through "go tool pprof -traces", so it
// needs nothing beyond Go. Standard library only.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	ref := flag.String("ref", "", "the reference build: BIN:SENDS:PROFILE[,PROFILE...]")
	work := flag.String("work", "", "the working tree's build, the same way")
	top := flag.Int("top", 20, "how many functions to list by their own CPU time")
	flag.Parse()
	if *ref == "" || *work == "" {
		fmt.Fprintln(os.Stderr, "usage: profdiff -ref BIN:SENDS:PROFILE[,...] -work BIN:SENDS:PROFILE[,...]")
		os.Exit(2)
	}
	var builds [2]*build
	for i, spec := range []string{*ref, *work} {
		b, err := load(spec)
		if err != nil {
			fmt.Fprintln(os.Stderr, "profdiff:", err)
			os.Exit(1)
		}
		builds[i] = b
	}
	fmt.Print(render(builds[0], builds[1], *top))
}

// build is one build's merged profile, reduced to CPU time by part and by
// function (flat), and the sends it served meanwhile.
type build struct {
	sends int
	total time.Duration
	parts map[string]time.Duration
	flat  map[string]time.Duration
}

func load(spec string) (*build, error) {
	bin, rest, ok1 := strings.Cut(spec, ":")
	n, profs, ok2 := strings.Cut(rest, ":")
	sends, err := strconv.Atoi(n)
	if !ok1 || !ok2 || err != nil || sends <= 0 || profs == "" {
		return nil, fmt.Errorf("%q: want BIN:SENDS:PROFILE[,PROFILE...] with SENDS > 0", spec)
	}
	args := append([]string{"tool", "pprof", "-traces", bin}, strings.Split(profs, ",")...)
	cmd := exec.Command("go", args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("go tool pprof: %w", err)
	}
	b, perr := parse(out, sends)
	_, _ = io.Copy(io.Discard, out) // the rest, after a parse error: pprof must not block writing it
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("go tool pprof -traces %s: %w", bin, err)
	}
	return b, perr
}

// parse reads the output of "go tool pprof -traces": after a header, one
// block per distinct stack, separated by lines of dashes, whose first line
// is the stack's CPU time and its leaf function, and whose other lines are
// its callers, out to the goroutine's first function.
func parse(r io.Reader, sends int) (*build, error) {
	b := &build{sends: sends, parts: map[string]time.Duration{}, flat: map[string]time.Duration{}}
	var stack []string
	var value time.Duration
	flush := func() {
		if len(stack) > 0 {
			b.total += value
			b.parts[part(stack)] += value
			b.flat[stack[0]] += value
		}
		stack = stack[:0]
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	inBlocks := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "-----------+") {
			flush()
			inBlocks = true
			continue
		}
		if !inBlocks || line == "" {
			continue
		}
		if len(stack) == 0 {
			v, fn, ok := strings.Cut(line, " ")
			d, err := time.ParseDuration(v)
			if !ok || err != nil {
				return nil, fmt.Errorf("pprof -traces: a stack that does not start with its time: %q", line)
			}
			value = d
			line = strings.TrimSpace(fn)
		}
		stack = append(stack, strings.TrimSuffix(line, " (inline)"))
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if b.total == 0 {
		return nil, fmt.Errorf("pprof -traces: no samples")
	}
	return b, nil
}

// parts names where a send's CPU goes, found by the functions on a
// sample's stack: the first rule whose marker a stack holds names it.
var parts = []struct{ name, marker string }{
	{"HTTP: read the request", "net/http.(*conn).readRequest"},
	{"HTTP: the handler", "net/http.serverHandler.ServeHTTP"},
	{"HTTP: write the answer", "net/http.(*response).finishRequest"},
	{"HTTP: the rest (connection, background read)", "net/http."},
	{"store: the writer (inserts, commits)", "store.(*Store).writer"},
	{"search indexer", "service.(*Service).runIndexer"},
	{"push worker", "delivery.(*Pusher)"},
	{"live stream hub", "herald/hub."},
	{"other Herald goroutines", "github.com/heraldhq/herald/"},
	{"GC (background)", "runtime.gcBgMarkWorker"},
	{"GC (background)", "runtime.bgsweep"},
	{"GC (background)", "runtime.bgscavenge"},
	{"Go scheduler", "runtime.mcall"},
	{"Go scheduler", "runtime.morestack"},
}

func part(stack []string) string {
	for _, p := range parts {
		for _, fn := range stack {
			if strings.Contains(fn, p.marker) {
				return p.name
			}
		}
	}
	return "other"
}

// render is the report: each part's CPU a send in both builds and their
// difference, then the functions with the most CPU of their own.
func render(ref, work *build, top int) string {
	var sb strings.Builder
	us := func(b *build, d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(b.sends) }
	fmt.Fprintf(&sb, "CPU a send, in µs (ref: %d sends, %.1fs of samples; work: %d sends, %.1fs)\n\n",
		ref.sends, ref.total.Seconds(), work.sends, work.total.Seconds())
	sb.WriteString("| part | ref | work | work - ref |\n|---|---:|---:|---:|\n")
	var names []string
	for _, p := range parts {
		if !slices.Contains(names, p.name) {
			names = append(names, p.name)
		}
	}
	names = append(names, "other")
	for _, n := range names {
		r, w := us(ref, ref.parts[n]), us(work, work.parts[n])
		if r == 0 && w == 0 {
			continue
		}
		fmt.Fprintf(&sb, "| %s | %.1f | %.1f | %+.1f |\n", n, r, w, w-r)
	}
	r, w := us(ref, ref.total), us(work, work.total)
	fmt.Fprintf(&sb, "| **total** | **%.1f** | **%.1f** | **%+.1f** (%.2fx) |\n", r, w, w-r, w/r)
	fmt.Fprintf(&sb, "\nFunctions by their own CPU, in µs a send (the %d largest in either build)\n\n", top)
	sb.WriteString("| function | ref | work | work - ref |\n|---|---:|---:|---:|\n")
	fns := map[string]bool{}
	for _, b := range []*build{ref, work} {
		for _, fn := range largest(b.flat, top) {
			fns[fn] = true
		}
	}
	list := make([]string, 0, len(fns))
	for fn := range fns {
		list = append(list, fn)
	}
	slices.SortFunc(list, func(a, b string) int {
		da := max(us(ref, ref.flat[a]), us(work, work.flat[a]))
		db := max(us(ref, ref.flat[b]), us(work, work.flat[b]))
		if da != db {
			if da > db {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, fn := range list {
		r, w := us(ref, ref.flat[fn]), us(work, work.flat[fn])
		fmt.Fprintf(&sb, "| `%s` | %.1f | %.1f | %+.1f |\n", fn, r, w, w-r)
	}
	return sb.String()
}

// largest is the n keys of m with the largest values.
func largest(m map[string]time.Duration, n int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			if m[a] > m[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return keys[:min(n, len(keys))]
}
