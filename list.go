package nameservice

import (
	"context"
	"fmt"
	"iter"

	"nameservice.dev/nameservice/driver"
)

// List returns the records matching opts in ascending ID order, fetching
// pages of opts.PageSize underneath. Iteration stops at the first error,
// which is yielded with a nil record; a record that cannot be read is such an
// error, never skipped. Retracted records are left out unless
// opts.IncludeRetracted is set.
func (ns *NameService) List(ctx context.Context, opts ListOptions) iter.Seq2[*Record, error] {
	return func(yield func(*Record, error) bool) {
		if opts.Kind != "" && !opts.Kind.Valid() {
			yield(nil, fmt.Errorf("list: %w: kind %q is neither ledger nor graph_source", driver.ErrInvalidArgument, opts.Kind))
			return
		}
		for {
			page, err := ns.d.List(ctx, opts)
			if err != nil {
				yield(nil, fmt.Errorf("list: %w", err))
				return
			}
			for _, r := range page.Records {
				if !yield(r, nil) {
					return
				}
			}
			if page.NextPageToken == "" {
				return
			}
			if page.NextPageToken == opts.PageToken {
				yield(nil, fmt.Errorf("list: %w: driver returned the same page token twice", driver.ErrInternal))
				return
			}
			opts.PageToken = page.NextPageToken
		}
	}
}
