package driver

import (
	"context"
	"time"
)

// Collector is an optional capability: a driver whose purges leave objects
// behind (a purge's mark at the record's defining file, sealed files of its
// other concerns, lock files) that a collector removes later. A driver whose
// purge removes everything it stored implements it too, finding nothing.
// Without it the NameService answers Collect with an error wrapping
// ErrUnsupported, and the conformance suite's Collect group checks just
// that.
type Collector interface {
	// Collect removes what purges left under opts.Prefix once it is older
	// than opts.OlderThan, and reports each object it removed or kept
	// through opts.Report. It must be safe with writers running in other
	// processes: it never removes a file of a live record, nor one of a
	// record created again after its purge, nor an object a writer may
	// replace while the removal is under way (so it rests on no
	// conditional delete). It returns the counts of what it removed and
	// kept; with opts.DryRun it removes nothing and counts what it would
	// have removed as removed.
	Collect(ctx context.Context, opts CollectOptions) (CollectStats, error)
}

// CollectOptions selects what Collect removes.
type CollectOptions struct {
	// Prefix restricts collection to IDs starting with it, as
	// ListOptions.Prefix does.
	Prefix string
	// OlderThan keeps what a purge left less than this long ago.
	OlderThan time.Duration
	// DryRun reports what would be removed and removes nothing.
	DryRun bool
	// Now is the clock ages are measured with; time.Now when nil.
	Now func() time.Time
	// Report, when not nil, is called once for every object Collect
	// removed (or would remove) or kept, from one goroutine at a time.
	Report func(Collected)
}

// Collected is one object Collect looked at.
type Collected struct {
	// Object names the object: a key, or a path for the filesystem.
	Object string
	// ID is the record the object belonged to, "" when it cannot tell.
	ID string
	// Removed is set when the object was removed (or, in a dry run,
	// would be).
	Removed bool
	// Reason says why, briefly: "purged 3h0m0s ago", "younger than 24h",
	// "debris of a live record".
	Reason string
}

// CollectStats counts what Collect removed and kept.
type CollectStats struct {
	Removed, Kept int
}
