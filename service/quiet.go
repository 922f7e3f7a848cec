package service

import (
	"context"
	"strings"
	"time"
	// The zone database inside the binary, so that a zone is known
	// whether or not the host has /usr/share/zoneinfo (a static binary
	// in a scratch container does not).
	_ "time/tzdata"

	"github.com/heraldhq/herald/store"
)

// DefaultQuietHours are the quiet hours of a user who never set them:
// off, 22:00 to 07:00 UTC, pushes held.
var DefaultQuietHours = store.QuietHours{Start: "22:00", End: "07:00", TimeZone: "UTC", Mode: store.QuietHold}

// maxZoneName bounds a time zone's name; the longest IANA name is 32.
const maxZoneName = 64

// QuietHours returns userID's quiet hours, DefaultQuietHours until set.
func (s *Service) QuietHours(ctx context.Context, userID string) (store.QuietHours, error) {
	q, err := s.st.QuietHours(ctx, userID)
	if err != nil {
		return store.QuietHours{}, err
	}
	if q == (store.QuietHours{}) {
		return DefaultQuietHours, nil
	}
	return q, nil
}

// SetQuietHours checks q and makes it userID's quiet hours. Every field is
// checked, enabled or not, so that turning them on later needs no other
// fix.
func (s *Service) SetQuietHours(ctx context.Context, userID string, q store.QuietHours) (store.QuietHours, error) {
	if err := checkQuietHours(q); err != nil {
		return store.QuietHours{}, err
	}
	if err := s.st.SetQuietHours(ctx, userID, q); err != nil {
		return store.QuietHours{}, err
	}
	return q, nil
}

func checkQuietHours(q store.QuietHours) error {
	if !isClock(q.Start) {
		return invalid("start must be a time of day as HH:MM, from 00:00 to 23:59")
	}
	if !isClock(q.End) {
		return invalid("end must be a time of day as HH:MM, from 00:00 to 23:59")
	}
	if q.Start == q.End {
		return invalid("end must differ from start (an end before the start runs past midnight)")
	}
	if err := checkZone(q.TimeZone); err != nil {
		return err
	}
	if q.Mode != store.QuietHold && q.Mode != store.QuietSilent {
		return invalid("mode must be %q (pushes wait until the end) or %q (pushes arrive without sound)",
			store.QuietHold, store.QuietSilent)
	}
	return nil
}

// isClock reports whether s is "HH:MM", 00:00 to 23:59.
func isClock(s string) bool {
	if len(s) != 5 || s[2] != ':' {
		return false
	}
	for i, c := range []byte(s) {
		if i != 2 && (c < '0' || c > '9') {
			return false
		}
	}
	return (s[0] < '2' || (s[0] == '2' && s[1] <= '3')) && s[3] <= '5'
}

// checkZone accepts an IANA time zone name the zone database knows, such
// as "Europe/Berlin" or "UTC". "Local" (the server's own zone, whatever it
// is) is no user's.
func checkZone(name string) error {
	const rule = "time_zone must be an IANA time zone such as \"Europe/Berlin\" or \"UTC\""
	if name == "" || len(name) > maxZoneName || name == "Local" || strings.ContainsAny(name, "\\ \x00") {
		return invalid(rule)
	}
	if _, err := time.LoadLocation(name); err != nil {
		return invalid("%s; %q is not one", rule, name)
	}
	return nil
}
