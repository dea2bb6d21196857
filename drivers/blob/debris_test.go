package blob_test

import (
	"context"
	"testing"

	"gocloud.dev/gcerrors"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/blob"
	"nameservice.dev/nameservice/internal/testing/objstoretest"
	"nameservice.dev/nameservice/jsonld"
)

func TestDebrisGCS(t *testing.T)   { testDebris(t, gcsServer(t)) }
func TestDebrisAzure(t *testing.T) { testDebris(t, azureServer(t)) }

// testDebris: files of a purged record written back with the SDK (a purge
// that stopped after removing the defining file) do not show through a
// re-create, and a writer whose cache predates the purge gets ErrNotFound.
func testDebris(t *testing.T, s *server) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			bucket := s.newBucket(t)
			ctx := context.Background()
			b, err := s.open(ctx, bucket, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })
			open := func(t *testing.T) driver.Driver { return openDriver(t, s, bucket, blob.Config{Layout: l}, nil) }
			raw := objstoretest.Raw{
				Get: func(ctx context.Context, key string) ([]byte, error) {
					data, err := b.ReadAll(ctx, key)
					if gcerrors.Code(err) == gcerrors.NotFound {
						return nil, nil
					}
					return data, err
				},
				Put: func(ctx context.Context, key string, data []byte) error { return b.WriteAll(ctx, key, data, nil) },
			}
			objstoretest.Debris(t, l, open, raw)
		})
	}
}
