package objstore

import (
	"sync"

	"nameservice.dev/nameservice/jsonld"
)

// cached is a file as last read or written by this driver: its tag, bytes
// and decoded form. The decoded form is the caller's own.
type cached struct {
	tag  string
	data []byte
	doc  *jsonld.File
}

// tagCache remembers the last tag and contents of each key, so that a push
// can send its precondition without reading first. A stale entry is caught
// by the failed precondition the write then gets; the driver re-reads and
// never answers from the cache alone when the answer is a conflict.
//
// It keeps the bytes, not the decoded form, and decodes on each hit: a
// decoded file takes about ten times its bytes (3.2 KB for a 317-byte
// ledger file), so 50,000 decoded entries held 160 MB, more than a listing
// of 100,000 records may use; a decode costs microseconds, a read a request.
type tagCache struct {
	mu sync.Mutex
	m  map[string]cachedBytes
}

type cachedBytes struct {
	tag  string
	data []byte
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

// put remembers e's tag and bytes; e.doc must be the decoding of e.data.
func (c *tagCache) put(key string, e cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCached {
		c.m = map[string]cachedBytes{}
	}
	c.m[key] = cachedBytes{tag: e.tag, data: e.data}
}

func (c *tagCache) drop(keys ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		delete(c.m, k)
	}
}
