package fs_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/internal/layout"
)

// harness gives each test a fresh directory; every client is an independent
// fs.Open of it, as another process would be.
func harness(opts fs.Config) conformance.Harness {
	return conformance.CorruptibleHarnessFunc(func(_ context.Context, t *testing.T) (conformance.Opener, conformance.CorruptFunc, error) {
		cfg := opts
		cfg.Dir = t.TempDir()
		open := func(ctx context.Context) (driver.Driver, error) { return fs.Open(ctx, cfg) }
		return open, func(_ context.Context, id driver.ID) error { return corrupt(cfg.Dir, layout.Layout(cfg.Layout), id) }, nil
	})
}

// corrupt overwrites the defining file of id with bytes that are no JSON.
func corrupt(dir string, l layout.Layout, id driver.ID) error {
	files, err := l.Files(id)
	if err != nil {
		return err
	}
	// Replaced by a rename, as a writer would: truncating in place would be
	// seen, for a moment, as the empty file of an unfinished create.
	path := filepath.Join(dir, filepath.FromSlash(files[0].Key))
	if err := os.WriteFile(path+".junk", []byte("{not json"), 0o644); err != nil {
		return err
	}
	return os.Rename(path+".junk", path)
}

func TestConformanceLayoutB(t *testing.T) {
	conformance.Run(t, harness(fs.Config{Layout: fs.LayoutB}))
}

func TestConformanceLayoutC(t *testing.T) {
	conformance.Run(t, harness(fs.Config{Layout: fs.LayoutC}))
}

func TestConformanceFlureeV4Dialect(t *testing.T) {
	conformance.Run(t, harness(fs.Config{Layout: fs.LayoutB, Dialect: "fluree-v4"}))
}
