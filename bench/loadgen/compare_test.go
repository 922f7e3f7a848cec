package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCompareReportPairsRounds pairs each round's ref and work runs, whichever
// ran first, with that round's ceilings, and gives the range of the ratios.
func TestCompareReportPairsRounds(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs.jsonl")
	for _, r := range []result{
		{Target: "ceiling", Conns: 32, OK: 20000, Elapsed: time.Second},
		{Target: "storage", Conns: 32, OK: 16000, Elapsed: time.Second, CPU: 720 * time.Millisecond},
		{Target: "ref", Conns: 32, OK: 10000, Elapsed: time.Second, CPU: time.Second, RSSKB: 40 << 10},
		{Target: "work", Conns: 32, OK: 11000, Elapsed: time.Second, CPU: 990 * time.Millisecond, RSSKB: 45 << 10},
		{Target: "ceiling", Conns: 32, OK: 10000, Elapsed: time.Second},
		{Target: "work", Conns: 32, OK: 4000, Elapsed: time.Second, CPU: 400 * time.Millisecond, RSSKB: 46 << 10},
		{Target: "ref", Conns: 32, OK: 5000, Elapsed: time.Second, CPU: 250 * time.Millisecond, RSSKB: 41 << 10},
	} {
		if err := appendJSON(runs, r); err != nil {
			t.Fatal(err)
		}
	}
	out := captureStdout(t, func() {
		if err := compareReport([]string{runs, "-note", "ref f45c406"}); err != nil {
			t.Fatal(err)
		}
	})
	for _, want := range []string{
		"- ref f45c406",
		// Round 1: 1.10x the sends, 90 against 100 µs, 55% of a 20,000/s ceiling.
		"| 1 | 32 | ref | 10000 | 11000 | 1.10x | 100 | 90 | 0.90x |",
		// The storage ceiling: 11,000 of its 16,000/s, 90 µs against its 45.
		"| 50% | 55% | 69% | 2.00x | 0 |",
		// Round 2 ran work first; its ceiling is the second one.
		"| 2 | 32 | work | 5000 | 4000 | 0.80x | 50 | 100 | 2.00x |",
		// No storage ceiling measured that round.
		"| 50% | 40% |  |  | 0 |",
		"- 32 connections: req/s 0.80-1.10x, CPU per send 0.90-2.00x, work peak RSS 45.0-46.0 MB, work at 40-55% of the ceiling, at 69-69% of the storage ceiling's sends/s with 2.00-2.00x its CPU per send",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestCompareReportNeedsPairs refuses a file whose builds ran unequal rounds.
func TestCompareReportNeedsPairs(t *testing.T) {
	_, err := renderCompare([]result{{Target: "ref", Conns: 8, OK: 1, Elapsed: time.Second}})
	if err == nil || !strings.Contains(err.Error(), "1 ref runs but 0 work runs") {
		t.Fatalf("err = %v", err)
	}
}
