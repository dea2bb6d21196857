package mem_test

import (
	"context"
	"testing"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.HarnessFunc(func(context.Context, *testing.T) (conformance.Opener, error) {
		s := mem.NewStore()
		return func(context.Context) (driver.Driver, error) { return s.Open(), nil }, nil
	}))
}

// noWatch hides the mem driver's change feed, so the suite exercises the
// portable polling Watch.
type noWatch struct{ driver.Driver }

func TestConformanceWithoutChangeFeed(t *testing.T) {
	conformance.Run(t, conformance.HarnessFunc(func(context.Context, *testing.T) (conformance.Opener, error) {
		s := mem.NewStore()
		return func(context.Context) (driver.Driver, error) { return noWatch{s.Open()}, nil }, nil
	}))
}
