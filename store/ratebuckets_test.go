package store

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/pgtest"
)

// TestRateBucketsShared: two stores on one PostgreSQL database (two
// replicas) spend one bucket: five tokens a minute in all, not each.
func TestRateBucketsShared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	clk := &foundationClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
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
