package delivery

import (
	"strconv"
	"sync"
	"time"
	// The zone database inside the binary: a static build runs where
	// /usr/share/zoneinfo may not exist, and quiet hours are kept in the
	// user's zone.
	_ "time/tzdata"

	"github.com/heraldhq/herald/push"
	"github.com/heraldhq/herald/store"
)

// quietAction is what a user's quiet hours make of one push.
type quietAction int

const (
	pushNow    quietAction = iota // outside quiet hours, or urgent
	pushHeld                      // wait until the quiet hours end
	pushSilent                    // push now, without sound or alert
)

// urgentPriority is the priority that quiet hours let through: an alert
// that must wake someone.
const urgentPriority = "urgent"

// quietDecision is what quiet hours q make of a push of a message of
// priority at now, and for a held push when it may go (the first instant
// the quiet hours are over). Outside the hours, with none (nil), or for an
// urgent message, the push goes now. Hours that do not read (a bad time or
// zone, which the service refuses) hold nothing.
func quietDecision(q *store.QuietHours, now time.Time, priority string) (quietAction, time.Time) {
	if q == nil || !q.Enabled || priority == urgentPriority {
		return pushNow, time.Time{}
	}
	start, okStart := minuteOfDay(q.Start)
	end, okEnd := minuteOfDay(q.End)
	loc, okZone := zone(q.TimeZone)
	if !okStart || !okEnd || !okZone || start == end {
		return pushNow, time.Time{}
	}
	local := now.In(loc)
	m := local.Hour()*60 + local.Minute()
	inside, endDay := m >= start && m < end, 0
	if start > end { // across midnight: the evening's part ends tomorrow
		inside = m >= start || m < end
		if m >= start {
			endDay = 1
		}
	}
	if !inside {
		return pushNow, time.Time{}
	}
	if q.Mode == store.QuietSilent {
		return pushSilent, time.Time{}
	}
	y, mo, d := local.Date()
	until := time.Date(y, mo, d+endDay, end/60, end%60, 0, 0, loc)
	if !until.After(now) {
		// The end's wall time does not exist today (a DST change skipped
		// it) and time.Date named an earlier instant: look again at the
		// next minute, which is past the change once it comes.
		until = now.Truncate(time.Minute).Add(time.Minute)
	}
	return pushHeld, until
}

// minuteOfDay reads "HH:MM" (00:00 to 23:59).
func minuteOfDay(s string) (int, bool) {
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	h, errH := strconv.Atoi(s[:2])
	m, errM := strconv.Atoi(s[3:])
	if errH != nil || errM != nil || h < 0 || h > 23 || m < 0 || m > 59 {
		return 0, false
	}
	return h*60 + m, true
}

// zones keeps the locations already loaded: time.LoadLocation reads the
// zone database on every call. Only zones that load are kept, so the map
// holds at most the database's few hundred names.
var zones sync.Map // name → *time.Location

func zone(name string) (*time.Location, bool) {
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), true
	}
	if name == "" || name == "Local" {
		return nil, false // the server's own zone is no user's
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return nil, false
	}
	zones.Store(name, l)
	return l, true
}

// quiet applies dev's user's quiet hours to n, a push of m: a held push
// becomes a retry at the hours' end, with no attempt counted (true); a
// silent one is marked so. Only a message's first push is concerned: an
// update replaces a notification already shown, and silently.
func (p *Pusher) quiet(job store.PushJob, m *store.Message, kind string, n *push.Notification, dev store.Device) (store.PushRetry, bool) {
	if dev.Quiet == nil || kind != store.PushMessage {
		return store.PushRetry{}, false
	}
	act, until := quietDecision(dev.Quiet, p.now(), m.Priority)
	switch act {
	case pushHeld:
		p.outcomes.WithLabelValues(dev.Platform, "held").Inc()
		p.log.Debug("push: quiet hours; held", "device", dev.ID, "message", m.ID, "until", until)
		return store.PushRetry{DeviceID: dev.ID, OwnerID: dev.UserID, Attempts: job.Attempts, At: until}, true
	case pushSilent:
		n.Silent = true
	}
	return store.PushRetry{}, false
}
