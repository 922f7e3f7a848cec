package ntfy

import (
	_ "embed"
	"strings"
	"sync"
)

// emojiTable is the short codes ntfy's apps turn tags into (emoji.txt,
// written by scripts/ntfyemoji from gemoji's database, which ntfy ships).
//
//go:embed emoji.txt
var emojiTable string

// emojis maps each short code to its emoji, built on first use.
var emojis = sync.OnceValue(func() map[string]string {
	m := make(map[string]string, 2048)
	for line := range strings.SplitSeq(emojiTable, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		emoji, aliases, _ := strings.Cut(line, "\t")
		for a := range strings.SplitSeq(aliases, " ") {
			m[a] = emoji
		}
	}
	return m
})

// Emoji is the emoji of short code tag ("warning", "+1", "rotating_light"),
// matched exactly as ntfy's apps do, and whether there is one.
func Emoji(tag string) (string, bool) {
	e, ok := emojis()[tag]
	return e, ok
}

// EmojiTags returns tags with each short code turned into its emoji, as
// ntfy's apps show them; other tags stay as they are. tags is not changed.
func EmojiTags(tags []string) []string {
	if len(tags) == 0 {
		return nil
	}
	out := make([]string, len(tags))
	for i, t := range tags {
		if e, ok := Emoji(t); ok {
			t = e
		}
		out[i] = t
	}
	return out
}
