// Command report prints bench/fanout.sh's JSON lines as a Markdown table:
// each scenario's previous and new figures side by side, with the ratios
// new/previous of p99 latency and CPU per event, and with NTFY=1 the new
// build's ntfy subscriptions beside its native streams. With several
// rounds it shows each scenario's median by CPU per event.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
)

type result struct {
	Label       string  `json:"label"`
	Streams     int     `json:"streams"`
	Users       int     `json:"users"`
	Expected    int64   `json:"expected"`
	Delivered   int64   `json:"delivered"`
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
	CPUSeconds  float64 `json:"cpu_s"`
	CPUPerEvent float64 `json:"cpu_us_per_event"`
	IdleKBPer   float64 `json:"idle_kb_per_stream"`
	ClientCPU   float64 `json:"client_cpu_us_per_event"`
}

type scenario struct{ users, streams int }

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: report FILE.jsonl")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	runs := map[scenario]map[string][]result{}
	var order []scenario
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r result
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		k := scenario{r.Users, r.Streams}
		if runs[k] == nil {
			runs[k] = map[string][]result{}
			order = append(order, k)
		}
		runs[k][r.Label] = append(runs[k][r.Label], r)
	}
	fmt.Println("| users | streams | previous: delivered, p50/p99, CPU/event, KB/idle stream (generator's CPU/event) | new: the same | new/prev p99 | new/prev CPU/event |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, k := range order {
		p, okP := median(runs[k]["prev"])
		n, okN := median(runs[k]["new"])
		if !okP || !okN {
			continue
		}
		fmt.Printf("| %d | %d | %s | %s | %.2f | %.2f |\n", k.users, k.streams, cell(p), cell(n),
			n.P99ms/p.P99ms, n.CPUPerEvent/p.CPUPerEvent)
	}
	// NTFY=1: the new build's ntfy JSON subscriptions beside its native
	// streams. NTFY_SERVER=...: an ntfy server beside those subscriptions,
	// the same subscriptions and publishes, one server against the other.
	pairTable(order, runs, "new", "ntfy",
		"| users | streams | new, GET /v1/stream | new, ntfy JSON subscriptions | ntfy/native p99 | ntfy/native CPU/event |")
	pairTable(order, runs, "ntfyd", "ntfy",
		"| users | streams | ntfy server | new, ntfy JSON subscriptions | new/ntfy p99 | new/ntfy CPU/event |")
}

// pairTable prints, when the runs have both labels, the median run of
// label b beside label a's, with the ratios b/a of p99 and CPU per event.
func pairTable(order []scenario, runs map[scenario]map[string][]result, a, b, header string) {
	printed := false
	for _, k := range order {
		x, okX := median(runs[k][a])
		y, okY := median(runs[k][b])
		if !okX || !okY {
			continue
		}
		if !printed {
			fmt.Println()
			fmt.Println(header)
			fmt.Println("|---|---|---|---|---|---|")
			printed = true
		}
		fmt.Printf("| %d | %d | %s | %s | %.2f | %.2f |\n", k.users, k.streams, cell(x), cell(y),
			y.P99ms/x.P99ms, y.CPUPerEvent/x.CPUPerEvent)
	}
}

func cell(r result) string {
	return fmt.Sprintf("%d/%d, %.1f/%.1f ms, %.1f µs, %.0f KB (%.1f µs)", r.Delivered, r.Expected, r.P50ms, r.P99ms, r.CPUPerEvent, r.IdleKBPer, r.ClientCPU)
}

// median is the run with the median CPU per event.
func median(rs []result) (result, bool) {
	if len(rs) == 0 {
		return result{}, false
	}
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b result) int {
		switch {
		case a.CPUPerEvent < b.CPUPerEvent:
			return -1
		case a.CPUPerEvent > b.CPUPerEvent:
			return 1
		}
		return 0
	})
	return rs[len(rs)/2], true
}
