package s3etag_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// BenchmarkPush measures an uncontended publish (warm cache: one
// conditional PUT) next to a raw PutObject with If-Match of a file of the
// same size, in the same run, and reports both latencies and their ratio.
//
//	go test -run '^$' -bench Push -benchtime 500x ./drivers/s3etag/
func BenchmarkPush(b *testing.B) {
	endpoint, bucket := newBucket(b)
	ctx := context.Background()
	d, err := s3etag.Open(ctx, baseConfig(endpoint, bucket, jsonld.LayoutB))
	if err != nil {
		b.Fatal(err)
	}
	id := model.ID{Name: "bench", Branch: "main"}
	if err := d.Create(ctx, model.NewLedger(id, 1)); err != nil {
		b.Fatal(err)
	}
	rec, _ := d.Get(ctx, id)
	size := len(fmt.Sprint(rec)) + 400
	key := "raw/object.json"
	etag := rawPut(b, d.Client(), bucket, key, size, nil)
	testenv.BenchVsRaw(b, "push", func(i int) {
		out, err := d.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("bagaybqabciq", int64(i+1)))
		if err != nil || !out.Applied {
			b.Fatalf("push: %v %v", out, err)
		}
	}, "raw", func(int) { etag = rawPut(b, d.Client(), bucket, key, size, etag) })
}

func rawPut(b *testing.B, c *s3.Client, bucket, key string, size int, etag *string) *string {
	b.Helper()
	body := bytes.Repeat([]byte("x"), size)
	copy(body, strings.Repeat(fmt.Sprint(time.Now().UnixNano()), 1))
	out, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(key), Body: bytes.NewReader(body), IfMatch: etag})
	if err != nil {
		b.Fatal(err)
	}
	return out.ETag
}
