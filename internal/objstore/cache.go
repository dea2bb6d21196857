package objstore

import (
	"sync"

	"nameservice.dev/nameservice/jsonld"
)

// cached is a file as read or written: its tag, bytes and decoded form
// (the caller's own; nil when not decoded).
type cached struct {
	tag  string
	data []byte
	doc  *jsonld.File
}

// tagCache remembers the last tag and contents of each key, so that a push
// can send its precondition without reading first; a stale entry only costs
// a failed precondition, and no conflict is answered from the cache alone.
// It keeps bytes, not decoded files, which took ten times the memory.
type tagCache struct {
	mu sync.Mutex
	m  map[string]cached
}

// maxCached bounds the cache; it is cleared when full.
const maxCached = 50_000

func (c *tagCache) get(key string) (cached, bool) {
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if !ok {
		return cached{}, false
	}
	var err error
	// put keeps only what decoded; a failure would be a safe miss.
	e.doc, err = jsonld.Decode(e.data)
	return e, err == nil
}

// put remembers e's tag and bytes, which must decode.
func (c *tagCache) put(key string, e cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCached {
		c.m = map[string]cached{}
	}
	c.m[key] = cached{tag: e.tag, data: e.data}
}

func (c *tagCache) drop(keys ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		delete(c.m, k)
	}
}
