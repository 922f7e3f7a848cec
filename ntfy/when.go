package ntfy

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxUnixTime is the last second of the year 9999, the largest Unix time
// a delay or a since= is read as: a larger one would overflow time.Time's
// arithmetic into the past.
const MaxUnixTime = 253402300799

// ParseFutureTime reads ntfy's delay parameter (X-Delay, X-At, X-In) at
// time now. It takes:
//
//   - a Unix time in seconds ("1700000000"), which must not be past;
//   - a duration from now: Go's ("30m", "1h30m") or ntfy's with days and
//     words ("2d", "10 min", "3 hours", "1 day");
//   - a time of day, the next one to come: "10am", "10:30", "5:15pm",
//     "17:00", optionally after "today" or "tomorrow" ("tomorrow, 10am",
//     "tomorrow 8:30pm"); "tomorrow" alone is this time tomorrow.
//
// Times of day are in now's location (the server's). ntfy also reads
// other natural language ("next monday"); Herald answers those with a
// ParamError.
func ParseFutureTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < now.Unix() {
			return time.Time{}, paramError(CodeDelayTooSmall, "delay %q is a Unix time in the past", s)
		}
		if n > MaxUnixTime {
			return time.Time{}, paramError(CodeDelayTooLarge, "delay %q is a Unix time after the year 9999", s)
		}
		return time.Unix(n, 0).UTC(), nil
	}
	if d, ok := parseDuration(s); ok {
		if d < 0 {
			return time.Time{}, paramError(CodeDelayTooSmall, "delay %q is in the past", s)
		}
		return now.Add(d), nil
	}
	if t, ok := parseDayTime(strings.ToLower(s), now); ok {
		return t, nil
	}
	return time.Time{}, paramError(CodeDelayCannotParse,
		"delay %q is not understood: send a Unix time, a duration (30m, 2h, 1d) or a time of day (10am, tomorrow 8:30pm)", s)
}

// parseDuration reads a Go duration or a number and a unit: d, day, days,
// h, hour(s), m, min(s), minute(s), s, sec(s), second(s).
func parseDuration(s string) (time.Duration, bool) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, true
	}
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == 0 || i > 9 {
		return 0, false
	}
	n, _ := strconv.Atoi(s[:i])
	var unit time.Duration
	switch strings.ToLower(strings.TrimSpace(s[i:])) {
	case "d", "day", "days":
		unit = 24 * time.Hour
	case "h", "hour", "hours":
		unit = time.Hour
	case "m", "min", "mins", "minute", "minutes":
		unit = time.Minute
	case "s", "sec", "secs", "second", "seconds":
		unit = time.Second
	default:
		return 0, false
	}
	if time.Duration(n) > math.MaxInt64/unit {
		return 0, false
	}
	return time.Duration(n) * unit, true
}

// parseDayTime reads "[today|tomorrow][,] [time of day]" (lower case).
func parseDayTime(s string, now time.Time) (time.Time, bool) {
	day := ""
	for _, d := range [...]string{"today", "tomorrow"} {
		if rest, ok := strings.CutPrefix(s, d); ok {
			day, s = d, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ","))
			break
		}
	}
	if s == "" {
		if day == "tomorrow" {
			return now.AddDate(0, 0, 1), true
		}
		return time.Time{}, false
	}
	hour, minute, ok := parseClock(s)
	if !ok {
		return time.Time{}, false
	}
	t := time.Date(now.Year(), now.Month(), now.Day(), hour, minute, 0, 0, now.Location())
	switch {
	case day == "tomorrow":
		t = t.AddDate(0, 0, 1)
	case day == "today" && !t.After(now):
		return time.Time{}, false // today's time has passed
	case !t.After(now):
		t = t.AddDate(0, 0, 1) // the next one to come
	}
	return t, true
}

// parseClock reads "10am", "10 pm", "10:30", "5:15pm", "17:00".
func parseClock(s string) (hour, minute int, ok bool) {
	meridiem := ""
	for _, m := range [...]string{"am", "pm"} {
		if rest, found := strings.CutSuffix(s, m); found {
			meridiem, s = m, strings.TrimSpace(rest)
			break
		}
	}
	h, m, hasMinutes := strings.Cut(s, ":")
	hour, err := strconv.Atoi(h)
	if err != nil || len(h) > 2 || hour < 0 {
		return 0, 0, false
	}
	if hasMinutes {
		if minute, err = strconv.Atoi(m); err != nil || len(m) != 2 || minute < 0 || minute > 59 {
			return 0, 0, false
		}
	} else if meridiem == "" {
		return 0, 0, false // a bare number is a Unix time, not an hour
	}
	switch meridiem {
	case "":
		if hour > 23 {
			return 0, 0, false
		}
	default:
		if hour < 1 || hour > 12 {
			return 0, 0, false
		}
		hour %= 12
		if meridiem == "pm" {
			hour += 12
		}
	}
	return hour, minute, true
}
