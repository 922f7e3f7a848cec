package ntfy

import (
	"errors"
	"testing"
	"time"
)

func TestParseFutureTime(t *testing.T) {
	// 14:00 on a Tuesday, in a zone that is not UTC: times of day are the
	// server's.
	zone := time.FixedZone("CET", 3600)
	now := time.Date(2026, 3, 10, 14, 0, 0, 0, zone)
	at := func(day, hour, minute int) time.Time { return time.Date(2026, 3, day, hour, minute, 0, 0, zone) }
	tests := []struct {
		in   string
		want time.Time
	}{
		{"1773151200", time.Unix(1773151200, 0).UTC()},
		{"30m", now.Add(30 * time.Minute)},
		{"1h30m", now.Add(90 * time.Minute)},
		{"2d", now.Add(48 * time.Hour)},
		{"10 min", now.Add(10 * time.Minute)},
		{"30min", now.Add(30 * time.Minute)},
		{"3 hours", now.Add(3 * time.Hour)},
		{"1 day", now.Add(24 * time.Hour)},
		{"45s", now.Add(45 * time.Second)},
		{"10 Seconds", now.Add(10 * time.Second)},
		{"tomorrow", now.AddDate(0, 0, 1)},
		{"tomorrow, 10am", at(11, 10, 0)},
		{"Tomorrow 8:30pm", at(11, 20, 30)},
		{"tomorrow,17:00", at(11, 17, 0)},
		{"10am", at(11, 10, 0)}, // passed today: tomorrow's
		{"5:15pm", at(10, 17, 15)},
		{"5:15 PM", at(10, 17, 15)},
		{"17:00", at(10, 17, 0)},
		{"today 6pm", at(10, 18, 0)},
		{"12am", at(11, 0, 0)},
		{"12pm", at(11, 12, 0)},
	}
	for _, tt := range tests {
		got, err := ParseFutureTime(tt.in, now)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("ParseFutureTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for in, code := range map[string]int{
		"1000":                CodeDelayTooSmall,
		"-5m":                 CodeDelayTooSmall,
		"today 9am":           CodeDelayCannotParse, // passed
		"next monday":         CodeDelayCannotParse,
		"25:00":               CodeDelayCannotParse,
		"13pm":                CodeDelayCannotParse,
		"0am":                 CodeDelayCannotParse,
		"10:5":                CodeDelayCannotParse,
		"10:60":               CodeDelayCannotParse,
		"-1:00":               CodeDelayCannotParse,
		"10:-1":               CodeDelayCannotParse,
		"5 fortnights":        CodeDelayCannotParse,
		"9999999999d":         CodeDelayCannotParse,
		"253402300800":        CodeDelayTooLarge, // after 9999: overflowed into the past
		"9223372036854775807": CodeDelayTooLarge,
		"999999999d":          CodeDelayCannotParse, // overflows a duration
		"":                    CodeDelayCannotParse,
		"today":               CodeDelayCannotParse,
	} {
		got, err := ParseFutureTime(in, now)
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Code != code {
			t.Errorf("ParseFutureTime(%q) = %v, %v; want ParamError %d", in, got, err, code)
		}
	}
}
