package main

import (
	"fmt"
	"slices"
	"strings"
)

// compareReport renders the runs of an alternating comparison of two builds
// (bench/compare.sh): "loadgen -compare FILE [-out DIR] [-note TEXT]...".
// FILE holds the runs of the targets "ref" and "work", appended round after
// round, each round with its own ceiling run. The i-th ref run at a
// connection count is paired with the i-th work run at that count, so each
// ratio compares two runs made moments apart, on the same machine, under
// the same load.
func compareReport(args []string) error {
	rows, head, outDir, err := readRuns("loadgen -compare", "Herald: the working tree against a reference build", args, nil)
	if err != nil {
		return err
	}
	table, err := renderCompare(rows)
	if err != nil {
		return err
	}
	return write(head+table, outDir)
}

// pair is one round at one connection count: the reference's run, the
// working tree's, and the ceilings measured in the same round.
type pair struct {
	conns        int
	ref, work    result
	ceiling      float64 // req/s of the bare handler in the same round, 0 if none
	storage      result  // the storage ceiling's run in the same round (bench/storeceiling), if any
	round        int
	workRanFirst bool
}

// pairRuns pairs the i-th ref run with the i-th work run at each connection
// count, with the ceiling and storage ceiling runs nearest before the
// earlier of the two.
func pairRuns(rows []result) ([]pair, error) {
	type key struct {
		target string
		conns  int
	}
	seen := map[key][]int{}
	for i, r := range rows {
		seen[key{r.Target, r.Conns}] = append(seen[key{r.Target, r.Conns}], i)
	}
	var conns []int
	for _, r := range rows {
		if r.Target != "ceiling" && r.Target != "storage" && !slices.Contains(conns, r.Conns) {
			conns = append(conns, r.Conns)
		}
	}
	var out []pair
	for _, n := range conns {
		refs, works := seen[key{"ref", n}], seen[key{"work", n}]
		if len(refs) != len(works) {
			return nil, fmt.Errorf("%d connections: %d ref runs but %d work runs", n, len(refs), len(works))
		}
		for i := range refs {
			p := pair{conns: n, ref: rows[refs[i]], work: rows[works[i]], round: i + 1,
				workRanFirst: works[i] < refs[i]}
			first := min(refs[i], works[i])
			for j := first - 1; j >= 0; j-- {
				if rows[j].Conns != n {
					continue
				}
				if rows[j].Target == "ref" || rows[j].Target == "work" {
					break // the round before
				}
				if rows[j].Target == "ceiling" && p.ceiling == 0 {
					p.ceiling = rows[j].rps()
				}
				if rows[j].Target == "storage" && p.storage.Target == "" {
					p.storage = rows[j]
				}
			}
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no ref and work runs to compare")
	}
	return out, nil
}

func cpuPerReqUS(r result) float64 {
	if r.CPU <= 0 || r.OK+r.Errs == 0 {
		return 0
	}
	return float64(r.CPU.Microseconds()) / float64(r.OK+r.Errs)
}

func ratio(a, b float64) string {
	if a <= 0 || b <= 0 {
		return ""
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// renderCompare prints one line per round and connection count, then the
// range of each ratio over the rounds: sends/s work/ref (higher is better),
// CPU per send work/ref (lower is better), both builds' share of the
// ceiling, and when the round measured the storage ceiling, the working
// tree's share of its sends/s and its CPU per send against the ceiling's.
func renderCompare(rows []result) (string, error) {
	pairs, err := pairRuns(rows)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("\n| round | conns | first | ref req/s | work req/s | work/ref req/s | ref CPU µs/req | work CPU µs/req | work/ref CPU | ref p99 ms | work p99 ms | ref RSS MB | work RSS MB | ref of ceiling | work of ceiling | work of storage | work/storage CPU | errors |\n")
	b.WriteString("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	type span struct{ lo, hi float64 }
	widen := func(s *span, v float64) {
		if v <= 0 {
			return
		}
		if s.lo == 0 || v < s.lo {
			s.lo = v
		}
		s.hi = max(s.hi, v)
	}
	rps, cpu, rssWork, ofCeil := map[int]*span{}, map[int]*span{}, map[int]*span{}, map[int]*span{}
	ofStore, storeCPU := map[int]*span{}, map[int]*span{}
	var conns []int
	for _, p := range pairs {
		if !slices.Contains(conns, p.conns) {
			conns = append(conns, p.conns)
			rps[p.conns], cpu[p.conns], rssWork[p.conns], ofCeil[p.conns] = &span{}, &span{}, &span{}, &span{}
			ofStore[p.conns], storeCPU[p.conns] = &span{}, &span{}
		}
		first := "ref"
		if p.workRanFirst {
			first = "work"
		}
		rc, wc := cpuPerReqUS(p.ref), cpuPerReqUS(p.work)
		share := func(r result) string {
			if p.ceiling <= 0 {
				return ""
			}
			return fmt.Sprintf("%.0f%%", 100*r.rps()/p.ceiling)
		}
		ofStorage, sc := "", cpuPerReqUS(p.storage)
		if p.storage.Target != "" && p.storage.rps() > 0 {
			ofStorage = fmt.Sprintf("%.0f%%", 100*p.work.rps()/p.storage.rps())
			widen(ofStore[p.conns], p.work.rps()/p.storage.rps())
			if sc > 0 && wc > 0 {
				widen(storeCPU[p.conns], wc/sc)
			}
		}
		fmt.Fprintf(&b, "| %d | %d | %s | %.0f | %.0f | %s | %.0f | %.0f | %s | %s | %s | %.1f | %.1f | %s | %s | %s | %s | %d |\n",
			p.round, p.conns, first, p.ref.rps(), p.work.rps(), ratio(p.work.rps(), p.ref.rps()),
			rc, wc, ratio(wc, rc), ms(p.ref.P99), ms(p.work.P99),
			float64(p.ref.RSSKB)/1024, float64(p.work.RSSKB)/1024, share(p.ref), share(p.work),
			ofStorage, ratio(wc, sc), p.ref.Errs+p.work.Errs+p.storage.Errs)
		widen(rps[p.conns], p.work.rps()/p.ref.rps())
		if rc > 0 && wc > 0 {
			widen(cpu[p.conns], wc/rc)
		}
		widen(rssWork[p.conns], float64(p.work.RSSKB)/1024)
		if p.ceiling > 0 {
			widen(ofCeil[p.conns], p.work.rps()/p.ceiling)
		}
	}
	b.WriteString("\nOver the rounds (work against ref; req/s higher is better, CPU lower is better):\n\n")
	for _, n := range conns {
		fmt.Fprintf(&b, "- %d connections: req/s %.2f-%.2fx, CPU per send %.2f-%.2fx, work peak RSS %.1f-%.1f MB",
			n, rps[n].lo, rps[n].hi, cpu[n].lo, cpu[n].hi, rssWork[n].lo, rssWork[n].hi)
		if ofCeil[n].hi > 0 {
			fmt.Fprintf(&b, ", work at %.0f-%.0f%% of the ceiling", 100*ofCeil[n].lo, 100*ofCeil[n].hi)
		}
		if ofStore[n].hi > 0 {
			fmt.Fprintf(&b, ", at %.0f-%.0f%% of the storage ceiling's sends/s", 100*ofStore[n].lo, 100*ofStore[n].hi)
			if storeCPU[n].hi > 0 {
				fmt.Fprintf(&b, " with %.2f-%.2fx its CPU per send", storeCPU[n].lo, storeCPU[n].hi)
			}
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}
