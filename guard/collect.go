package guard

import (
	"context"
	"fmt"
	"unicode/utf8"

	"nameservice.dev/nameservice/driver"
)

var _ driver.Collector = (*Driver)(nil)

// Collect implements driver.Collector: OlderThan must not be negative and
// Prefix must be valid UTF-8 no longer than an ID. It returns an error
// wrapping ErrUnsupported when the driver cannot collect.
func (g *Driver) Collect(ctx context.Context, opts driver.CollectOptions) (driver.CollectStats, error) {
	switch {
	case opts.OlderThan < 0:
		return driver.CollectStats{}, invalid("older than %s: a duration cannot be negative", opts.OlderThan)
	case !utf8.ValidString(opts.Prefix):
		return driver.CollectStats{}, invalid("prefix is not valid UTF-8")
	case len(opts.Prefix) > driver.MaxIDLength:
		return driver.CollectStats{}, limitError("prefix", "bytes", len(opts.Prefix), driver.MaxIDLength)
	}
	c, ok := g.d.(driver.Collector)
	if !ok {
		return driver.CollectStats{}, fmt.Errorf("%w: this backend's driver cannot collect what purges left", driver.ErrUnsupported)
	}
	st, err := c.Collect(ctx, opts)
	return st, FromBackend(err)
}
