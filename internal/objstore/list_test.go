package objstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// countingStore counts the keys the store's List hands out.
type countingStore struct {
	*memStore
	listed atomic.Int64
	calls  atomic.Int64
}

func (c *countingStore) List(ctx context.Context, prefix, startAfter string, fn func(objstore.Entry) error) error {
	c.calls.Add(1)
	return c.memStore.List(ctx, prefix, startAfter, func(e objstore.Entry) error {
		c.listed.Add(1)
		return fn(e)
	})
}

// trickyIDs are IDs whose key order differs from their ID order: names
// that are prefixes of others (':' sorts after digits, '/' before them),
// nested names, branches that are prefixes of others ('-' sorts before
// the '.' of a suffix), and a segment long enough to be shortened.
func trickyIDs() []model.ID {
	long := strings.Repeat("L", 230)
	var ids []model.ID
	for _, n := range []string{"db", "db1", "db9", "db-x", "db/x", "db/x/y", "dbA", "a", "a.b", "a/b", long, long + "z", "m/" + long} {
		for _, b := range []string{"main", "main-2", "main/f", "main.x", "z", "0"} {
			ids = append(ids, model.ID{Name: n, Branch: b})
		}
	}
	return ids
}

// TestListOrderAcrossPages lists IDs whose key order is not their ID
// order with every page size from 1 to 9 and checks each listing is
// exactly the sorted IDs.
func TestListOrderAcrossPages(t *testing.T) {
	ctx := context.Background()
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		st := newMemStore()
		r := objstore.New(st, objstore.Config{Name: "mem", Layout: l, ListParallel: 3})
		ids := trickyIDs()
		rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		var want []string
		for _, id := range ids {
			if err := r.Create(ctx, model.NewLedger(id, 1)); err != nil {
				t.Fatalf("create %s: %v", id, err)
			}
			want = append(want, id.String())
		}
		slices.Sort(want)
		for _, prefix := range []string{"", "db", "db/", "a"} {
			var sub []string
			for _, w := range want {
				if strings.HasPrefix(w, prefix) {
					sub = append(sub, w)
				}
			}
			for size := 1; size <= 9; size++ {
				got := listAll(t, objstore.New(st, objstore.Config{Name: "mem", Layout: l}), prefix, size)
				if !slices.Equal(got, sub) {
					t.Fatalf("layout %s prefix %q page size %d:\n got %q\nwant %q", l, prefix, size, got, sub)
				}
			}
		}
	}
}

func listAll(t *testing.T, r *objstore.Records, prefix string, size int) []string {
	t.Helper()
	var got []string
	tok := ""
	for range 10_000 {
		p, err := r.List(context.Background(), driver.ListOptions{Prefix: prefix, PageSize: size, PageToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range p.Failed {
			t.Fatalf("failed: %v", f)
		}
		for _, rec := range p.Records {
			got = append(got, rec.ID.String())
		}
		if tok = p.NextPageToken; tok == "" {
			return got
		}
	}
	t.Fatal("listing does not end")
	return nil
}

// TestListLinear checks a paged listing of records with distinct names
// resumes where the last page stopped: the keys handed out by the store
// over all pages stay within a small multiple of the keys there are, and
// each record is read once plus the look-ahead of each page.
func TestListLinear(t *testing.T) {
	ctx := context.Background()
	st := &countingStore{memStore: newMemStore()}
	r := objstore.New(st, objstore.Config{Name: "mem", Layout: jsonld.LayoutB})
	const n = 2000
	for i := range n {
		id := model.ID{Name: fmt.Sprintf("ledger-%05d", i), Branch: "main"}
		if err := r.Create(ctx, model.NewLedger(id, 1)); err != nil {
			t.Fatal(err)
		}
	}
	st.listed.Store(0)
	st.calls.Store(0)
	got := listAll(t, objstore.New(st, objstore.Config{Name: "mem", Layout: jsonld.LayoutB}), "", 100)
	if len(got) != n {
		t.Fatalf("listed %d records, want %d", len(got), n)
	}
	keys := int64(len(st.objs))
	t.Logf("%d keys, %d list calls handed out %d keys", keys, st.calls.Load(), st.listed.Load())
	if st.listed.Load() > 2*keys {
		t.Fatalf("a paged listing of %d keys handed out %d: pages do not resume", keys, st.listed.Load())
	}
}

func TestParseListParallel(t *testing.T) {
	for s, want := range map[string]int{"": 0, "1": 1, "64": 64, "256": 256} {
		if got, err := objstore.ParseListParallel(s); err != nil || got != want {
			t.Errorf("ParseListParallel(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"0", "-1", "257", "x", "1.5"} {
		if _, err := objstore.ParseListParallel(s); !errors.Is(err, model.ErrInvalidArgument) || !strings.Contains(err.Error(), "list_parallel") {
			t.Errorf("ParseListParallel(%q): %v, want ErrInvalidArgument naming list_parallel", s, err)
		}
	}
}
