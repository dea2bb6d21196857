package objstore

import (
	lru "github.com/hashicorp/golang-lru/v2"

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
type tagCache struct{ *lru.Cache[string, cached] }

// maxCached bounds the cache; the least recently used go first.
const maxCached = 50_000

func newTagCache() tagCache {
	c, _ := lru.New[string, cached](maxCached) // fails only for a size below 1
	return tagCache{c}
}

func (c tagCache) get(key string) (cached, bool) {
	e, ok := c.Get(key)
	if !ok {
		return cached{}, false
	}
	var err error
	// put keeps only what decoded; a failure would be a safe miss.
	e.doc, err = jsonld.Decode(e.data)
	return e, err == nil
}

// put remembers e's tag and bytes, which must decode.
func (c tagCache) put(key string, e cached) { c.Add(key, cached{tag: e.tag, data: e.data}) }

func (c tagCache) drop(keys ...string) {
	for _, k := range keys {
		c.Remove(k)
	}
}
