package ntfy

import (
	"reflect"
	"strings"
	"testing"
)

func TestEmojiTags(t *testing.T) {
	in := []string{"warning", "skull", "+1", "rotating_light", "white_check_mark", "backup", "Warning", "cd"}
	want := []string{"⚠️", "💀", "👍", "🚨", "✅", "backup", "Warning", "💿"}
	got := EmojiTags(in)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("EmojiTags(%q) = %q, want %q", in, got, want)
	}
	if in[0] != "warning" {
		t.Fatal("EmojiTags changed its argument")
	}
	if EmojiTags(nil) != nil {
		t.Fatal("EmojiTags(nil) is not nil")
	}
}

func TestEmojiTable(t *testing.T) {
	// Every emoji has aliases, and aliases the short codes ntfy's docs use
	// are there; every alias of a line maps to that line's emoji.
	lines := 0
	for line := range strings.SplitSeq(emojiTable, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		lines++
		emoji, aliases, ok := strings.Cut(line, "\t")
		if !ok || emoji == "" || aliases == "" {
			t.Fatalf("malformed line %q", line)
		}
		for a := range strings.SplitSeq(aliases, " ") {
			if e, _ := Emoji(a); e != emoji && !shadowed(a) {
				t.Errorf("alias %q maps to %q, not its line's %q", a, e, emoji)
			}
		}
	}
	if lines < 1500 {
		t.Fatalf("%d emoji in the table; gemoji has over 1,800", lines)
	}
	for _, code := range []string{"tada", "partying_face", "loudspeaker", "no_entry", "heavy_check_mark", "x", "computer", "+1", "-1"} {
		if _, ok := Emoji(code); !ok {
			t.Errorf("no emoji for %q", code)
		}
	}
}

// shadowed reports whether alias a is claimed by two emoji, where the
// later line wins.
func shadowed(a string) bool {
	n := 0
	for line := range strings.SplitSeq(emojiTable, "\n") {
		_, aliases, _ := strings.Cut(line, "\t")
		for b := range strings.SplitSeq(aliases, " ") {
			if a == b {
				n++
			}
		}
	}
	return n > 1
}
