package objstore

import (
	"sync"

	"nameservice.dev/nameservice/jsonld"
)

// cached is a file as last read or written by this driver: its tag, bytes
// and decoded form. The decoded form is shared and must not be changed.
type cached struct {
	tag  string
	data []byte
	doc  *jsonld.File
}

// tagCache remembers the last tag and contents of each key, so that a push
// can send its precondition without reading first. A stale entry is caught
// by the failed precondition the write then gets; the driver re-reads and
// never answers from the cache alone when the answer is a conflict.
type tagCache struct {
	mu sync.Mutex
	m  map[string]cached
}

// maxCached bounds the cache; it is cleared when full.
const maxCached = 50_000

func (c *tagCache) get(key string) (cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	return e, ok
}

func (c *tagCache) put(key string, e cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCached {
		c.m = map[string]cached{}
	}
	c.m[key] = e
}

func (c *tagCache) drop(keys ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		delete(c.m, k)
	}
}
