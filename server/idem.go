package server

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"
)

// idemCache keeps the outcome of recent writes by idempotency key, so that a
// resend of a write whose answer was lost gets that write's answer instead
// of being applied, or refused, a second time. It is a bounded, per-process
// memory: a resend that reaches another server is resolved against the
// backend instead (see resolveResend).
type idemCache struct {
	mu    sync.Mutex
	m     map[string]*idemEntry
	order []string // keys in insertion order, for eviction
	max   int
	ttl   time.Duration
}

type idemEntry struct {
	done   chan struct{}
	hash   [32]byte
	at     time.Time
	status int
	body   []byte
}

func newIdemCache(max int, ttl time.Duration) *idemCache {
	return &idemCache{m: map[string]*idemEntry{}, max: max, ttl: ttl}
}

// begin returns the entry of key: owner is true when the caller must run
// the write and finish the entry; otherwise the entry is another request's
// (finished or still running). same is false when key was used for a
// different request.
func (c *idemCache) begin(key string, body []byte) (e *idemEntry, owner, same bool) {
	h := sha256.Sum256(body)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[key]; e != nil {
		return e, false, e.hash == h
	}
	c.evict()
	e = &idemEntry{done: make(chan struct{}), hash: h, at: time.Now()}
	c.m[key] = e
	c.order = append(c.order, key)
	return e, true, true
}

func (c *idemCache) evict() {
	now := time.Now()
	for len(c.order) > 0 {
		e := c.m[c.order[0]]
		expired := e == nil || now.Sub(e.at) > c.ttl
		if !expired && len(c.order) < c.max {
			return
		}
		if e != nil && !isDone(e) && !expired {
			return // never drop a running write's entry for room
		}
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
}

func isDone(e *idemEntry) bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

func (e *idemEntry) finish(status int, body []byte) {
	e.status, e.body = status, body
	close(e.done)
}

// wait waits for the entry's write to finish, or ctx.
func (e *idemEntry) wait(ctx context.Context) bool {
	select {
	case <-e.done:
		return true
	case <-ctx.Done():
		return false
	}
}

// forget drops key's entry if it is still e, so that a later resend runs
// again instead of replaying e's answer.
func (c *idemCache) forget(key string, e *idemEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[key] == e {
		delete(c.m, key)
	}
}
