package store

import (
	"crypto/rand"
	"crypto/sha256"
	"time"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// randomString returns n characters of base62 from crypto/rand, without
// modulo bias (bytes >= 248 are drawn again).
func randomString(n int) string {
	return string(appendRandom(make([]byte, 0, n), n))
}

// appendRandom appends n characters of base62 from crypto/rand to out, as
// randomString makes them.
func appendRandom(out []byte, n int) []byte {
	var small [40]byte
	buf := small[:]
	if need := n + n/4 + 8; need > len(small) {
		buf = make([]byte, need)
	} else {
		buf = buf[:need]
	}
	end := len(out) + n
	for len(out) < end {
		if _, err := rand.Read(buf); err != nil {
			panic("store: crypto/rand failed: " + err.Error())
		}
		for _, b := range buf {
			if b >= 248 {
				continue
			}
			out = append(out, base62[b%62])
			if len(out) == end {
				break
			}
		}
	}
	return out
}

// NewID returns a prefixed random identifier, e.g. NewID("ch_").
func NewID(prefix string) string { return prefix + randomString(24) }

// NewSortableID returns a prefixed identifier that sorts by creation time:
// 8 base62 characters of the time in milliseconds, then 20 random ones.
// Rows keyed by it are appended to their primary-key index instead of
// landing on a random page, which keeps each commit small on the send path.
func NewSortableID(prefix string, t time.Time) string {
	// One allocation: the id is made in a buffer on the stack.
	var buf [48]byte
	id := append(buf[:0], prefix...)
	id = append(id, "00000000"...)
	n := t.UnixMilli()
	for i := len(id) - 1; i >= len(prefix); i-- {
		id[i] = base62[n%62]
		n /= 62
	}
	return string(appendRandom(id, 20))
}

// NewToken returns n random base62 characters for secrets and tokens.
func NewToken(n int) string { return randomString(n) }

// HashToken is the SHA-256 of a secret; only hashes of keys and session
// tokens are stored.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}
