package s3etag_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/internal/testenv"
)

var testCreds = credentials.NewStaticCredentialsProvider("test", "test", "")

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// baseConfig returns a config for bucket on the test server.
func baseConfig(endpoint, bucket string, l layout.Layout) s3etag.Config {
	return s3etag.Config{
		Bucket: bucket, Region: "us-east-1", Endpoint: endpoint, PathStyle: true,
		Layout: l, Credentials: testCreds,
	}
}

// newBucket creates a bucket of its own on the test server and removes it,
// with its objects, when the test ends.
func newBucket(t testing.TB) (endpoint, bucket string) {
	t.Helper()
	endpoint = testenv.S3Endpoint(t)
	bucket = "ns-" + randomHex(6)
	ctx := context.Background()
	client, err := s3etag.NewClient(ctx, baseConfig(endpoint, bucket, layout.B))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	t.Cleanup(func() { emptyAndRemove(client, bucket) })
	return endpoint, bucket
}

func emptyAndRemove(client *s3.Client, bucket string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: &bucket})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return
		}
		var ids []types.ObjectIdentifier
		for _, o := range page.Contents {
			ids = append(ids, types.ObjectIdentifier{Key: o.Key})
		}
		for _, id := range ids {
			_, _ = client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: id.Key})
		}
	}
	_, _ = client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
}

// counter is an http.RoundTripper that counts the requests it sends, by
// method.
type counter struct {
	next http.RoundTripper
	all  atomic.Int64
	puts atomic.Int64
	gets atomic.Int64
	// lists counts ListObjectsV2 calls (also counted in gets).
	lists atomic.Int64
}

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.all.Add(1)
	switch r.Method {
	case http.MethodPut:
		c.puts.Add(1)
	case http.MethodGet, http.MethodHead:
		c.gets.Add(1)
		if r.URL.Query().Has("list-type") {
			c.lists.Add(1)
		}
	}
	return c.next.RoundTrip(r)
}

func (c *counter) reset() { c.all.Store(0); c.puts.Store(0); c.gets.Store(0); c.lists.Store(0) }

func newCounter() (*counter, *http.Client) {
	c := &counter{next: http.DefaultTransport.(*http.Transport).Clone()}
	return c, &http.Client{Transport: c, Timeout: 10 * time.Second}
}
