package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// wantLimit checks that err is the *LimitError of a user who has have of
// at most max.
func wantLimit(t *testing.T, what string, err error, have, max int) {
	t.Helper()
	var le *LimitError
	if !errors.Is(err, ErrLimit) || !errors.As(err, &le) || le.Have != have || le.Max != max {
		t.Fatalf("%s over the cap: %v, want a LimitError with %d of %d", what, err, have, max)
	}
}

// Each capped create stores up to its cap and refuses the next, storing
// nothing; what updates rather than creates (a token registered again, a
// channel pinned again) still works at the cap; another user's count is
// their own.
func TestCappedCreates(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openFoundation(t, dsn, Options{})
		u := &User{Email: "caps@example.com", Plan: "free"}
		other := &User{Email: "other@example.com", Plan: "free"}
		for _, x := range []*User{u, other} {
			if err := s.CreateUser(ctx, x); err != nil {
				t.Fatal(err)
			}
		}
		const max = 3
		var chans []string
		for i := range max {
			c := &Channel{UserID: u.ID, Name: fmt.Sprint("c", i)}
			if err := s.CreateChannelCapped(ctx, c, max); err != nil {
				t.Fatalf("channel %d: %v", i, err)
			}
			chans = append(chans, c.ID)
		}
		wantLimit(t, "channel", s.CreateChannelCapped(ctx, &Channel{UserID: u.ID, Name: "over"}, max), max, max)
		if got, _ := s.ListChannels(ctx, u.ID); len(got) != max {
			t.Fatalf("%d channels stored, want %d", len(got), max)
		}
		if err := s.CreateChannelCapped(ctx, &Channel{UserID: other.ID, Name: "theirs"}, max); err != nil {
			t.Fatalf("another user's first channel: %v", err)
		}

		for i := range max {
			if err := s.CreateFolderCapped(ctx, &Folder{UserID: u.ID, Name: fmt.Sprint("f", i)}, max); err != nil {
				t.Fatalf("folder %d: %v", i, err)
			}
		}
		wantLimit(t, "folder", s.CreateFolderCapped(ctx, &Folder{UserID: u.ID, Name: "over"}, max), max, max)
		if got, _ := s.ListFolders(ctx, u.ID); len(got) != max {
			t.Fatalf("%d folders stored, want %d", len(got), max)
		}

		for i := range max - 1 {
			if _, created, err := s.PinChannelCapped(ctx, u.ID, chans[i], max-1); err != nil || !created {
				t.Fatalf("pin %d: created %v, %v", i, created, err)
			}
		}
		_, _, err := s.PinChannelCapped(ctx, u.ID, chans[max-1], max-1)
		wantLimit(t, "pin", err, max-1, max-1)
		if p, created, err := s.PinChannelCapped(ctx, u.ID, chans[0], max-1); err != nil || created || p.Position != 0 {
			t.Fatalf("pinning a pinned channel at the cap = %+v, %v, %v; want the existing pin", p, created, err)
		}
		if got, _ := s.ListPins(ctx, u.ID); len(got) != max-1 {
			t.Fatalf("%d pins stored, want %d", len(got), max-1)
		}

		for i := range max {
			d := &Device{UserID: u.ID, Platform: "ios", Name: "phone", PushToken: fmt.Sprint("tok", i)}
			if err := s.RegisterDeviceCapped(ctx, d, max); err != nil {
				t.Fatalf("device %d: %v", i, err)
			}
		}
		wantLimit(t, "device", s.RegisterDeviceCapped(ctx, &Device{UserID: u.ID, Platform: "ios", PushToken: "tok-new"}, max), max, max)
		again := &Device{UserID: u.ID, Platform: "ios", Name: "renamed", PushToken: "tok1"}
		if err := s.RegisterDeviceCapped(ctx, again, max); err != nil {
			t.Fatalf("registering a token again at the cap: %v", err)
		}
		devs, _ := s.ListDevices(ctx, u.ID)
		// Two devices may share a creation millisecond, so the list's order
		// between them is not the test's business: find tok1 by its token.
		renamed := 0
		for _, d := range devs {
			if d.PushToken == "tok1" && d.ID == again.ID && d.Name == "renamed" {
				renamed++
			}
		}
		if len(devs) != max || renamed != 1 {
			t.Fatalf("devices after a registration again: %+v; want %d, tok1 renamed in place", devs, max)
		}
		// A cap of 0 is none: the CLI and copies create whatever there is.
		if err := s.CreateChannel(ctx, &Channel{UserID: u.ID, Name: "uncapped"}); err != nil {
			t.Fatalf("uncapped create: %v", err)
		}
		// A user over a lowered cap is told how many they have.
		wantLimit(t, "channel under a lower cap", s.CreateChannelCapped(ctx, &Channel{UserID: u.ID, Name: "x"}, 2), max+1, 2)
	})
}

// Creates that race for the last places: exactly the cap is stored,
// whatever the interleaving, and every other create is ErrLimit.
func TestCappedCreatesConcurrent(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openFoundation(t, dsn, Options{})
		u := &User{Email: "race@example.com", Plan: "free"}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		const n, max = 40, 10
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.CreateChannelCapped(ctx, &Channel{UserID: u.ID, Name: fmt.Sprint("c", i)}, max)
			}()
		}
		wg.Wait()
		ok := 0
		for i, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, ErrLimit):
				t.Errorf("create %d: %v", i, err)
			}
		}
		got, err := s.ListChannels(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ok != max || len(got) != max {
			t.Fatalf("%d creates succeeded, %d channels stored; want %d", ok, len(got), max)
		}
	})
}

