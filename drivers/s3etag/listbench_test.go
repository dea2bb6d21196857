package s3etag_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/objstore"
)

// listPage is the page size of BenchmarkList: one ListObjectsV2 page.
// With pages of 100 a listing makes N/100 list calls, and versitygw's cost
// per call grows with the bucket (measured: 0.34 s per page at 1,000
// records, 0.93 s at 10,000), which no client can avoid.
const listPage = 1000

// BenchmarkList lists N records in pages of listPage from a cold driver
// beside the floor measured in the same run with
// the same parallelism: ListObjectsV2 over the prefix and a GET of every
// object. The bucket is seeded with raw PUTs of valid ns@v2 files (copies
// of a record the driver created). NS_BENCH_LIST_MAX=100000 adds 100,000.
//
//	go test -run '^$' -bench 'List$' -benchtime 1x ./drivers/s3etag/
func BenchmarkList(b *testing.B) {
	sizes := []int{1000, 10_000}
	if n, _ := strconv.Atoi(os.Getenv("NS_BENCH_LIST_MAX")); n >= 100_000 {
		sizes = append(sizes, 100_000)
	}
	for _, l := range []driver.Layout{driver.LayoutB, driver.LayoutC} {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("layout=%s/n=%d", l, n), func(b *testing.B) { benchList(b, l, n) })
		}
	}
}

func benchList(b *testing.B, l driver.Layout, n int) {
	endpoint, bucket := newBucket(b)
	ctx := context.Background()
	cfg := baseConfig(endpoint, bucket, l)
	d, err := s3etag.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	seedS3(b, d, n)
	var list, raw time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		objects := rawList(b, d, objstore.DefaultListParallel)
		mid := time.Now()
		fresh, err := s3etag.Open(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		got, tok := 0, ""
		for {
			p, err := fresh.List(ctx, driver.ListOptions{PageSize: listPage, PageToken: tok})
			if err != nil || len(p.Failed) > 0 {
				b.Fatalf("list: %v %v", err, p.Failed)
			}
			got += len(p.Records)
			if tok = p.NextPageToken; tok == "" {
				break
			}
		}
		list += time.Since(mid)
		raw += mid.Sub(start)
		if got != n || objects < n {
			b.Fatalf("listed %d records, %d objects; want %d", got, objects, n)
		}
	}
	b.ReportMetric(float64(list.Milliseconds())/float64(b.N), "list-ms")
	b.ReportMetric(float64(raw.Milliseconds())/float64(b.N), "raw-ms")
	b.ReportMetric(float64(list)/float64(raw), "list/raw")
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	b.ReportMetric(float64(ru.Maxrss)/1024, "maxrss-MB")
}

// seedS3 PUTs n records, 16 at a time, as copies of the objects of one the
// driver creates, with the name changed.
func seedS3(b *testing.B, d *s3etag.Driver, n int) {
	ctx := context.Background()
	if err := d.Create(ctx, driver.NewLedger(driver.ID{Name: "tmpl", Branch: "main"}, 1)); err != nil {
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
