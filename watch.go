package nameservice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/guard"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

// Event is one change seen by Watch: the ID, the concern, its watermark
// before and its value after. Deleted reports a purge. A non-nil Err reports
// a failure of the feed, and is the last event.
type Event = driver.Event

// WatchOptions selects what Watch reports.
type WatchOptions struct {
	ID       string        // one record; "" for every record under Prefix
	Prefix   string        // IDs (name:branch) starting with Prefix
	Interval time.Duration // polling interval for drivers without a change feed (default 1s)
	// Concerns, when not empty, are the only concerns whose changes are
	// reported (a query client that follows heads alone gets no event for
	// an index, status or config change); a purge is reported whatever
	// they are.
	Concerns []Concern
	// Kind, when set, is the only kind of record reported on.
	Kind Kind
}

// DefaultWatchInterval is the polling interval of Watch when none is given.
const DefaultWatchInterval = time.Second

// Watch reports changes to the selected records from the moment it
// returns until ctx is done, when it closes the channel. A write that changed
// nothing produces no event, and events for one ID and concern come in
// watermark order.
//
// With a driver that has a change feed (driver.Watcher) every change is
// reported once. Otherwise (or when the driver's Watch returns an error
// wrapping model.ErrUnsupported: no feed for this store) Watch polls: each
// poll reports, per concern that moved, the latest value, so changes made
// between two polls arrive as one event whose Old and New watermarks show
// the jump. With a driver that lists versions (driver.Versioner) a poll of
// a prefix costs the listing plus reads of the records that changed;
// otherwise each poll reads every record.
func (ns *NameService) Watch(ctx context.Context, opts WatchOptions) (<-chan Event, error) {
	wo := driver.WatchOptions{Prefix: opts.Prefix, Concerns: opts.Concerns, Kind: opts.Kind}
	if opts.ID != "" {
		id, err := parse("watch", opts.ID)
		if err != nil {
			return nil, err
		}
		wo.ID = id
	}
	if err := guard.CheckWatch(wo); err != nil {
		return nil, &model.Error{Code: model.InvalidArgument, Op: "watch", Err: err}
	}
	p := &poller{ns: ns, opts: wo, interval: driverutil.Positive(opts.Interval, DefaultWatchInterval)}
	if wo.ID.IsZero() {
		p.versions = ns.versioner()
	}
	feed, err := ns.feed(ctx, wo)
	if !errors.Is(err, model.ErrUnsupported) {
		return feed, err
	}
	if err != errNoFeed {
		slog.Info("watch: no change feed here; polling instead", "reason", err, "interval", p.interval)
	}
	snap, err := p.snapshot(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	ch := make(chan Event, 64)
	go p.run(ctx, snap, ch)
	return ch, nil
}

// poller implements Watch by comparing watermarks between snapshots.
type poller struct {
	ns       *NameService
	opts     driver.WatchOptions
	interval time.Duration
	// versions lists versions, so that a poll reads only the records
	// whose version moved; nil: each poll reads every record.
	versions func(context.Context, driver.VersionsOptions) (*driver.VersionPage, error)
	// seen is the version at which each record of the last snapshot was
	// read (absent: unknown, to be read again).
	seen map[model.ID]string
}

type snapshot map[model.ID]*model.Record

// snapshot reads the watched records. A record that cannot be read keeps
// its value in prev (a bad record neither stops the watch nor reads as
// purged); prev is nil for the first snapshot.
func (p *poller) snapshot(ctx context.Context, prev snapshot) (snapshot, error) {
	if p.versions != nil {
		return p.changed(ctx, prev)
	}
	s := snapshot{}
	if !p.opts.ID.IsZero() {
		// A watch's polls are not traced: one span or metric point per
		// poll would drown the calls an operator looks for.
		r, err := p.ns.get(ctx, p.opts.ID, nil)
		if errors.Is(err, model.ErrNotFound) {
			return s, nil
		}
		if err != nil {
			return nil, err
		}
		s[r.ID] = r
		return s, nil
	}
	return p.list(ctx, prev)
}

// list reads every watched record with List.
func (p *poller) list(ctx context.Context, prev snapshot) (snapshot, error) {
	s := snapshot{}
	untraced := func(ctx context.Context, opts ListOptions) (*Page, error) { return p.ns.listPage(ctx, opts, nil) }
	for r, err := range listFrom(ctx, untraced, ListOptions{Prefix: p.opts.Prefix, Kind: p.opts.Kind, IncludeRetracted: true}) {
		var re *RecordError
		switch {
		case errors.As(err, &re):
			if old := prev[re.ID]; old != nil {
				s[re.ID] = old
			}
		case err != nil:
			return nil, err
		default:
			s[r.ID] = r
		}
	}
	return s, nil
}

// changed reads the watched records with the driver's Versions: a record
// still at the version it was read at keeps its value in prev, and the
// driver reads the others. A record that cannot be read keeps its value in
// prev, as in list, and is read again at the next poll.
func (p *poller) changed(ctx context.Context, prev snapshot) (snapshot, error) {
	s, seen := snapshot{}, map[model.ID]string{}
	opts := driver.VersionsOptions{Prefix: p.opts.Prefix, PageSize: pollVersionsPage, Known: p.seen}
	for {
		page, err := p.versions(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("versions: %w", err)
		}
		for _, v := range page.Versions {
			r := v.Record
			if r == nil {
				if r = prev[v.ID]; r == nil {
					return nil, fmt.Errorf("versions: %w: %s reported unchanged, but never read", model.ErrInternal, v.ID)
				}
			}
			s[v.ID] = r
			if v.Version != "" {
				seen[v.ID] = v.Version
			}
		}
		for _, f := range page.Failed {
			if old := prev[f.ID]; old != nil {
				s[f.ID] = old
			}
		}
		if page.NextPageToken == "" {
			break
		}
		if page.NextPageToken == opts.PageToken {
			return nil, fmt.Errorf("versions: %w: driver returned the same page token twice", model.ErrInternal)
		}
		opts.PageToken = page.NextPageToken
	}
	p.seen = seen
	return s, nil
}

// pollVersionsPage is the page size a poll asks Versions for: large, since
// each page begins a new listing of the store.
const pollVersionsPage = 10_000

func (p *poller) run(ctx context.Context, prev snapshot, ch chan<- Event) {
	defer close(ch)
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		next, err := p.snapshot(ctx, prev)
		if err != nil {
			if ctx.Err() == nil {
				driverutil.Send(ctx, ch, Event{Err: err})
			}
			return
		}
		// A record purged and re-created between polls shows as its
		// concerns' changes.
		for _, ev := range driverutil.Changes(p.opts, prev, next) {
			if !driverutil.Send(ctx, ch, ev) {
				return
			}
		}
		prev = next
	}
}
