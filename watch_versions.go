package nameservice

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"nameservice.dev/nameservice/driver"
)

// The version listing of a poll asks for pages this large: a page costs no
// reads, and fewer pages mean fewer list calls begun anew.
const pollVersionsPage = 10_000

// pollReadParallel bounds the records a poll reads at once.
const pollReadParallel = 16

// snapshotVersions takes a snapshot with the driver's versions. The first
// lists the versions, then reads every record with List (versions first:
// a record that changes in between is read again at the next poll, never
// missed). A later one lists the versions, keeps the previous value of each
// record whose version is the one it was read at, and Gets the others: a
// record gone from the listing, or whose Get finds nothing, was purged; one
// that cannot be read keeps its previous value, as in list.
func (p *poller) snapshotVersions(ctx context.Context, prev snapshot) (snapshot, error) {
	vers, failed, err := p.versions(ctx)
	if err != nil {
		return nil, err
	}
	if prev == nil {
		s, err := p.list(ctx, nil)
		if err != nil {
			return nil, err
		}
		p.seen = map[driver.ID]string{}
		for _, v := range vers {
			if s[v.ID] != nil && v.Version != "" {
				p.seen[v.ID] = v.Version
			}
		}
		return s, nil
	}
	next, seen := snapshot{}, map[driver.ID]string{}
	var stale []driver.RecordVersion
	for _, v := range vers {
		if old := prev[v.ID]; old != nil && v.Version != "" && p.seen[v.ID] == v.Version {
			next[v.ID], seen[v.ID] = old, v.Version
		} else {
			stale = append(stale, v)
		}
	}
	for _, f := range failed {
		if old := prev[f.ID]; old != nil {
			next[f.ID] = old
		}
	}
	recs, errs := p.read(ctx, stale)
	for i, v := range stale {
		switch err := errs[i]; {
		case err == nil:
			next[v.ID] = recs[i]
			if v.Version != "" {
				seen[v.ID] = v.Version
			}
		case errors.Is(err, driver.ErrNotFound): // purged since the listing
		case driver.PerRecord(err):
			if old := prev[v.ID]; old != nil {
				next[v.ID] = old
			}
		default:
			return nil, err
		}
	}
	p.seen = seen
	return next, nil
}

// versions lists the versions of every watched record.
func (p *poller) versions(ctx context.Context) ([]driver.RecordVersion, []*driver.RecordError, error) {
	var vers []driver.RecordVersion
	var failed []*driver.RecordError
	opts := driver.VersionsOptions{Prefix: p.opts.Prefix, PageSize: pollVersionsPage}
	for {
		page, err := p.vs.Versions(ctx, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("versions: %w", err)
		}
		vers = append(vers, page.Versions...)
		failed = append(failed, page.Failed...)
		if page.NextPageToken == "" {
			return vers, failed, nil
		}
		if page.NextPageToken == opts.PageToken {
			return nil, nil, fmt.Errorf("versions: %w: driver returned the same page token twice", driver.ErrInternal)
		}
		opts.PageToken = page.NextPageToken
	}
}

// read Gets the records of vers, pollReadParallel at a time; errs[i] says
// why vers[i] could not be read.
func (p *poller) read(ctx context.Context, vers []driver.RecordVersion) ([]*driver.Record, []error) {
	recs := make([]*driver.Record, len(vers))
	errs := make([]error, len(vers))
	sem := make(chan struct{}, pollReadParallel)
	var wg sync.WaitGroup
	for i, v := range vers {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			recs[i], errs[i] = p.ns.d.Get(ctx, v.ID)
		}()
	}
	wg.Wait()
	return recs, errs
}
