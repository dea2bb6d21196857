package mem_test

import (
	"context"
	"testing"
	"time"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/model"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	conformance.Run(t, exactListings{func(context.Context, *testing.T) (conformance.Opener, conformance.CorruptFunc, error) {
		s := mem.NewStore()
		open := func(context.Context) (driver.Driver, error) { return s.Open(), nil }
		return open, func(_ context.Context, id model.ID) error { return s.Corrupt(id) }, nil
	}})
}

// exactListings is a harness of mem stores, whose listings show every
// write at once: a listing that misses one fails without waiting.
type exactListings struct {
	conformance.CorruptibleHarnessFunc
}

func (exactListings) ListingSettles() time.Duration { return 0 }

// noWatch hides the mem driver's change feed, so the suite exercises the
// portable polling Watch; it keeps its collector and its branches.
type noWatch struct {
	driver.Driver
	driver.Brancher
}

func (n noWatch) Collect(ctx context.Context, o driver.CollectOptions) (driver.CollectStats, error) {
	return n.Driver.(driver.Collector).Collect(ctx, o)
}

func TestConformanceWithoutChangeFeed(t *testing.T) {
	t.Parallel()
	conformance.Run(t, exactListings{func(context.Context, *testing.T) (conformance.Opener, conformance.CorruptFunc, error) {
		s := mem.NewStore()
		open := func(context.Context) (driver.Driver, error) {
			d := s.Open()
			return noWatch{d, d}, nil
		}
		return open, func(_ context.Context, id model.ID) error { return s.Corrupt(id) }, nil
	}})
}
