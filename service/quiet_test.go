package service

import (
	"testing"

	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
)

// TestQuietHoursRules: the defaults until set; good hours kept as given
// (across midnight, in any IANA zone); every bad field refused with words
// that name it, and nothing changed.
func TestQuietHoursRules(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Service, st *store.Store) {
		ctx := t.Context()
		u, err := s.CreateUser(ctx, NewUser{Email: "ann@example.com", Password: testkit.GoodPassword})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.QuietHours(ctx, u.ID); err != nil || got != DefaultQuietHours {
			t.Fatalf("QuietHours before any = %+v, %v; want the defaults %+v", got, err, DefaultQuietHours)
		}
		good := store.QuietHours{Enabled: true, Start: "23:30", End: "06:15", TimeZone: "America/Argentina/Buenos_Aires", Mode: "silent"}
		if got, err := s.SetQuietHours(ctx, u.ID, good); err != nil || got != good {
			t.Fatalf("SetQuietHours(%+v) = %+v, %v", good, got, err)
		}

		with := func(change func(*store.QuietHours)) store.QuietHours {
			q := good
			change(&q)
			return q
		}
		const clock = "must be a time of day as HH:MM, from 00:00 to 23:59"
		const zone = `time_zone must be an IANA time zone such as "Europe/Berlin" or "UTC"`
		for _, tt := range []struct {
			name string
			q    store.QuietHours
			want string
		}{
			{"empty start", with(func(q *store.QuietHours) { q.Start = "" }), "start " + clock},
			{"hour 24", with(func(q *store.QuietHours) { q.Start = "24:00" }), "start " + clock},
			{"minute 60", with(func(q *store.QuietHours) { q.End = "07:60" }), "end " + clock},
			{"no leading zero", with(func(q *store.QuietHours) { q.End = "7:00" }), "end " + clock},
			{"seconds", with(func(q *store.QuietHours) { q.End = "07:00:00" }), "end " + clock},
			{"a sign", with(func(q *store.QuietHours) { q.End = "+7:00" }), "end " + clock},
			{"start equals end", with(func(q *store.QuietHours) { q.End = q.Start }),
				"end must differ from start (an end before the start runs past midnight)"},
			{"no zone", with(func(q *store.QuietHours) { q.TimeZone = "" }), zone},
			{"the server's zone", with(func(q *store.QuietHours) { q.TimeZone = "Local" }), zone},
			{"an unknown zone", with(func(q *store.QuietHours) { q.TimeZone = "Mars/Olympus_Mons" }), zone + `; "Mars/Olympus_Mons" is not one`},
			{"a path", with(func(q *store.QuietHours) { q.TimeZone = "../../etc/passwd" }), zone + `; "../../etc/passwd" is not one`},
			{"a long name", with(func(q *store.QuietHours) { q.TimeZone = "Europe/" + string(make([]byte, 80)) }), zone},
			{"no mode", with(func(q *store.QuietHours) { q.Mode = "" }),
				`mode must be "hold" (pushes wait until the end) or "silent" (pushes arrive without sound)`},
			{"another mode", with(func(q *store.QuietHours) { q.Mode = "mute" }),
				`mode must be "hold" (pushes wait until the end) or "silent" (pushes arrive without sound)`},
			{"disabled is checked too", with(func(q *store.QuietHours) { q.Enabled = false; q.Start = "late" }), "start " + clock},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, err := s.SetQuietHours(ctx, u.ID, tt.q)
				wantWords(t, err, tt.want)
				if got, err := s.QuietHours(ctx, u.ID); err != nil || got != good {
					t.Errorf("after a refusal QuietHours = %+v, %v; want unchanged %+v", got, err, good)
				}
			})
		}
	})
}
