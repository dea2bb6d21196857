package s3etag_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/testenv"
)

var testCreds = testenv.Credentials

// baseConfig returns a config for bucket on the test server.
func baseConfig(endpoint, bucket string, l driver.Layout) s3etag.Config {
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
	client, err := s3etag.NewClient(context.Background(), baseConfig(endpoint, "", driver.LayoutB))
	if err != nil {
		t.Fatal(err)
	}
	return endpoint, testenv.S3Bucket(t, client, "ns-")
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
