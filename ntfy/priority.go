package ntfy

import "strings"

// ParsePriority reads ntfy's priority parameter: 1-5 or its names (min,
// low, default, high, max or urgent), in any case. The empty string is 0,
// no priority given.
func ParsePriority(s string) (int, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return 0, nil
	case "1", "min":
		return 1, nil
	case "2", "low":
		return 2, nil
	case "3", "default":
		return 3, nil
	case "4", "high":
		return 4, nil
	case "5", "max", "urgent":
		return 5, nil
	}
	return 0, paramError(CodePriorityInvalid,
		"invalid priority %q: use 1-5 or min, low, default, high, max (urgent)", s)
}

// Level is Herald's word for ntfy priority p: min and low are "low",
// default (and none) is "normal", high and max are "high".
func Level(p int) string {
	switch {
	case p == 1 || p == 2:
		return "low"
	case p >= 4:
		return "high"
	}
	return "normal"
}

// FromGotify is the ntfy priority that matches Gotify priority p, as the
// Gotify Android app sorts them into channels: 0 and below min, 1-3 low,
// 4-7 default, 8-9 high and 10 or more max.
func FromGotify(p int) int {
	switch {
	case p <= 0:
		return 1
	case p <= 3:
		return 2
	case p <= 7:
		return 3
	case p <= 9:
		return 4
	}
	return 5
}
