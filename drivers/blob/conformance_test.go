package blob_test

import (
	"context"
	"testing"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/blob"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// harness serves the whole suite from one bucket of s (the suite isolates
// its tests by ID prefix); every client is an independent driver on a
// bucket handle and SDK client of its own, with its own cache, as another
// process would be.
func harness(t *testing.T, s *server, l jsonld.Layout) conformance.Harness {
	bucket := s.newBucket(t)
	opts := blob.Config{Prefix: "suite", Layout: l}
	return conformance.CorruptibleHarnessFunc(func(context.Context, *testing.T) (conformance.Opener, conformance.CorruptFunc, error) {
		open := func(ctx context.Context) (driver.Driver, error) {
			b, err := s.open(ctx, bucket, nil)
			if err != nil {
				return nil, err
			}
			return blob.OpenBucket(ctx, b, opts)
		}
		corrupt := func(ctx context.Context, id model.ID) error {
			files, err := layout.Files(l, id)
			if err != nil {
				return err
			}
			b, err := s.open(ctx, bucket, nil)
			if err != nil {
				return err
			}
			defer b.Close()
			return b.WriteAll(ctx, opts.Prefix+"/"+files[0].Key, []byte("{not json"), nil)
		}
		return open, corrupt, nil
	})
}

func TestConformanceGCSLayoutB(t *testing.T) {
	t.Parallel()
	conformance.Run(t, harness(t, gcsServer(t), jsonld.LayoutB))
}

func TestConformanceGCSLayoutC(t *testing.T) {
	t.Parallel()
	conformance.Run(t, harness(t, gcsServer(t), jsonld.LayoutC))
}

func TestConformanceAzureLayoutB(t *testing.T) {
	t.Parallel()
	conformance.Run(t, harness(t, azureServer(t), jsonld.LayoutB))
}

func TestConformanceAzureLayoutC(t *testing.T) {
	t.Parallel()
	conformance.Run(t, harness(t, azureServer(t), jsonld.LayoutC))
}
