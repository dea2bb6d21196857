package nameservice

import (
	"context"
	"fmt"
	"iter"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// List returns the records matching opts in ascending ID order, fetching
// pages of opts.PageSize underneath. A record that cannot be read is yielded,
// in its place in the order, as a nil record and an error wrapping a
// *RecordError that names it, and iteration goes on past it. Any other error
// (the backend is unreachable, the kind is invalid) is yielded last and ends
// the iteration. Retracted records are left out unless opts.IncludeRetracted
// is set.
func (ns *NameService) List(ctx context.Context, opts ListOptions) iter.Seq2[*Record, error] {
	return listFrom(ctx, ns.ListPage, opts)
}

// listFrom yields the records of the pages pageOf returns.
func listFrom(ctx context.Context, pageOf func(context.Context, ListOptions) (*Page, error), opts ListOptions) iter.Seq2[*Record, error] {
	return func(yield func(*Record, error) bool) {
		for {
			page, err := pageOf(ctx, opts)
			if err != nil {
				yield(nil, fmt.Errorf("list: %w", err))
				return
			}
			if !yieldPage(page, yield) || page.NextPageToken == "" {
				return
			}
			if page.NextPageToken == opts.PageToken {
				yield(nil, fmt.Errorf("list: %w: driver returned the same page token twice", model.ErrInternal))
				return
			}
			opts.PageToken = page.NextPageToken
		}
	}
}

// yieldPage yields the records and failures of page merged in ID order
// (a failure without an ID comes before the records after it in the page).
func yieldPage(page *driver.Page, yield func(*Record, error) bool) bool {
	recs, fails := page.Records, page.Failed
	for len(recs) > 0 || len(fails) > 0 {
		if len(fails) > 0 && (len(recs) == 0 || fails[0].ID.String() <= recs[0].ID.String()) {
			if !yield(nil, fmt.Errorf("list: %w", fails[0])) {
				return false
			}
			fails = fails[1:]
			continue
		}
		if !yield(recs[0], nil) {
			return false
		}
		recs = recs[1:]
	}
	return true
}
