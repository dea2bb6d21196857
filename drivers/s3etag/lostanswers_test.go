package s3etag_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
)

// TestLostAnswers loses the answer of each write at a proxy in front of
// versitygw while another client purges (and creates again) the record, in
// both layouts.
func TestLostAnswers(t *testing.T) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run("Layout"+strings.ToUpper(l.String()), func(t *testing.T) {
			endpoint, bucket := newBucket(t)
			cfg := baseConfig(endpoint, bucket, l)
			conformance.RunLostAnswers(t, conformance.LossyHarnessFunc(func(context.Context, *testing.T) (conformance.Opener, conformance.LossyOpener, error) {
				open := func(ctx context.Context) (driver.Driver, error) { return s3etag.Open(ctx, cfg) }
				lossy := func(ctx context.Context, lose func() bool) (driver.Driver, error) {
					// Armed once open: the probe's writes are not the write under test.
					var armed atomic.Bool
					url, err := testenv.LossyProxy(t, endpoint, func() bool { return armed.Load() && lose() })
					if err != nil {
						return nil, err
					}
					c := cfg
					c.Endpoint = url
					d, err := s3etag.Open(ctx, c)
					armed.Store(err == nil)
					return d, err
				}
				return open, lossy, nil
			}))
		})
	}
}
