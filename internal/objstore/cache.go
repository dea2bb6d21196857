package objstore

import (
	"sync"

	"nameservice.dev/nameservice/jsonld"
)

// cached is a file as read or written: its tag, bytes and decoded form
// (the caller's own).
type cached struct {
	tag  string
	data []byte
	doc  *jsonld.File
}

// tagCache remembers the last tag and contents of each key, so that a push
// can send its precondition without reading first. A stale entry is caught
// by the failed precondition the write then gets; a conflict is never
// answered from the cache alone.
//
// It keeps the bytes and decodes on each hit: a decoded file takes about
// ten times its bytes, so 50,000 decoded entries held 160 MB; a decode
// costs microseconds, a read a request.
type tagCache struct {
	mu sync.Mutex
	m  map[string]object
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
	doc, err := jsonld.Decode(e.data)
	if err != nil {
		// Cannot happen (put keeps only what decoded): a miss is safe.
		return cached{}, false
	}
	return cached{tag: e.tag, data: e.data, doc: doc}, true
}

// put remembers e's tag and bytes, which must decode.
func (c *tagCache) put(key string, e cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCached {
		c.m = map[string]object{}
	}
	c.m[key] = object{tag: e.tag, data: e.data}
}

func (c *tagCache) drop(keys ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		delete(c.m, k)
	}
}
