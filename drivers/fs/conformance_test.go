package fs_test

import (
	"context"
	"testing"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/fs"
)

// harness gives each test a fresh directory; every client is an independent
// fs.Open of it, as another process would be.
func harness(opts fs.Options) conformance.Harness {
	return conformance.HarnessFunc(func(_ context.Context, t *testing.T) (conformance.Opener, error) {
		dir := t.TempDir()
		return func(context.Context) (driver.Driver, error) { return fs.Open(dir, opts) }, nil
	})
}

func TestConformanceLayoutB(t *testing.T) {
	conformance.Run(t, harness(fs.Options{Layout: fs.LayoutB}))
}

func TestConformanceLayoutC(t *testing.T) {
	conformance.Run(t, harness(fs.Options{Layout: fs.LayoutC}))
}

func TestConformanceFlureeV4Dialect(t *testing.T) {
	conformance.Run(t, harness(fs.Options{Layout: fs.LayoutB, Dialect: "fluree-v4"}))
}
