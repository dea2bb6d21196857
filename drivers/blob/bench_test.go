package blob_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	azblobblob "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/blob"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// BenchmarkPushGCS and BenchmarkPushAzure measure an uncontended publish
// (warm cache: one conditional write) next to a raw conditional write of a
// file of the same size with the service's own SDK, in the same run, and
// report both latencies and their ratio.
//
//	go test -run '^$' -bench Push -benchtime 300x ./drivers/blob/
func BenchmarkPushGCS(b *testing.B) {
	s := gcsServer(b)
	bucket := s.newBucket(b)
	c, err := gcsClient(context.Background(), s.endpoint, nil)
	if err != nil {
		b.Fatal(err)
	}
	obj := c.Bucket(bucket).Object("raw/object.json")
	var gen int64
	benchPush(b, s, bucket, func(body []byte) {
		h := obj.If(storage.Conditions{DoesNotExist: true})
		if gen != 0 {
			h = obj.If(storage.Conditions{GenerationMatch: gen})
		}
		w := h.NewWriter(context.Background())
		w.ChunkSize = 0
		if _, err := w.Write(body); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		gen = w.Attrs().Generation
	})
}

func BenchmarkPushAzure(b *testing.B) {
	s := azureServer(b)
	bucket := s.newBucket(b)
	c, err := azureClient(s.endpoint, bucket, nil)
	if err != nil {
		b.Fatal(err)
	}
	bb := c.NewBlockBlobClient("raw/object.json")
	var etag *azcore.ETag
	benchPush(b, s, bucket, func(body []byte) {
		mac := &azblobblob.ModifiedAccessConditions{IfMatch: etag}
		if etag == nil {
			mac = &azblobblob.ModifiedAccessConditions{IfNoneMatch: ptr(azcore.ETagAny)}
		}
		out, err := bb.Upload(context.Background(), streaming.NopCloser(bytes.NewReader(body)),
			&blockblob.UploadOptions{AccessConditions: &azblobblob.AccessConditions{ModifiedAccessConditions: mac}})
		if err != nil {
			b.Fatal(err)
		}
		etag = out.ETag
	})
}

func ptr[T any](v T) *T { return &v }

// benchPush alternates a push through the driver with raw(body).
func benchPush(b *testing.B, s *server, bucket string, raw func(body []byte)) {
	ctx := context.Background()
	d := openDriver(b, s, bucket, blob.Config{Layout: jsonld.LayoutB}, nil)
	id := model.ID{Name: "bench", Branch: "main"}
	if err := d.Create(ctx, model.NewLedger(id, 1)); err != nil {
		b.Fatal(err)
	}
	rec, _ := d.Get(ctx, id)
	size := len(fmt.Sprint(rec)) + 400
	raw(body(size))
	testenv.BenchVsRaw(b, "push", func(i int) {
		out, err := d.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("bagaybqabciq", int64(i+1)))
		if err != nil || !out.Applied {
			b.Fatalf("push: %v %v", out, err)
		}
	}, "raw", func(int) { raw(body(size)) })
}

func body(size int) []byte {
	out := bytes.Repeat([]byte("x"), size)
	copy(out, strings.Repeat(fmt.Sprint(time.Now().UnixNano()), 1))
	return out
}
