package driverutil

import (
	"context"
	"fmt"
	"sync/atomic"

	"nameservice.dev/nameservice/model"
)

// ClosedFlag is the closed-driver check: after Close every operation fails
// with an error wrapping model.ErrInvalidArgument, and a second Close is
// harmless. Its zero value is open; it is safe for concurrent use.
type ClosedFlag struct{ closed atomic.Bool }

// Close marks the driver closed and reports whether this call closed it
// (false when it already was: the caller then has nothing to release).
func (f *ClosedFlag) Close() bool { return !f.closed.Swap(true) }

// Check returns an error naming the driver when ctx is done (wrapping
// ctx's error) or the driver is closed (wrapping model.ErrInvalidArgument).
func (f *ClosedFlag) Check(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if f.closed.Load() {
		return fmt.Errorf("%s: %w: driver is closed", name, model.ErrInvalidArgument)
	}
	return nil
}
