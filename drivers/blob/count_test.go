package blob_test

import (
	"context"
	"testing"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/blob"
)

func TestRequestCountsGCS(t *testing.T)   { testRequestCounts(t, gcsServer(t)) }
func TestRequestCountsAzure(t *testing.T) { testRequestCounts(t, azureServer(t)) }

// testRequestCounts counts the HTTP requests of each operation on one
// record (layout B): a create is one write (and a read when the ID is
// taken), a lookup two reads in parallel whether or not the index sidecar
// exists; with a warm cache an uncontended push is one write; with a cold
// one, a read and a write (the index sidecar: two reads in parallel, then
// the write); a push after another client's write (stale cache) costs a
// failed write, a read and the write; a stale publish one read.
func testRequestCounts(t *testing.T, s *server) {
	bucket := s.newBucket(t)
	ctx := context.Background()
	cnt, hc := newCounter()
	opts := blob.Config{Layout: driver.LayoutB}
	id := driver.ID{Name: "db", Branch: "main"}
	d, other := openDriver(t, s, bucket, opts, hc), openDriver(t, s, bucket, opts, hc)
	lookup := func() {
		t.Helper()
		cold := openDriver(t, s, bucket, opts, hc)
		cnt.reset()
		if _, err := cold.Get(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	push := func(d *blob.Driver, c driver.Concern, t64 int64) {
		t.Helper()
		out, err := d.Update(ctx, id, c, driver.IfAbove(), driver.RefValue("a", t64))
		if err != nil || !out.Applied {
			t.Fatalf("push %s t%d: %v %v", c, t64, out, err)
		}
	}
	steps := []struct {
		name         string
		run          func()
		want, writes int64
	}{
		{"create", func() {
			if err := other.Create(ctx, driver.NewLedger(id, 1)); err != nil {
				t.Fatal(err)
			}
		}, 1, 1},
		{"create of a taken ID (failed write, then read)", func() {
			if err := d.Create(ctx, driver.NewLedger(id, 1)); driver.Code(err) != driver.AlreadyExists {
				t.Fatalf("create of a taken ID: %v", err)
			}
		}, 2, 1},
		{"lookup, unborn index (no sidecar), cold", lookup, 2, 0},
		{"head, cold cache", func() { push(d, driver.Head, 1) }, 2, 1},
		{"head, warm cache", func() { push(d, driver.Head, 2) }, 1, 1},
		{"head, warm again", func() { push(d, driver.Head, 3) }, 1, 1},
		{"index (new sidecar), cold", func() { push(d, driver.Index, 1) }, 3, 1},
		{"index, warm cache", func() { push(d, driver.Index, 2) }, 1, 1},
		{"lookup with sidecar, cold", lookup, 2, 0},
		{"head, stale cache after another client's push", func() {
			push(openDriver(t, s, bucket, opts, nil), driver.Head, 4)
			cnt.reset()
			push(d, driver.Head, 5)
		}, 3, 2},
		{"stale publish (conflict), warm cache", func() {
			out, err := d.Update(ctx, id, driver.Head, driver.IfAbove(), driver.RefValue("a", 1))
			if err != nil || out.Applied {
				t.Fatalf("stale publish: %v %v", out, err)
			}
		}, 1, 0},
		{"stale publish (conflict), cold process", func() {
			cold := openDriver(t, s, bucket, opts, hc)
			cnt.reset()
			out, err := cold.Update(ctx, id, driver.Head, driver.IfAbove(), driver.RefValue("a", 1))
			if err != nil || out.Applied {
				t.Fatalf("stale publish: %v %v", out, err)
			}
		}, 1, 0},
		// 2 reads, the sidecar's seal, the main file's mark (which stays)
		{"purge", func() {
			if err := d.Delete(ctx, id); err != nil {
				t.Fatal(err)
			}
		}, 4, 2},
	}
	for _, st := range steps {
		cnt.reset()
		st.run()
		got, writes := cnt.all.Load(), cnt.writes.Load()
		t.Logf("%-48s %d requests (%d writes)", st.name, got, writes)
		if got != st.want || writes != st.writes {
			t.Errorf("%s: %d requests (%d writes), want %d (%d writes)", st.name, got, writes, st.want, st.writes)
		}
	}
}
