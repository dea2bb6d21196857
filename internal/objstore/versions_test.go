package objstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// readCountingStore counts the objects read from the store.
type readCountingStore struct {
	*memStore
	reads atomic.Int64
}

func (c *readCountingStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	c.reads.Add(1)
	return c.memStore.Get(ctx, key)
}

func (c *readCountingStore) Head(ctx context.Context, key string) (string, error) {
	c.reads.Add(1)
	return c.memStore.Head(ctx, key)
}

// versionsAll lists every version under prefix in pages of size.
func versionsAll(t *testing.T, r *objstore.Records, prefix string, size int) map[string]string {
	t.Helper()
	got := map[string]string{}
	for id, v := range versionsKnown(t, r, prefix, size, nil) {
		got[id.String()] = v.Version
	}
	return got
}

// versionsKnown lists every entry of Versions under prefix in pages of
// size, with known, and checks each carries its record unless known
// holds its version.
func versionsKnown(t *testing.T, r *objstore.Records, prefix string, size int, known map[model.ID]string) map[model.ID]driver.RecordVersion {
	t.Helper()
	got := map[model.ID]driver.RecordVersion{}
	var order []string
	tok := ""
	for range 10_000 {
		p, err := r.Versions(context.Background(), driver.VersionsOptions{Prefix: prefix, PageSize: size, PageToken: tok, Known: known})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Versions)+len(p.Failed) > size {
			t.Fatalf("page of %d entries, asked for %d", len(p.Versions)+len(p.Failed), size)
		}
		for _, f := range p.Failed {
			t.Fatalf("failed: %v", f)
		}
		for _, v := range p.Versions {
			if v.Version == "" {
				t.Fatalf("%s: no version", v.ID)
			}
			if (v.Record == nil) != (known[v.ID] == v.Version) || v.Record != nil && v.Record.ID != v.ID {
				t.Fatalf("%s: version %q (known %q), record %+v", v.ID, v.Version, known[v.ID], v.Record)
			}
			order = append(order, v.ID.String())
			got[v.ID] = v
		}
		if tok = p.NextPageToken; tok == "" {
			if !slices.IsSorted(order) || len(order) != len(got) {
				t.Fatalf("versions not in ID order or repeated: %q", order)
			}
			return got
		}
	}
	t.Fatal("listing does not end")
	return nil
}

// TestVersionsOrderAcrossPages checks Versions lists exactly the IDs List
// does, in order, with every page size from 1 to 9, IDs whose key order is
// not their ID order included.
func TestVersionsOrderAcrossPages(t *testing.T) {
	ctx := context.Background()
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		st := newMemStore()
		r := objstore.New(st, objstore.Config{Name: "mem", Layout: l, ListParallel: 3})
		for _, id := range trickyIDs() {
			if err := r.Create(ctx, model.NewLedger(id, 1)); err != nil {
				t.Fatalf("create %s: %v", id, err)
			}
		}
		if err := r.Retract(ctx, trickyIDs()[0], time.Unix(1, 0)); err != nil {
			t.Fatal(err)
		}
		for _, prefix := range []string{"", "db", "db/", "a"} {
			want := listAll(t, r, prefix, 1000)
			want = append(want, retractedUnder(trickyIDs()[0], prefix)...)
			slices.Sort(want)
			for size := 1; size <= 9; size++ {
				got := versionsAll(t, objstore.New(st, objstore.Config{Name: "mem", Layout: l}), prefix, size)
				ids := slices.Sorted(func(yield func(string) bool) {
					for id := range got {
						if !yield(id) {
							return
						}
					}
				})
				if !slices.Equal(ids, want) {
					t.Fatalf("layout %s prefix %q page size %d:\n got %q\nwant %q", l, prefix, size, ids, want)
				}
			}
		}
	}
}

// retractedUnder returns id's string when it starts with prefix: List
// leaves a retracted record out, Versions does not.
func retractedUnder(id model.ID, prefix string) []string {
	if strings.HasPrefix(id.String(), prefix) {
		return []string{id.String()}
	}
	return nil
}

