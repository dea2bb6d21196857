package server

import (
	"container/list"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// MaxIdempotencyKey is the longest Idempotency-Key accepted, in bytes; a
// longer one is refused with 400 (the http:// driver sends 32).
const MaxIdempotencyKey = 128

// Bounds of the outcome cache.
const (
	DefaultIdempotencyCacheBytes = 64 << 20
	idemMaxEntries               = 100_000
	idemTTL                      = 10 * time.Minute
	// idemEntryOverhead is what an entry costs beyond its key and answer
	// (measured at about 330 bytes, go1.26 on amd64; counted high).
	idemEntryOverhead = 384
)

// idemCache keeps the outcome of recent writes by idempotency key, so that a
// resend of a write whose answer was lost gets that answer instead of being
// applied, or refused, again. It is bounded in entries and bytes; a resend
// it cannot answer is resolved against the backend (see write).
type idemCache struct {
	maxBytes int64
	size     prometheus.Gauge

	mu    sync.Mutex
	m     map[string]*list.Element // of *idemEntry
	order *list.List               // oldest first, for eviction
	bytes int64
}

type idemEntry struct {
	key    string
	done   chan struct{}
	hash   [32]byte
	at     time.Time
	status int
	body   []byte
	cost   int64
}

// begin returns the entry of key: owner when the caller must run the write
// and finish the entry, else another request's. same is false when key was
// used for a different request.
func (c *idemCache) begin(key string, body []byte) (e *idemEntry, owner, same bool) {
	h := sha256.Sum256(body)
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.m[key]; el != nil {
		e := el.Value.(*idemEntry)
		if !c.expired(e, now) {
			return e, false, e.hash == h
		}
		c.remove(el)
	}
	e = &idemEntry{key: key, done: make(chan struct{}), hash: h, at: now, cost: int64(len(key)) + idemEntryOverhead}
	c.evict(now, e.cost)
	c.m[key] = c.order.PushBack(e)
	c.bytes += e.cost
	c.size.Set(float64(c.bytes))
	return e, true, true
}

// finish records the answer of e's write and wakes its waiters. An answer
// of 5xx (a resend runs again), or too large for the cache, is not kept.
func (c *idemCache) finish(e *idemEntry, status int, body []byte) {
	c.mu.Lock()
	e.status, e.body = status, body
	close(e.done)
	if el := c.m[e.key]; el != nil && el.Value == e {
		e.cost += int64(len(body))
		c.bytes += int64(len(body))
		if e.cost > c.maxBytes || status >= 500 {
			c.remove(el)
		}
		c.evict(time.Now(), 0)
	}
	c.size.Set(float64(c.bytes))
	c.mu.Unlock()
}

func (c *idemCache) expired(e *idemEntry, now time.Time) bool {
	return now.Sub(e.at) > idemTTL && isDone(e)
}

// evict drops expired entries, then the oldest finished ones until an entry
// costing need fits. A running write's entry is never dropped (its resends
// must wait for it); the requests in flight bound those.
func (c *idemCache) evict(now time.Time, need int64) {
	full := func() bool { return c.order.Len() >= idemMaxEntries || c.bytes+need > c.maxBytes }
	for el := c.order.Front(); el != nil; {
		next := el.Next()
		e := el.Value.(*idemEntry)
		switch {
		case c.expired(e, now):
			c.remove(el)
		case !full():
			return
		case isDone(e):
			c.remove(el)
		}
		el = next
	}
}

func (c *idemCache) remove(el *list.Element) {
	e := c.order.Remove(el).(*idemEntry)
	delete(c.m, e.key)
	c.bytes -= e.cost
}

func isDone(e *idemEntry) bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}
