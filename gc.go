package nameservice

import (
	"context"
	"fmt"

	"nameservice.dev/nameservice/driver"
)

// Collection types, defined in package driver.
type (
	CollectOptions = driver.CollectOptions
	CollectStats   = driver.CollectStats
	Collected      = driver.Collected
)

// Collect removes what purges left under opts.Prefix once older than
// opts.OlderThan (see driver.Collector for what it keeps), reporting each
// object it removed or kept through opts.Report. It is safe with writers
// in other processes. OlderThan must exceed the longest any client takes
// from its first read to its last write of one operation (docs/s3.md,
// "Garbage collection"). It returns an error wrapping ErrUnsupported when
// the driver cannot collect, and ErrInvalidArgument for a negative
// OlderThan.
func (ns *NameService) Collect(ctx context.Context, opts CollectOptions) (CollectStats, error) {
	st, err := ns.collect(ctx, opts)
	if err != nil {
		return st, fmt.Errorf("collect: %w", err)
	}
	return st, nil
}
