package blob_test

import (
	"bytes"
	"context"
	"path"
	"testing"

	gblob "gocloud.dev/blob"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/blob"
	"nameservice.dev/nameservice/internal/testing/fixturetest"
	"nameservice.dev/nameservice/jsonld"
)

func TestFixturesGCS(t *testing.T)   { testFixtures(t, gcsServer(t)) }
func TestFixturesAzure(t *testing.T) { testFixtures(t, azureServer(t)) }

// testFixtures uploads every fixture case to a prefix of one bucket and
// checks the driver lists and gets exactly what expected.json says.
func testFixtures(t *testing.T, s *server) {
	bucket := s.newBucket(t)
	fixturetest.Run(t, func(t *testing.T, name string, files map[string][]byte) driver.Driver {
		d := openDriver(t, s, bucket, blob.Config{Prefix: name, Layout: jsonld.LayoutB}, nil)
		for rel, data := range files {
			opts := &gblob.WriterOptions{ContentType: "application/json"}
			if err := d.Bucket().Upload(context.Background(), path.Join(name, rel), bytes.NewReader(data), opts); err != nil {
				t.Fatal(err)
			}
		}
		return d
	})
}
