package dynamodb

import (
	"testing"
	"unsafe"

	lru "github.com/hashicorp/golang-lru/v2"

	"nameservice.dev/nameservice/model"
)

// TestKindCacheKeepsOnlyGraphSourcesAsCopies checks the two properties that
// keep a long listing's memory flat: a ledger (the default guess) is not
// stored, and a graph source's ID is stored as a copy that shares no bytes
// with the caller's strings (which, from a response, pin the SDK's arena).
func TestKindCacheKeepsOnlyGraphSourcesAsCopies(t *testing.T) {
	cache, _ := lru.New[model.ID, struct{}](maxCachedKinds)
	c := kindCache{cache}
	buf := []byte("gs:main")
	gs := model.ID{Name: unsafe.String(&buf[0], 2), Branch: unsafe.String(&buf[3], 4)}
	ledger := model.ID{Name: "l", Branch: "main"}
	c.put(gs, model.GraphSource)
	c.put(ledger, model.Ledger)
	if c.Len() != 1 {
		t.Fatalf("cache holds %d IDs, want 1 (the graph source)", c.Len())
	}
	for _, id := range c.Keys() {
		if unsafe.StringData(id.Name) == &buf[0] || unsafe.StringData(id.Branch) == &buf[3] {
			t.Errorf("cached ID %v shares the caller's bytes", id)
		}
	}
	if k := c.get(gs); k != model.GraphSource {
		t.Errorf("get(graph source) = %q", k)
	}
	if k := c.get(ledger); k != model.Ledger {
		t.Errorf("get(ledger) = %q", k)
	}
	c.put(gs, model.Ledger) // recreated as a ledger
	if k := c.get(gs); k != model.Ledger || c.Len() != 0 {
		t.Errorf("after put(ledger): get = %q, %d IDs cached, want ledger and 0", k, c.Len())
	}
	c.put(gs, model.GraphSource)
	c.Remove(gs)
	if c.Len() != 0 {
		t.Errorf("after forget: %d IDs cached, want 0", c.Len())
	}
}
