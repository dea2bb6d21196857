package fs_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/testing/objstoretest"
)

// TestDebris: files of a purged record written back behind the driver's
// back (a purge that stopped after removing the defining file) do not show
// through a re-create, and a writer whose cache predates the purge gets
// ErrNotFound.
func TestDebris(t *testing.T) {
	for name, opts := range layouts {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			raw := objstoretest.Raw{
				Get: func(_ context.Context, key string) ([]byte, error) {
					data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(key)))
					if errors.Is(err, fs.ErrNotExist) {
						return nil, nil
					}
					return data, err
				},
				Put: func(_ context.Context, key string, data []byte) error {
					return os.WriteFile(filepath.Join(dir, filepath.FromSlash(key)), data, 0o644)
				},
			}
			open := func(t *testing.T) driver.Driver { return open(t, dir, opts) }
			objstoretest.Debris(t, opts.Layout, open, raw)
		})
	}
}
