package docstore

import (
	"context"
	"testing"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/testing/objstoretest"
	"nameservice.dev/nameservice/jsonld"
)

// TestDebris: documents of a purged record written back behind the
// driver's back (a purge that stopped after removing the defining file) do
// not show through a re-create, and a writer whose cache predates the
// purge gets ErrNotFound.
func TestDebris(t *testing.T) {
	stores(t, true, func(t *testing.T, open func() *Driver) {
		raw := open()
		objstoretest.Debris(t, jsonld.LayoutB, func(*testing.T) driver.Driver { return open() }, objstoretest.Raw{
			Get: func(ctx context.Context, key string) ([]byte, error) { return rawGet(ctx, raw, key) },
			Put: func(ctx context.Context, key string, data []byte) error { return rawPut(ctx, raw, key, data) },
		})
	})
}
