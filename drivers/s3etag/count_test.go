package s3etag_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/testing/objstoretest"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// TestRequestCounts checks the request counts of each operation on one
// record (objstoretest.RequestCounts).
func TestRequestCounts(t *testing.T) {
	endpoint, bucket := newBucket(t)
	cnt, httpClient := newCounter()
	cfg := baseConfig(endpoint, bucket, jsonld.LayoutB)
	cfg.HTTPClient = httpClient
	objstoretest.RequestCounts(t, cnt, func() driver.Driver {
		d, err := s3etag.Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}

// TestListRequestCounts counts the requests of a full listing from a cold
// process: ⌈objects/1000⌉ ListObjectsV2 calls and one GET per record file
// the listing shows (no GET of a missing sidecar, no HEAD), in layouts B
// and C.
func TestListRequestCounts(t *testing.T) {
	// enough records for two list pages: B has 1 or 2 objects a record, C 4
	for l, n := range map[jsonld.Layout]int{jsonld.LayoutB: 1100, jsonld.LayoutC: 260} {
		t.Run(l.String(), func(t *testing.T) {
			t.Parallel() // a bucket of its own
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
					id := model.ID{Name: fmt.Sprintf("ledger-%05d", i), Branch: "main"}
					err := w.Create(ctx, model.NewLedger(id, 1))
					if err == nil && i%3 == 0 { // a third have an index sidecar
						_, err = w.Update(ctx, id, model.Index, driver.IfAbove(), model.RefValue("ix", 1))
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
			cnt.Reset()
			page, err := d.List(ctx, driver.ListOptions{PageSize: n + 1})
			if err != nil || len(page.Records) != n || len(page.Failed) != 0 || page.NextPageToken != "" {
				t.Fatalf("list: %d records, %d failed, token %q, %v", len(page.Records), len(page.Failed), page.NextPageToken, err)
			}
			wantLists := int64((objects + 999) / 1000)
			t.Logf("%d records, %d objects: %d requests, %d list calls, %d other GETs", n, objects, cnt.All.Load(), cnt.Lists.Load(), cnt.Reads.Load()-cnt.Lists.Load())
			if cnt.Lists.Load() != wantLists || cnt.Reads.Load()-cnt.Lists.Load() != int64(files) || cnt.All.Load() != wantLists+int64(files) {
				t.Fatalf("%d requests (%d list calls, %d GET/HEAD), want %d list calls and %d GETs", cnt.All.Load(), cnt.Lists.Load(),
					cnt.Reads.Load()-cnt.Lists.Load(), wantLists, files)
			}
		})
	}
}
