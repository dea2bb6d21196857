package s3etag_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/s3etag"
)

// TestRequestCounts counts the HTTP requests of each operation on one
// record (layout B): a create is one PUT (two requests when the ID is
// taken), a lookup two GETs in parallel whether or not the index sidecar
// exists; with a warm cache an uncontended push is one PUT; with a cold
// one, a GET and a PUT (the index sidecar: two GETs in parallel, then the
// PUT); a push after another client's write (stale cache) costs a 412, a
// GET and the PUT; a stale publish one GET.
func TestRequestCounts(t *testing.T) {
	endpoint, bucket := newBucket(t)
	ctx := context.Background()
	cnt, httpClient := newCounter()
	cfg := baseConfig(endpoint, bucket, driver.LayoutB)
	cfg.HTTPClient = httpClient
	open := func() *s3etag.Driver {
		d, err := s3etag.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	id := driver.ID{Name: "db", Branch: "main"}
	d, other := open(), open()
	lookup := func() {
		t.Helper()
		cold := open()
		cnt.reset()
		if _, err := cold.Get(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
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
		{"create", func() {
			if err := other.Create(ctx, driver.NewLedger(id, 1)); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"create of a taken ID (412, then GET)", func() {
			if err := d.Create(ctx, driver.NewLedger(id, 1)); driver.Code(err) != driver.AlreadyExists {
				t.Fatalf("create of a taken ID: %v", err)
			}
		}, 2},
		{"lookup, unborn index (no sidecar), cold", lookup, 2},
		{"head, cold cache", func() { push(d, driver.Head, 1) }, 2},
		{"head, warm cache", func() { push(d, driver.Head, 2) }, 1},
		{"head, warm again", func() { push(d, driver.Head, 3) }, 1},
		{"index (new sidecar), cold", func() { push(d, driver.Index, 1) }, 3},
		{"index, warm cache", func() { push(d, driver.Index, 2) }, 1},
		{"lookup with sidecar, cold", lookup, 2},
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
		{"stale publish (conflict), cold process", func() {
			cold := open()
			cnt.reset()
			out, err := cold.Update(ctx, id, driver.Head, driver.IfAbove(), driver.RefValue("a", 1))
			if err != nil || out.Applied {
				t.Fatalf("stale publish: %v %v", out, err)
			}
		}, 1},
		// 2 GETs, the sidecar's seal, the main file's mark (which stays)
		{"purge", func() {
			if err := d.Delete(ctx, id); err != nil {
				t.Fatal(err)
			}
		}, 4},
		// PUT If-None-Match (412), GET of the mark, PUT If-Match on it
		{"create over a purge's mark", func() {
			if err := d.Create(ctx, driver.NewLedger(id, 1)); err != nil {
				t.Fatal(err)
			}
		}, 3},
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

// TestListRequestCounts counts the requests of a full listing from a cold
// process: ⌈objects/1000⌉ ListObjectsV2 calls and one GET per record file
// the listing shows (no GET of a missing sidecar, no HEAD), in layouts B
// and C.
func TestListRequestCounts(t *testing.T) {
	// enough records for two list pages: B has 1 or 2 objects a record, C 4
	for l, n := range map[driver.Layout]int{driver.LayoutB: 1100, driver.LayoutC: 260} {
		t.Run(l.String(), func(t *testing.T) {
			endpoint, bucket := newBucket(t)
			ctx := context.Background()
			cfg := baseConfig(endpoint, bucket, l)
			w, err := s3etag.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			sem := make(chan struct{}, 16)
			errs := make(chan error, n)
			for i := range n {
				sem <- struct{}{}
				go func() {
					defer func() { <-sem }()
					id := driver.ID{Name: fmt.Sprintf("ledger-%05d", i), Branch: "main"}
					err := w.Create(ctx, driver.NewLedger(id, 1))
					if err == nil && i%3 == 0 { // a third have an index sidecar
						_, err = w.Update(ctx, id, driver.Index, driver.IfAbove(), driver.RefValue("ix", 1))
					}
					errs <- err
				}()
			}
			for range n {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			client, err := s3etag.NewClient(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			objects, files := 0, 0
			p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: &bucket})
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range page.Contents {
					objects++
					if strings.HasSuffix(*o.Key, ".json") && *o.Size > 0 {
						files++
					}
				}
			}
			cnt, httpClient := newCounter()
			cfg.HTTPClient = httpClient
			d, err := s3etag.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			cnt.reset()
			page, err := d.List(ctx, driver.ListOptions{PageSize: n + 1})
			if err != nil || len(page.Records) != n || len(page.Failed) != 0 || page.NextPageToken != "" {
				t.Fatalf("list: %d records, %d failed, token %q, %v", len(page.Records), len(page.Failed), page.NextPageToken, err)
			}
			wantLists := int64((objects + 999) / 1000)
			t.Logf("%d records, %d objects: %d requests, %d list calls, %d other GETs", n, objects, cnt.all.Load(), cnt.lists.Load(), cnt.gets.Load()-cnt.lists.Load())
			if cnt.lists.Load() != wantLists || cnt.gets.Load()-cnt.lists.Load() != int64(files) || cnt.all.Load() != wantLists+int64(files) {
				t.Fatalf("%d requests (%d list calls, %d GET/HEAD), want %d list calls and %d GETs", cnt.all.Load(), cnt.lists.Load(),
					cnt.gets.Load()-cnt.lists.Load(), wantLists, files)
			}
		})
	}
}