// pagesOf reads a whole list a page of size at a time.
func pagesOf[T any](t *testing.T, size int, list func(Page) ([]T, Cursor, error)) (all []T, pages int) {
	t.Helper()
	p := Page{Limit: size}
	for {
		rows, next, err := list(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) > size {
			t.Fatalf("page %d has %d rows, more than its limit %d", pages, len(rows), size)
		}
		all = append(all, rows...)
		pages++
		if next.IsZero() {
			return all, pages
		}
		if pages > 100 {
			t.Fatal("the pages do not end")
		}
		p.After = next
	}
}

// Every list pages by keyset: its pages, read in turn, are the whole list
// in its order, with no row twice, the last page says no other follows,
// and rows that share a sort key (made in the same millisecond, here all
// of them) are split by id without loss.
func TestListPages(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		clk := testkit.NewClockAt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		s := openFoundation(t, dsn, Options{Now: clk.Now})
		u := &User{Email: "pages@example.com", Plan: "free"}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		const n = 7
		for i := range n {
			if i == 4 {
				clk.Advance(time.Second) // some share a time, some do not
			}
			c := &Channel{UserID: u.ID, Name: fmt.Sprint("c", i)}
			if err := s.CreateChannel(ctx, c); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.PinChannel(ctx, u.ID, c.ID); err != nil {
				t.Fatal(err)
			}
			if err := s.CreateFolder(ctx, &Folder{UserID: u.ID, Name: fmt.Sprint("f", i)}); err != nil {
				t.Fatal(err)
			}
			if err := s.RegisterDevice(ctx, &Device{UserID: u.ID, Platform: "android", PushToken: fmt.Sprint("t", i)}); err != nil {
				t.Fatal(err)
			}
			if err := s.CreateAPIKey(ctx, &APIKey{UserID: u.ID, Name: "k", Prefix: "pk_live_abcd"}, HashToken(fmt.Sprint("k", i)), 10); err != nil {
				t.Fatal(err)
			}
			if i > 0 {
				if err := s.CreateUser(ctx, &User{Email: fmt.Sprint("u", i, "@example.com"), Plan: "free"}); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Folders reordered: their pages follow the new positions.
		folders, _ := s.ListFolders(ctx, u.ID)
		ids := make([]string, len(folders))
		for i, f := range folders {
			ids[len(folders)-1-i] = f.ID
		}
		if _, err := s.ReorderFolders(ctx, u.ID, ids); err != nil {
			t.Fatal(err)
		}

		check := func(name string, whole []string, paged []string, pages, wantPages int) {
			t.Helper()
			if fmt.Sprint(paged) != fmt.Sprint(whole) || pages != wantPages {
				t.Errorf("%s: %d pages of %v, want %d pages of %v", name, pages, paged, wantPages, whole)
			}
		}
		idsOf := func(n int, id func(int) string) []string {
			out := make([]string, n)
			for i := range out {
				out[i] = id(i)
			}
			return out
		}
		for _, size := range []int{1, 3, 7, 8, 500} {
			wantPages := (n + size - 1) / size
			t.Run(fmt.Sprint("size", size), func(t *testing.T) {
				chs, _ := s.ListChannels(ctx, u.ID)
				pc, k := pagesOf(t, size, func(p Page) ([]Channel, Cursor, error) { return s.ListChannelsPage(ctx, u.ID, p) })
				check("channels", idsOf(len(chs), func(i int) string { return chs[i].ID }), idsOf(len(pc), func(i int) string { return pc[i].ID }), k, wantPages)

				fs, _ := s.ListFolders(ctx, u.ID)
				pf, k := pagesOf(t, size, func(p Page) ([]Folder, Cursor, error) { return s.ListFoldersPage(ctx, u.ID, p) })
				check("folders", idsOf(len(fs), func(i int) string { return fs[i].ID }), idsOf(len(pf), func(i int) string { return pf[i].ID }), k, wantPages)

				ps, _ := s.ListPins(ctx, u.ID)
				pp, k := pagesOf(t, size, func(p Page) ([]Pin, Cursor, error) { return s.ListPinsPage(ctx, u.ID, p) })
				check("pins", idsOf(len(ps), func(i int) string { return ps[i].ChannelID }), idsOf(len(pp), func(i int) string { return pp[i].ChannelID }), k, wantPages)

				ds, _ := s.ListDevices(ctx, u.ID)
				pd, k := pagesOf(t, size, func(p Page) ([]Device, Cursor, error) { return s.ListDevicesPage(ctx, u.ID, p) })
				check("devices", idsOf(len(ds), func(i int) string { return ds[i].ID }), idsOf(len(pd), func(i int) string { return pd[i].ID }), k, wantPages)

				ks, _ := s.ListAPIKeys(ctx, u.ID)
				pk, k := pagesOf(t, size, func(p Page) ([]APIKey, Cursor, error) { return s.ListAPIKeysPage(ctx, u.ID, p) })
				check("keys", idsOf(len(ks), func(i int) string { return ks[i].ID }), idsOf(len(pk), func(i int) string { return pk[i].ID }), k, wantPages)

				us, _ := s.ListUsers(ctx)
				pu, k := pagesOf(t, size, func(p Page) ([]User, Cursor, error) { return s.ListUsersPage(ctx, p) })
				check("users", idsOf(len(us), func(i int) string { return us[i].ID }), idsOf(len(pu), func(i int) string { return pu[i].ID }), k, wantPages)

				for _, l := range [][]string{idsOf(len(chs), func(i int) string { return chs[i].ID }), idsOf(len(us), func(i int) string { return us[i].ID })} {
					if len(l) != n {
						t.Fatalf("the whole list has %d rows, want %d", len(l), n)
					}
				}
			})
		}
	})
}
