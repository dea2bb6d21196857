// Package conformance is the one executable definition of nameservice
// behaviour: every driver passes Run, unchanged, with a one-function test.
//
// # Writing a driver test
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.HarnessFunc(func(ctx context.Context, t *testing.T) (conformance.Opener, error) {
//			dir := t.TempDir()
//			return func(ctx context.Context) (driver.Driver, error) { return mydriver.Open(dir) }, nil
//		}))
//	}
//
// # Groups and capabilities
//
// Each group (suite.go) names the guarantee it checks. Optional capabilities
// are tested where present: driver.Brancher, driver.Collector and
// driver.CommitIndexer have groups of their own, which on a driver without
// the capability check that the portable API answers ErrUnsupported; the
// Watch and Subscribe groups pass without driver.Watcher through the
// portable polling watch.
//
// # Sharing a server
//
// NewStore may hand every test the same server, table or bucket: each test
// works and lists under an ID prefix of its own.
//
// # Checking a live store
//
// Check runs the same cases from a program against any Opener (`ns check
// URL`), each under a prefix of the caller's; the report names each group's
// guarantee, so a failure says which promise the store broke.
package conformance

import (
	"context"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// Opener opens a new, independent client of one store, as a separate process
// would: its own connections, caches and locks.
type Opener func(ctx context.Context) (driver.Driver, error)

// Harness prepares stores for the suite.
type Harness interface {
	// NewStore prepares a store for one test and returns the opener of its
	// clients, registering any cleanup with t.Cleanup (the suite closes the
	// clients). It must be safe for concurrent use.
	NewStore(ctx context.Context, t *testing.T) (Opener, error)
}

// HarnessFunc adapts a function to Harness.
type HarnessFunc func(ctx context.Context, t *testing.T) (Opener, error)

// NewStore calls f.
func (f HarnessFunc) NewStore(ctx context.Context, t *testing.T) (Opener, error) { return f(ctx, t) }

// CorruptFunc makes what the store holds for record id unreadable to every
// client (say its defining file overwritten with data that does not
// decode) while leaving it where List finds it.
type CorruptFunc func(ctx context.Context, id model.ID) error

// Corrupter is a Harness whose stores can be corrupted on purpose, for the
// cases about unreadable records.
type Corrupter interface {
	Harness
	// NewCorruptibleStore is NewStore, plus the function that corrupts a record.
	NewCorruptibleStore(ctx context.Context, t *testing.T) (Opener, CorruptFunc, error)
}

// CorruptibleHarnessFunc adapts a function to Corrupter.
type CorruptibleHarnessFunc func(ctx context.Context, t *testing.T) (Opener, CorruptFunc, error)

// NewStore calls f and drops its CorruptFunc.
func (f CorruptibleHarnessFunc) NewStore(ctx context.Context, t *testing.T) (Opener, error) {
	open, _, err := f(ctx, t)
	return open, err
}

// NewCorruptibleStore calls f.
func (f CorruptibleHarnessFunc) NewCorruptibleStore(ctx context.Context, t *testing.T) (Opener, CorruptFunc, error) {
	return f(ctx, t)
}

// ListingSettler is a Harness that says how long its stores' listings may
// take to show a write (default 30 s, a DynamoDB index on a loaded machine);
// a store whose listings show every write at once says 0, to fail at once.
type ListingSettler interface {
	Harness
	ListingSettles() time.Duration
}
