package docstore

import (
	"context"
	"testing"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/testing/fixturetest"
)

// TestFixtures writes every fixture case to a memdocstore collection of its
// own, one document per file, and checks the driver lists and gets exactly
// what expected.json says.
func TestFixtures(t *testing.T) {
	fixturetest.Run(t, func(t *testing.T, name string, files map[string][]byte) driver.Driver {
		d := mustMem(t)
		for rel, data := range files {
			if err := rawPut(context.Background(), d, rel, data); err != nil {
				t.Fatal(err)
			}
		}
		return d
	})
}
