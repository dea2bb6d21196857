package fs_test

import (
	"context"
	"testing"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// harness gives each test a fresh directory; every client is an independent
// fs.Open of it, as another process would be.
func harness(opts fs.Config) conformance.Harness {
	return conformance.CorruptibleHarnessFunc(func(_ context.Context, t *testing.T) (conformance.Opener, conformance.CorruptFunc, error) {
		cfg := opts
		cfg.Dir = t.TempDir()
		open := func(ctx context.Context) (driver.Driver, error) { return fs.Open(ctx, cfg) }
		return open, func(_ context.Context, id model.ID) error {
			return testenv.CorruptFile(cfg.Dir, cfg.Layout, id)
		}, nil
	})
}

func TestConformanceLayoutB(t *testing.T) {
	t.Parallel()
	conformance.Run(t, harness(fs.Config{Layout: jsonld.LayoutB}))
}

func TestConformanceLayoutC(t *testing.T) {
	t.Parallel()
	conformance.Run(t, harness(fs.Config{Layout: jsonld.LayoutC}))
}

func TestConformanceFlureeV4Dialect(t *testing.T) {
	t.Parallel()
	conformance.Run(t, harness(fs.Config{Layout: jsonld.LayoutB, Dialect: "fluree-v4"}))
}
