package store

import (
	"sync"
	"time"
)

// tokenTTL bounds how long a cached token lookup may be used. Changes made
// through this store invalidate at once; the bound covers changes made by
// another process (the CLI's `user set-plan`), which then apply within a
// second.
const tokenTTL = time.Second

// maxCachedTokens bounds the cache; past it, it starts again empty.
const maxCachedTokens = 10000

// tokenCache remembers ChannelByToken answers, the one read on every send.
// Every write to channels or users made through this store bumps gen after
// it commits; an entry is valid only while gen is still the value read
// before its lookup, so a lookup that raced a write is never kept.
type tokenCache struct {
	mu      sync.RWMutex
	gen     uint64
	entries map[string]tokenEntry
}

type tokenEntry struct {
	ch   Channel
	plan string
	gen  uint64
	at   time.Time
}

func (c *tokenCache) get(token string, now time.Time) (Channel, string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.entries[token]
	if !ok || e.gen != c.gen || now.Sub(e.at) >= tokenTTL || now.Before(e.at) {
		return Channel{}, "", false
	}
	return e.ch, e.plan, true
}

// generation is read before a lookup and handed back to put.
func (c *tokenCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

func (c *tokenCache) put(token string, ch Channel, plan string, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return // a write committed meanwhile; the answer may be old
	}
	if c.entries == nil || len(c.entries) >= maxCachedTokens {
		c.entries = map[string]tokenEntry{}
	}
	c.entries[token] = tokenEntry{ch: ch, plan: plan, gen: gen, at: now}
}

// invalidate forgets every entry; called after a write to channels or users.
func (c *tokenCache) invalidate() {
	c.mu.Lock()
	c.gen++
	c.entries = nil
	c.mu.Unlock()
}
