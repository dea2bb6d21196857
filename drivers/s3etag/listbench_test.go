package s3etag_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	neturl "net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// listPage is the page size of BenchmarkList: one ListObjectsV2 page.
// With pages of 100 a listing makes N/100 list calls, and versitygw's cost
// per call grows with the bucket (measured: 0.34 s per page at 1,000
// records, 0.93 s at 10,000), which no client can avoid.
const listPage = 1000

// BenchmarkList lists N records (NS_BENCH_LIST_SIZES, default
// 1000,10000) in pages of listPage from a cold driver beside the floor
// measured in the same run with the same parallelism: ListObjectsV2 over
// the prefix and a GET of every object. The bucket is seeded with raw PUTs
// of valid ns@v2 files (copies of a record the driver created). rss-MB is
// the peak resident set of `ns list --page-size 1000` over the same bucket,
// in a process of its own.
//
//	NS_BENCH_LIST_SIZES=1000,10000,100000 go test -run '^$' -bench 'List$' -benchtime 1x ./drivers/s3etag/
func BenchmarkList(b *testing.B) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		for _, n := range testenv.ListSizes(b) {
			b.Run(fmt.Sprintf("layout=%s/n=%d", l, n), func(b *testing.B) { benchList(b, l, n) })
		}
	}
}

func benchList(b *testing.B, l jsonld.Layout, n int) {
	endpoint, bucket := newBucket(b)
	ctx := context.Background()
	cfg := baseConfig(endpoint, bucket, l)
	d, err := s3etag.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	seedS3(b, d, n)
	// The CLI's listing, first, also warms the server's caches for both.
	url := fmt.Sprintf("s3://%s?endpoint=%s&layout=%s", bucket, neturl.QueryEscape(endpoint), l)
	cliRSS := testenv.ListCLI(b, n, url, "--page-size", strconv.Itoa(listPage))
	var list, raw []time.Duration
	for b.Loop() {
		start := time.Now()
		objects := rawList(b, d, objstore.DefaultListParallel)
		mid := time.Now()
		fresh, err := s3etag.Open(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		got, failed, err := testenv.ListAll(ctx, fresh, driver.ListOptions{PageSize: listPage})
		list = append(list, time.Since(mid))
		raw = append(raw, mid.Sub(start))
		_ = fresh.Close()
		if err != nil || failed != 0 || got != n || objects < n {
			b.Fatalf("listed %d records and %d failures, %d objects; want %d (%v)", got, failed, objects, n, err)
		}
	}
	testenv.ReportList(b, list, raw, cliRSS)
}

// seedS3 PUTs n records, 16 at a time, as copies of the objects of one the
// driver creates, with the name changed.
func seedS3(b *testing.B, d *s3etag.Driver, n int) {
	ctx := context.Background()
	if err := d.Create(ctx, model.NewLedger(model.ID{Name: "tmpl", Branch: "main"}, 1)); err != nil {
		b.Fatal(err)
	}
	c, bucket := d.Client(), d.Bucket()
	files := map[string]string{}
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: aws.String("ns@v2/tmpl/")})
	if err != nil {
		b.Fatal(err)
	}
	for _, o := range out.Contents {
		got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: o.Key})
		if err != nil {
			b.Fatal(err)
		}
		data, _ := io.ReadAll(got.Body)
		got.Body.Close()
		files[strings.TrimPrefix(*o.Key, "ns@v2/tmpl/")] = string(data)
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: o.Key}); err != nil {
			b.Fatal(err)
		}
	}
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range n {
		name := fmt.Sprintf("ledger-%06d", i)
		for f, data := range files {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				body := []byte(strings.ReplaceAll(data, `"tmpl`, `"`+name))
				_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("ns@v2/" + name + "/" + f),
					Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body)))})
				if err != nil {
					b.Error(err)
				}
			}()
		}
	}
	wg.Wait()
}

// rawList is the floor: ListObjectsV2 over ns@v2/ and a GET of every
// object, par at a time. It returns the objects read.
func rawList(b *testing.B, d *s3etag.Driver, par int) int {
	ctx := context.Background()
	c, bucket := d.Client(), d.Bucket()
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	n := 0
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: aws.String("ns@v2/")})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range page.Contents {
			n++
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: o.Key})
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, got.Body)
				got.Body.Close()
			}()
		}
	}
	wg.Wait()
	return n
}
