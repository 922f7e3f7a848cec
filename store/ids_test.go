package store

import (
	"sort"
	"strings"
	"testing"
	"time"
)

// TestNewToken: exactly n base62 characters, drawn from the whole alphabet.
func TestNewToken(t *testing.T) {
	for _, n := range []int{1, 2, 7, 24, 64, 2000} {
		tok := NewToken(n)
		if len(tok) != n {
			t.Errorf("NewToken(%d) has %d characters", n, len(tok))
		}
		for _, c := range tok {
			if !strings.ContainsRune(base62, c) {
				t.Fatalf("NewToken(%d) = %q holds %q, not base62", n, tok, c)
			}
		}
	}
	// 2000 draws miss one of 62 equally likely characters with a
	// probability below 62 * (61/62)^2000, about 10^-12.
	seen := map[rune]bool{}
	for _, c := range NewToken(2000) {
		seen[c] = true
	}
	if len(seen) != len(base62) {
		t.Errorf("2000 random characters use %d of the %d base62 ones", len(seen), len(base62))
	}
}

// TestNewSortableID: the prefix, 8 characters of the time in milliseconds
// (read back exactly), 20 random ones; later ids sort after earlier ones.
func TestNewSortableID(t *testing.T) {
	times := []time.Time{time.UnixMilli(0), time.UnixMilli(61), time.UnixMilli(62),
		time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 7e6, time.UTC), time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)}
	var ids []string
	for _, at := range times {
		id := NewSortableID("msg_", at)
		if len(id) != len("msg_")+28 || !strings.HasPrefix(id, "msg_") {
			t.Fatalf("NewSortableID = %q", id)
		}
		var ms int64
		for _, c := range id[4:12] {
			ms = ms*62 + int64(strings.IndexRune(base62, c))
		}
		if ms != at.UnixMilli() {
			t.Errorf("%q carries %d ms, want %d", id, ms, at.UnixMilli())
		}
		ids = append(ids, id)
	}
	if !sort.StringsAreSorted(ids) {
		t.Errorf("ids in time order do not sort: %v", ids)
	}
}
