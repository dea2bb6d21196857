package blob_test

import (
	"testing"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/blob"
	"nameservice.dev/nameservice/internal/testing/objstoretest"
	"nameservice.dev/nameservice/jsonld"
)

func TestRequestCountsGCS(t *testing.T)   { testRequestCounts(t, gcsServer(t)) }
func TestRequestCountsAzure(t *testing.T) { testRequestCounts(t, azureServer(t)) }

// testRequestCounts checks the request counts of each operation on one
// record (objstoretest.RequestCounts).
func testRequestCounts(t *testing.T, s *server) {
	bucket := s.newBucket(t)
	cnt, hc := newCounter()
	objstoretest.RequestCounts(t, cnt, func() driver.Driver {
		return openDriver(t, s, bucket, blob.Config{Layout: jsonld.LayoutB}, hc)
	})
}
