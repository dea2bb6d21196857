package objstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/jsonld"
)

// lateReadStore is one client's view of a memStore whose first read of key
// late comes back late: after the read of key first has been answered,
// and after meanwhile has run. It stands for one of a purge's parallel
// reads that the SDK retried (a 5xx, a reset) while the others came back.
type lateReadStore struct {
	*memStore
	first, late string
	meanwhile   func()
	firstRead   chan struct{}
	once, held  sync.Once
}

func (s *lateReadStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	switch key {
	case s.first:
		defer s.once.Do(func() { close(s.firstRead) })
	case s.late:
		s.held.Do(func() {
			<-s.firstRead
			s.meanwhile()
		})
	}
	return s.memStore.Get(ctx, key)
}

// TestPurgeReadsAFileOfTheNextRecord: a purge reads the record's files in
// parallel; the read of one concern file comes back only after another
// client has purged the record, created it again and pushed that concern.
// The file the purge holds then carries another token than the defining
// file it read: not debris of an earlier record but the new record's
// value. The purge must not seal (overwrite) it: the new record keeps
// its value, and the purge, which found the record it set out to remove
// gone, answers not found.
func TestPurgeReadsAFileOfTheNextRecord(t *testing.T) {
	cases := []struct {
		layout      jsonld.Layout
		def, late   string
		push        func(ctx context.Context, ns *nameservice.NameService, t int64, addr string) error
		concernName string
	}{
		{jsonld.LayoutC, "ns@v2/db/main.status.json", "ns@v2/db/main.head.json", publishCommit, "head"},
		{jsonld.LayoutC, "ns@v2/db/main.status.json", "ns@v2/db/main.index.json", publishIndex, "index"},
		{jsonld.LayoutB, "ns@v2/db/main.json", "ns@v2/db/main.index.json", publishIndex, "index"},
	}
	for _, c := range cases {
		t.Run(c.layout.String()+"/"+c.concernName, func(t *testing.T) {
			ctx := context.Background()
			st := newMemStore()
			cfg := objstore.Config{Name: "mem", Layout: c.layout}
			plain := nameservice.New(memDriver{objstore.New(st, cfg)})
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(plain.Init(ctx, "db"))
			must(c.push(ctx, plain, 1, "old"))
			var other error // runs in the purge's read: no t.Fatal there
			late := &lateReadStore{memStore: st, first: c.def, late: c.late, firstRead: make(chan struct{}), meanwhile: func() {
				other = errors.Join(plain.Purge(ctx, "db"), plain.Init(ctx, "db"), c.push(ctx, plain, 5, "new"))
			}}
			purger := nameservice.New(memDriver{objstore.New(late, cfg)})
			err := purger.Purge(ctx, "db")
			must(other)
			if !errors.Is(err, nameservice.ErrNotFound) {
				t.Fatalf("purge whose record was purged and created again while it read = %v; want not found", err)
			}
			rec, err := plain.Lookup(ctx, "db")
			must(err)
			v := rec.Head
			if c.concernName == "index" {
				v = rec.Index
			}
			if v == nil || v.V != 5 || v.Payload["address"] != "new" {
				t.Fatalf("the new record's %s after the purge = %v; want v5 at new: the purge sealed the new record's file", c.concernName, v)
			}
		})
	}
}

func publishCommit(ctx context.Context, ns *nameservice.NameService, t int64, addr string) error {
	_, err := ns.PublishCommit(ctx, "db", t, addr)
	return err
}

func publishIndex(ctx context.Context, ns *nameservice.NameService, t int64, addr string) error {
	_, err := ns.PublishIndex(ctx, "db", t, addr)
	return err
}
