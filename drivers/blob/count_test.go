package blob_test

import (
	"context"
	"testing"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/blob"
)

func TestRequestCountsGCS(t *testing.T)   { testRequestCounts(t, gcsServer(t)) }
func TestRequestCountsAzure(t *testing.T) { testRequestCounts(t, azureServer(t)) }

// testRequestCounts counts the HTTP requests of pushes: with a warm cache an
// uncontended push is one write; with a cold one, a read and a write (the
// index sidecar of layout B: two reads in parallel, then the write); a push
// after another client's write (stale cache) costs a failed write, a read
// and the write.
func testRequestCounts(t *testing.T, s *server) {
	bucket := s.newBucket(t)
	ctx := context.Background()
	cnt, hc := newCounter()
	opts := blob.Config{Layout: driver.LayoutB}
	id := driver.ID{Name: "db", Branch: "main"}
	if err := openDriver(t, s, bucket, opts, nil).Create(ctx, driver.NewLedger(id, 1)); err != nil {
		t.Fatal(err)
	}
	d, other := openDriver(t, s, bucket, opts, hc), openDriver(t, s, bucket, opts, nil)
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
		{"head, cold cache", func() { push(d, driver.Head, 1) }, 2, 1},
		{"head, warm cache", func() { push(d, driver.Head, 2) }, 1, 1},
		{"head, warm again", func() { push(d, driver.Head, 3) }, 1, 1},
		{"index (new sidecar), cold", func() { push(d, driver.Index, 1) }, 3, 1},
		{"index, warm cache", func() { push(d, driver.Index, 2) }, 1, 1},
		{"head, stale cache after another client's push", func() {
			push(other, driver.Head, 4)
			cnt.reset()
			push(d, driver.Head, 5)
		}, 3, 2},
		{"stale publish (conflict), warm cache", func() {
			out, err := d.Update(ctx, id, driver.Head, driver.IfAbove(), driver.RefValue("a", 1))
			if err != nil || out.Applied {
				t.Fatalf("stale publish: %v %v", out, err)
			}
		}, 1, 0},
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
