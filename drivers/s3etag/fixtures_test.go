package s3etag_test

import (
	"bytes"
	"context"
	"path"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/testing/fixturetest"
	"nameservice.dev/nameservice/jsonld"
)

// TestFixtures uploads every fixture case to a prefix of one bucket and
// checks the driver lists and gets exactly what expected.json says.
func TestFixtures(t *testing.T) {
	endpoint, bucket := newBucket(t)
	fixturetest.Run(t, func(t *testing.T, name string, files map[string][]byte) driver.Driver {
		cfg := baseConfig(endpoint, bucket, jsonld.LayoutB)
		cfg.Prefix = name
		d, err := s3etag.Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for rel, b := range files {
			key := path.Join(name, rel)
			if _, err := d.Client().PutObject(context.Background(), &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(b)}); err != nil {
				t.Fatal(err)
			}
		}
		return d
	})
}
