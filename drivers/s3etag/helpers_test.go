package s3etag_test

import (
	"context"
	"net/http"
	"testing"

	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/testing/objstoretest"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
)

var testCreds = testenv.Credentials

// baseConfig returns a config for bucket on the test server.
func baseConfig(endpoint, bucket string, l jsonld.Layout) s3etag.Config {
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
	client, err := s3etag.NewClient(context.Background(), baseConfig(endpoint, "", jsonld.LayoutB))
	if err != nil {
		t.Fatal(err)
	}
	return endpoint, testenv.S3Bucket(t, client, "ns-")
}

// newCounter returns a request counter that tells ListObjectsV2 calls
// apart, and an HTTP client sending through it.
func newCounter() (*objstoretest.Counter, *http.Client) {
	return objstoretest.NewCounter(func(r *http.Request) bool { return r.URL.Query().Has("list-type") })
}
