package store

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/internal/testkit"
)

// TestRateBucketsShared: two stores on one PostgreSQL database (two
// replicas) spend one bucket: five tokens a minute in all, not each.
func TestRateBucketsShared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	clk := testkit.NewClockAt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	a := openFoundation(t, dsn, Options{Now: clk.Now})
	b := openFoundation(t, dsn, Options{Now: clk.Now})

	take := func(s *Store, key string, perMinute int) (float64, bool) {
		t.Helper()
		tokens, ok, err := s.TakeRateToken(ctx, key, perMinute)
		if err != nil {
			t.Fatal(err)
		}
		return tokens, ok
	}
	var oks []bool
	for i := range 7 {
		_, ok := take([]*Store{a, b}[i%2], "send|ch_1", 5)
		oks = append(oks, ok)
	}
	if want := []bool{true, true, true, true, true, false, false}; !slices.Equal(oks, want) {
		t.Fatalf("seven takes over two replicas: %v, want %v", oks, want)
	}
	if tokens, ok := take(a, "send|ch_2", 5); !ok || tokens != 4 {
		t.Errorf("another key: %v tokens, ok %v; want its own full bucket (4 left)", tokens, ok)
	}

	// A token comes back every 12 s at 5 a minute.
	clk.Advance(11 * time.Second)
	if _, ok := take(b, "send|ch_1", 5); ok {
		t.Error("a token came back before 12 s")
	}
	clk.Advance(time.Second)
	if tokens, ok := take(b, "send|ch_1", 5); !ok || tokens > 0.001 {
		t.Errorf("after 12 s: ok %v, %v tokens left; want one token, spent", ok, tokens)
	}

	// An upgrade to 10 a minute: the 5 used still count, 5 are left.
	clk.Advance(time.Minute) // full again: 5 of 5
	for range 5 {
		take(a, "send|ch_3", 5)
	}
	n := 0
	for range 10 {
		if _, ok := take(b, "send|ch_3", 10); ok {
			n++
		}
	}
	if n != 5 {
		t.Errorf("after an upgrade from 5 to 10 with 5 used: %d more takes, want 5", n)
	}
	// A downgrade back to 5 with 10 used: empty, not 5 in debt.
	if tokens, ok := take(a, "send|ch_3", 5); ok || tokens != 0 {
		t.Errorf("after a downgrade with everything used: ok %v, %v tokens; want refused, 0", ok, tokens)
	}

	// A minute idle: swept, and the next take finds a full bucket.
	clk.Advance(2 * time.Minute)
	if swept, err := a.SweepRateBuckets(ctx); err != nil || swept != 3 {
		t.Errorf("SweepRateBuckets = %d, %v; want the 3 idle buckets", swept, err)
	}
	if tokens, ok := take(a, "send|ch_1", 5); !ok || tokens != 4 {
		t.Errorf("after the sweep: %v tokens, ok %v; want a full bucket", tokens, ok)
	}
}

// TestRateBucketsSQLite: a single SQLite process keeps its limits in
// memory; the store says so instead of pretending.
func TestRateBucketsSQLite(t *testing.T) {
	t.Parallel()
	s := openFoundation(t, filepath.Join(t.TempDir(), "herald.db"), Options{})
	if _, _, err := s.TakeRateToken(context.Background(), "k", 5); !errors.Is(err, errPostgresOnly) {
		t.Errorf("TakeRateToken on SQLite: %v, want errPostgresOnly", err)
	}
	if n, err := s.SweepRateBuckets(context.Background()); n != 0 || err != nil {
		t.Errorf("SweepRateBuckets on SQLite = %d, %v", n, err)
	}
}

// TestRateTakesGrouped: takes that arrive together share a statement, and
// each gets the answer one take at a time would have given it. Two
// replicas, 200 takes at once of a bucket of 50: exactly 50 get a token,
// and the tokens they report left are 49 down to 0, each once.
func TestRateTakesGrouped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	clk := testkit.NewClockAt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	stores := []*Store{openFoundation(t, dsn, Options{Now: clk.Now}), openFoundation(t, dsn, Options{Now: clk.Now})}

	type answer struct {
		tokens float64
		ok     bool
		err    error
	}
	answers := make(chan answer, 200)
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tokens, ok, err := stores[i%2].TakeRateToken(ctx, "send|ch_g", 50)
			answers <- answer{tokens, ok, err}
		}()
	}
	wg.Wait()
	close(answers)
	var left []float64
	refused := 0
	for a := range answers {
		switch {
		case a.err != nil:
			t.Fatal(a.err)
		case a.ok:
			left = append(left, a.tokens)
		default:
			refused++
			if a.tokens != 0 {
				t.Errorf("a refused take reports %v tokens left, want 0", a.tokens)
			}
		}
	}
	slices.Sort(left)
	want := make([]float64, 50)
	for i := range want {
		want[i] = float64(i)
	}
	if !slices.Equal(left, want) || refused != 150 {
		t.Errorf("200 takes of 50 tokens: %d refused, the others left %v; want 150 refused and 0..49 once each", refused, left)
	}
}

// TestRateTakesSizeChange: one statement updates a bucket once, so takes
// of one key with a second size (its plan changed) wait for the next
// statement, and so do that key's takes after them, to keep their order.
func TestRateTakesSizeChange(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	clk := testkit.NewClockAt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := openFoundation(t, dsn, Options{Now: clk.Now})

	take := func(key string, perMinute int) *takeReq {
		return &takeReq{key: key, perMinute: perMinute, done: make(chan takeResult, 1)}
	}
	reqs := []*takeReq{take("a", 5), take("a", 5), take("b", 3), take("a", 10), take("a", 5)}
	check := func(r *takeReq, tokens float64, ok bool) {
		t.Helper()
		select {
		case got := <-r.done:
			if got.err != nil || got.tokens != tokens || got.ok != ok {
				t.Errorf("take of %s/%d: %+v; want %v tokens, ok %v", r.key, r.perMinute, got, tokens, ok)
			}
		default:
			t.Errorf("take of %s/%d: no answer", r.key, r.perMinute)
		}
	}
	later := s.runTakes(reqs)
	if !slices.Equal(later, reqs[3:]) {
		t.Fatalf("left for later: %d takes, want the last 2", len(later))
	}
	check(reqs[0], 4, true)
	check(reqs[1], 3, true)
	check(reqs[2], 2, true)
	// 3 left of 5; at 10 a minute the 2 used still count: 8, then 7.
	if later = s.runTakes(later); !slices.Equal(later, reqs[4:]) {
		t.Fatalf("left for later: %d takes, want the last one", len(later))
	}
	check(reqs[3], 7, true)
	// Back to 5 with 3 used: 2, then 1.
	if later = s.runTakes(later); len(later) != 0 {
		t.Fatalf("left for later: %d takes, want none", len(later))
	}
	check(reqs[4], 1, true)
}