// TestVersionsReadWhatChanged checks Versions reads every record's files
// when nothing is known, none when every version is known, and then only
// the file another client changed.
func TestVersionsReadWhatChanged(t *testing.T) {
	ctx := context.Background()
	st := &readCountingStore{memStore: newMemStore()}
	w := objstore.New(st, objstore.Config{Name: "mem", Layout: jsonld.LayoutB})
	ids := make([]model.ID, 300)
	for i := range ids {
		ids[i] = model.ID{Name: fmt.Sprintf("ledger-%04d", i), Branch: "main"}
		if err := w.Create(ctx, model.NewLedger(ids[i], 1)); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 { // 100 index sidecars: 400 files
			if _, err := w.Update(ctx, ids[i], model.Index, driver.IfAbove(), model.RefValue("ix", 1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := objstore.New(st, objstore.Config{Name: "mem", Layout: jsonld.LayoutB})
	reads := func(name string, known map[model.ID]string, want int64) map[model.ID]driver.RecordVersion {
		t.Helper()
		st.reads.Store(0)
		got := versionsKnown(t, r, "", 100, known)
		if len(got) != len(ids) {
			t.Fatalf("%s: %d entries, want %d", name, len(got), len(ids))
		}
		if n := st.reads.Load(); n != want {
			t.Fatalf("%s: read %d objects, want %d", name, n, want)
		}
		return got
	}
	known := map[model.ID]string{}
	for id, v := range reads("nothing known", nil, 400) {
		known[id] = v.Version
	}
	reads("all known", known, 0)
	if _, err := w.Update(ctx, ids[3], model.Head, driver.IfAbove(), model.RefValue("c", 1)); err != nil {
		t.Fatal(err)
	}
	got := reads("one head pushed", known, 1)
	if rec := got[ids[3]].Record; rec == nil || rec.Head.V != 1 || rec.Index.V != 1 {
		t.Fatalf("changed record read as %+v", rec)
	}
}

// TestVersionsChange checks a record's version changes with every write
// to any of its files (the defining file, a sidecar created or replaced, a
// retraction, a purge and re-create) and with nothing else: a write that
// changed nothing, or a write to another record, leaves it as it was.
func TestVersionsChange(t *testing.T) {
	ctx := context.Background()
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			st := newMemStore()
			r := objstore.New(st, objstore.Config{Name: "mem", Layout: l})
			a, b := model.ID{Name: "a", Branch: "main"}, model.ID{Name: "b", Branch: "main"}
			for _, id := range []model.ID{a, b} {
				if err := r.Create(ctx, model.NewLedger(id, 1)); err != nil {
					t.Fatal(err)
				}
			}
			update := func(id model.ID, c model.Concern, v int64) func() error {
				return func() error {
					_, err := r.Update(ctx, id, c, driver.IfAbove(), model.RefValue("x", v))
					return err
				}
			}
			steps := []struct {
				name    string
				write   func() error
				changed string // the record whose version must move; "" none
			}{
				{"head of a", update(a, model.Head, 1), "a:main"},
				{"index of b (new sidecar in B)", update(b, model.Index, 1), "b:main"},
				{"index of b again", update(b, model.Index, 2), "b:main"},
				{"stale head of a (rejected)", update(a, model.Head, 1), ""},
				{"retract a", func() error { return r.Retract(ctx, a, time.Unix(5, 0)) }, "a:main"},
				{"retract a again (no change)", func() error { return r.Retract(ctx, a, time.Unix(6, 0)) }, ""},
				{"purge and re-create b", func() error {
					if err := r.Delete(ctx, b); err != nil {
						return err
					}
					return r.Create(ctx, model.NewLedger(b, 1))
				}, "b:main"},
			}
			before := versionsAll(t, r, "", 10)
			for _, s := range steps {
				if err := s.write(); err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				after := versionsAll(t, r, "", 10)
				for id, v := range after {
					if moved := v != before[id]; moved != (id == s.changed) {
						t.Fatalf("%s: version of %s moved=%v (%q -> %q)", s.name, id, moved, before[id], v)
					}
				}
				before = after
			}
		})
	}
}
