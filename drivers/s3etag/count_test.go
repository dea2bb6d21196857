package s3etag_test

import (
	"context"
	"testing"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/layout"
)

// TestRequestCounts counts the HTTP requests of pushes: with a warm cache
// an uncontended push is one PUT; with a cold one, a GET and a PUT (the
// index sidecar of layout B: two GETs in parallel, then the PUT); a push
// after another client's write (stale cache) costs a 412, a GET and the PUT.
func TestRequestCounts(t *testing.T) {
	endpoint, bucket := newBucket(t)
	ctx := context.Background()
	cnt, httpClient := newCounter()
	cfg := baseConfig(endpoint, bucket, layout.B)
	cfg.HTTPClient = httpClient
	open := func() *s3etag.Driver {
		d, err := s3etag.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	id := driver.ID{Name: "db", Branch: "main"}
	if err := open().Create(ctx, driver.NewLedger(id, 1)); err != nil {
		t.Fatal(err)
	}
	d, other := open(), open()
	push := func(d *s3etag.Driver, c driver.Concern, t64 int64) {
		t.Helper()
		out, err := d.Update(ctx, id, c, driver.IfAbove(), driver.RefValue("a", t64))
		if err != nil || !out.Applied {
			t.Fatalf("push %s t%d: %v %v", c, t64, out, err)
		}
	}
	steps := []struct {
		name string
		run  func()
		want int64
	}{
		{"head, cold cache", func() { push(d, driver.Head, 1) }, 2},
		{"head, warm cache", func() { push(d, driver.Head, 2) }, 1},
		{"head, warm again", func() { push(d, driver.Head, 3) }, 1},
		{"index (new sidecar), cold", func() { push(d, driver.Index, 1) }, 3},
		{"index, warm cache", func() { push(d, driver.Index, 2) }, 1},
		{"head, stale cache after another client's push", func() {
			push(other, driver.Head, 4)
			cnt.reset()
			push(d, driver.Head, 5)
		}, 3},
		{"stale publish (conflict), warm cache", func() {
			out, err := d.Update(ctx, id, driver.Head, driver.IfAbove(), driver.RefValue("a", 1))
			if err != nil || out.Applied {
				t.Fatalf("stale publish: %v %v", out, err)
			}
		}, 1},
	}
	for _, s := range steps {
		cnt.reset()
		s.run()
		got := cnt.all.Load()
		t.Logf("%-48s %d requests (%d PUT, %d GET/HEAD)", s.name, got, cnt.puts.Load(), cnt.gets.Load())
		if got != s.want {
			t.Errorf("%s: %d requests, want %d", s.name, got, s.want)
		}
	}
}
