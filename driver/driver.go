package driver

import (
	"context"
	"slices"
	"strings"
	"time"

	"nameservice.dev/nameservice/model"
)

// Driver is what a backend implements. Every method is safe for concurrent
// use, honours ctx (returning an error for which Code is Canceled, or that
// wraps ctx.Err(), once ctx is done), and never returns a partial write: a
// write that returns an error other than Canceled or one wrapping
// ErrOutcomeUnknown changed nothing. IDs and values passed in have been
// validated by the caller.
//
// # Writes whose answer is lost
//
// Create, Update, Retract and Delete each apply at most once per Write (see
// WithWrite and WriteOf: the caller's, or one the driver makes for the
// call), on the record that existed when the write was first sent. When an
// answer is lost (a timeout, a reset, a 5xx after the request may have been
// applied), or the Write is a resend, the driver establishes what happened
// from what the backend holds before it answers: the write's own ID found
// means applied; proof that it never landed lets the write be sent again,
// conditioned so that it cannot land on a record created since; anything
// else, a purge or re-create in between included, is an error wrapping
// ErrOutcomeUnknown. It never answers a conflict, ErrNotFound or
// ErrAlreadyExists for a write that may have landed, and never applies a
// write twice.
type Driver interface {
	// Create stores rec, every concern at once: a reader sees all of it or
	// none of it. It returns an error wrapping ErrAlreadyExists when a record
	// with rec.ID exists, retracted or not, and then writes nothing.
	Create(ctx context.Context, rec *model.Record) error

	// Get returns the record with the given ID, read strongly consistently,
	// retracted or not. It returns an error wrapping ErrNotFound when there is
	// none, and one wrapping ErrInternal, naming the object (file, key, item)
	// when what the backend holds cannot be decoded.
	Get(ctx context.Context, id model.ID) (*model.Record, error)

	// Update sets concern c of record id to next if cond holds for the
	// concern's current value (see Condition.Holds), atomically with respect
	// to every other writer of that concern. It returns Outcome{Applied: true,
	// Current: next} when it wrote, and Outcome{Applied: false, Current: the
	// value that failed the condition} when it did not; a failed condition is
	// not an error. It returns an error wrapping ErrNotFound when the record
	// does not exist or has no such concern (a head on a graph source).
	//
	// An ambiguous answer is resolved as the Driver doc says: Update never
	// reports Applied false for a write that may have landed.
	Update(ctx context.Context, id model.ID, c model.Concern, cond Condition, next model.Value) (Outcome, error)

	// Retract marks record id retracted and, in the same atomic step, sets
	// its status to {state: retracted, retracted_at: at (Unix seconds)} at
	// status_v + 1. Retracting a retracted record changes nothing and
	// succeeds. It returns an error wrapping ErrNotFound when there is no
	// record, and then writes nothing.
	Retract(ctx context.Context, id model.ID, at time.Time) error

	// Delete removes every trace of record id, so that Create may reuse the
	// ID. It returns an error wrapping ErrNotFound when there is no record.
	Delete(ctx context.Context, id model.ID) error

	// List returns one page of records matching opts, in ascending order of
	// ID string. A page holds at most opts.PageSize entries, records and
	// failures together, and may hold fewer while more remain; NextPageToken
	// is empty only on the last page. A record that cannot be read is put in
	// Page.Failed as a *RecordError naming the object (file, key, item), and
	// the listing goes on past it: no record is skipped silently, and one bad
	// record never hides the others. List itself fails only when the page as
	// a whole cannot be produced (the backend is unreachable, the token is
	// malformed). After writes have settled, the pages list exactly the
	// matching records.
	List(ctx context.Context, opts ListOptions) (*Page, error)

	// Close releases the driver's resources. Using the driver afterwards is
	// an error.
	Close() error
}

// CondKind says how Update compares the current value.
type CondKind int

// The conditions of Update.
const (
	// Above holds when next.V > current.V: a monotonic publish.
	Above CondKind = iota
	// AtLeast holds when next.V >= current.V: an admin index publish.
	AtLeast
	// Equals holds when the current value equals Condition.Expected,
	// watermark and whole payload: a compare-and-set.
	Equals
)

// Condition is the condition under which Update writes.
type Condition struct {
	Kind     CondKind
	Expected model.Value // for Equals
}

// IfAbove returns the condition next.V > current.V.
func IfAbove() Condition { return Condition{Kind: Above} }

// IfAtLeast returns the condition next.V >= current.V.
func IfAtLeast() Condition { return Condition{Kind: AtLeast} }

// IfEquals returns the condition current == expected.
func IfEquals(expected model.Value) Condition { return Condition{Kind: Equals, Expected: expected} }

// Holds reports whether the condition lets next replace current. It is the
// one definition of the conditions, for drivers that read, compare and write
// under a lock of their own.
func (c Condition) Holds(current, next model.Value) bool {
	switch c.Kind {
	case Above:
		return next.V > current.V
	case AtLeast:
		return next.V >= current.V
	case Equals:
		return current.Equal(c.Expected)
	}
	return false
}

// Outcome is the result of Update.
type Outcome struct {
	// Applied reports whether Update wrote next.
	Applied bool
	// Current is the concern's value after the call: next when applied,
	// otherwise the value that failed the condition.
	Current model.Value
}

// ListOptions selects the records List returns.
type ListOptions struct {
	Kind             model.Kind // "" for every kind
	Prefix           string     // only IDs (name:branch) that start with Prefix
	IncludeRetracted bool       // retracted records are left out unless set
	PageSize         int        // at most this many records per page; 0: the driver's default
	PageToken        string     // "" for the first page, else a previous Page's NextPageToken
	// State, when set, selects the records whose status state (the
	// status payload's "state") equals it; "" selects any. A driver
	// that keeps an index of states may miss a record whose state
	// changed a moment ago, but never lists one whose state, as read
	// with the record, differs.
	State string
	// SourceType, when set, selects the graph sources of that type
	// (ledgers have none); "" selects any.
	SourceType string
}

// Matches reports whether r passes the kind, retracted, state and source
// type filters of opts (not the prefix or the page token): the one
// definition of them, which every driver applies to what it read.
func (opts ListOptions) Matches(r *model.Record) bool {
	switch {
	case opts.Kind != "" && r.Kind != opts.Kind,
		r.Retracted && !opts.IncludeRetracted,
		opts.SourceType != "" && (r.Kind != model.GraphSource || r.SourceType != opts.SourceType):
		return false
	case opts.State != "":
		return r.Status != nil && r.Status.State() == opts.State
	}
	return true
}

// Page is one page of List.
type Page struct {
	Records []*model.Record
	// Failed lists the records in the page's range that could not be read,
	// in ascending order. A failed record whose kind or retracted flag
	// cannot be known is reported whatever the filter of ListOptions.
	Failed        []*model.RecordError
	NextPageToken string
}

// Watcher is an optional capability: a driver with a native change feed.
type Watcher interface {
	// Watch sends an Event for every change to a record matching opts, from
	// the moment Watch returns, until ctx is done; then it closes the
	// channel. Events for one ID and concern arrive in watermark order. A
	// write that changed nothing produces no event. An error wrapping
	// ErrUnsupported says this store has no feed: the caller polls instead.
	Watch(ctx context.Context, opts WatchOptions) (<-chan Event, error)
}

// WatchOptions selects the records and changes Watch reports on.
type WatchOptions struct {
	ID     model.ID // one record; zero for all matching Prefix
	Prefix string   // IDs starting with Prefix
	// Concerns, when not empty, are the only concerns whose changes are
	// reported: a subscriber to heads alone gets no event for an index,
	// status or config change. A purge (Deleted) is reported whatever
	// they are.
	Concerns []model.Concern
	// Kind, when set, is the only kind of record reported on, purges
	// included.
	Kind model.Kind
}

// Reports reports whether ev, an event of a record of kind k, passes the
// concern and kind filters of opts: the one definition of them, which
// every Watcher applies before it sends an event (a failure of the feed,
// Err, always passes).
func (opts WatchOptions) Reports(k model.Kind, ev Event) bool {
	switch {
	case ev.Err != nil:
		return true
	case opts.Kind != "" && k != opts.Kind:
		return false
	case ev.Deleted:
		return true
	}
	return opts.Watches(ev.Concern)
}

// Watches reports whether opts selects changes to concern c.
func (opts WatchOptions) Watches(c model.Concern) bool {
	return len(opts.Concerns) == 0 || slices.Contains(opts.Concerns, c)
}

// Event is one change seen by Watch.
type Event struct {
	ID      model.ID
	Concern model.Concern
	Old     int64       // the watermark before the change
	New     model.Value // the value after it
	Deleted bool        // the record was purged (Concern and New are then zero)
	Err     error       // a non-nil Err reports a failure of the feed; the channel closes after it
}

// ExactWatcher marks a Watcher that reports every change as its own event:
// consecutive events for one ID and concern step from one applied write to
// the next. A Watcher without it may coalesce changes that follow each other
// quickly into one event whose Old and New span them.
type ExactWatcher interface {
	Watcher
	ExactWatch()
}

// Versioner is an optional capability: a driver that can tell which records
// changed from a listing alone, so that a polling watch reads only those.
type Versioner interface {
	// Versions lists the records matching opts as List does (every kind,
	// retracted or not; paged alike, with the same failures in Failed),
	// giving each its version: an opaque string, computed from the listing
	// without reading the record (a file whose key does not give its ID may
	// be read once to learn it), that changes whenever anything stored for
	// the record changes, purge and re-create included. "" means unknown.
	// Each entry whose version is not opts.Known[ID], or is "", also
	// carries the record, read as List reads it; an entry whose version is
	// opts.Known[ID] carries none: the record is what the caller read at
	// that version. A record gone before it was read is left out.
	Versions(ctx context.Context, opts VersionsOptions) (*VersionPage, error)
}

// VersionsOptions selects the records Versions lists.
type VersionsOptions struct {
	Prefix    string // only IDs (name:branch) that start with Prefix
	PageSize  int    // at most this many entries per page; 0: the driver's default
	PageToken string // "" for the first page, else a previous page's NextPageToken
	// Known holds the versions at which the caller read records: those
	// still at them are not read again. Nil or empty: read every record.
	Known map[model.ID]string
}

// RecordVersion is one entry of a VersionPage.
type RecordVersion struct {
	ID      model.ID
	Version string        // "" when unknown
	Record  *model.Record // nil when Version is the one in VersionsOptions.Known
}

// VersionPage is one page of Versions.
type VersionPage struct {
	Versions      []RecordVersion
	Failed        []*model.RecordError
	NextPageToken string
}

// ChangeTimer is a driver whose backend keeps when each concern of a
// record last changed (DynamoDB's updated_at_ms). The console shows it.
type ChangeTimer interface {
	// ChangedAt returns when each concern of record id last changed, for
	// the concerns whose time the backend holds. It returns an error
	// wrapping ErrNotFound when the record does not exist.
	ChangedAt(ctx context.Context, id model.ID) (map[model.Concern]time.Time, error)
}

// HeadsReader is an optional capability: a driver that reads a ledger's
// head and index in one request cheaper than Get (on DynamoDB one Query of
// the two items, projected to the pointers). The portable API falls back
// to Get for a driver without it.
type HeadsReader interface {
	// Heads returns the head and index of ledger id, read strongly
	// consistently, retracted or not, as Get would return them. It returns
	// an error wrapping ErrNotFound when there is no record, ErrWrongKind
	// for a graph source (it has no head), and ErrUnsupported when this
	// store cannot read them apart from the record (the caller then uses
	// Get).
	Heads(ctx context.Context, id model.ID) (model.Heads, error)
}

// Provisioner is an optional capability: a driver whose backend needs
// resources (a table, a lock table) created before records can be kept.
// Tools reach it through NameService.Provision (`ns table create`,
// `ns-migrate --create-table`), so they need no backend-specific code.
type Provisioner interface {
	// Provision creates the resources the driver needs that do not exist
	// yet, and returns only once they are usable (a new table ACTIVE, with
	// its indexes and stream). It is idempotent: resources that exist are
	// left as they are, and Provision returns nil when nothing needs
	// creating. It returns an error wrapping ErrInvalidArgument when an
	// existing resource has the wrong shape (saying what differs),
	// ErrPermissionDenied when the credentials may not create or describe
	// it (naming the action), ErrUnavailable when it did not become usable
	// before ctx ended, and never deletes or changes existing data.
	Provision(ctx context.Context) error
}

// CommitIndexer is an optional capability: a driver that keeps Fluree v4's
// commit index beside each ledger's record (the DynamoDB driver's
// "commit#<t>" rows, the file driver's {branch}.commits.jsonl), one entry
// per commit head published as a content ID, written as Fluree writes it
// after the head's update applied, best effort. Fluree's indexer reads it
// to find the commits since its last index without walking the commit
// chain, and checks what it reads: the index is never the truth, an entry
// may be missing (a write that failed) or left over (one whose head a
// later reset moved away).
type CommitIndexer interface {
	// PendingCommitCIDs returns the entries of ledger id with t above
	// sinceT, ascending by t: Fluree's pending_commit_cids. ok is false
	// when the driver has no usable index of id (none, or none above
	// sinceT, or an entry it cannot read, as Fluree's backend of the
	// same store decides): the caller must walk the commit chain instead.
	PendingCommitCIDs(ctx context.Context, id model.ID, sinceT int64) (entries []CommitEntry, ok bool, err error)

	// PruneCommitIndex removes the entries of ledger id with t at or below
	// upToT: Fluree's prune_commit_index, which its indexer calls once an
	// index covers them.
	PruneCommitIndex(ctx context.Context, id model.ID, upToT int64) error
}

// CommitEntry is one entry of a commit index: a commit's t and content ID.
type CommitEntry struct {
	T   int64  `json:"t"`
	CID string `json:"cid"`
}

// Brancher is an optional capability: a driver that creates and drops
// branches together with the branch count of their source (Meta.Branches of
// the record ID{Name, SourceBranch}) in one atomic step, and resets heads.
// IDs and records passed in have been validated by the caller, as for
// Driver. Every method is safe for concurrent use and honours ctx.
//
// The count is exact: after any number of CreateBranch and DropBranch calls
// on one source, concurrent or not, from any number of clients, have
// returned, the source's Branches equals the creates that succeeded less the
// drops that succeeded, and it is never negative. A driver that cannot make
// the two writes one (files, object stores, document stores) records the
// step in the source before the first write and settles one left
// half-done by a writer that died on the next branch operation on that
// source, so that the count is exact again once it has run.
//
// Without it the NameService answers branch operations with an error
// wrapping ErrUnsupported, and the conformance suite's Branches group checks
// just that; every driver of this module has it (a store without
// multi-record transactions builds it on internal/objstore).
type Brancher interface {
	// CreateBranch creates rec and adds one to the Branches of its source,
	// the record rec.ID.Name:rec.SourceBranch, in one atomic step, and
	// returns the record created: rec, unless the store builds it itself
	// (the http:// driver's server does, from rec's source and branch
	// point). rec is a ledger with SourceBranch set and Branches 0. It
	// returns an error wrapping ErrAlreadyExists when rec.ID is taken,
	// retracted or not; ErrNotFound when the source does not exist or is
	// retracted; and ErrWrongKind when the source is a graph source; and
	// then writes nothing.
	CreateBranch(ctx context.Context, rec *model.Record) (*model.Record, error)

	// DropBranch removes ledger id, as Delete does, and subtracts one from
	// its source's Branches (when it has a source that exists and a count
	// above 0), in one atomic step. It returns an error wrapping
	// ErrHasBranches, naming the count, while id's own Branches is above 0
	// (or a branch of it is being created or dropped); ErrNotFound when
	// there is no record; ErrWrongKind for a graph source; and then writes
	// nothing.
	DropBranch(ctx context.Context, id model.ID) error

	// ResetHead sets the head of ledger id to head and, when index is not
	// nil, its index to *index, whatever the current watermarks: the
	// monotonic rule of Update does not apply. It returns the record as it
	// was just before (the values it replaced). A driver that cannot write
	// the two at once writes the index first. It returns an error wrapping
	// ErrNotFound when there is no record and ErrWrongKind for a graph
	// source. It is never called with a resend (Write.Resend): the
	// NameService answers those outcome unknown.
	ResetHead(ctx context.Context, id model.ID, head model.Value, index *model.Value) (*model.Record, error)
}

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

// Prober is an optional capability: a driver whose protocol relies on the
// backend enforcing conditions on its requests (an object store's
// preconditions), which it can check against the live store.
type Prober interface {
	// Probe sends requests whose conditions fail to an object of its own
	// beside the records, reports which the store refused, and removes the
	// object. It reads and writes no record.
	Probe(ctx context.Context) (ProbeResult, error)
}

// ProbeResult is what a probe found.
type ProbeResult struct {
	Checks []ProbeCheck
	// Guarded is set when the driver keeps writers apart by a protocol of
	// its own (a lock table), so that conditions the store ignores are
	// not relied on.
	Guarded bool
}

// ProbeCheck is one condition a probe checked.
type ProbeCheck struct {
	// Request names the request and its condition, e.g. "PutObject
	// If-Match with a wrong ETag".
	Request string
	// Enforced is set when the store refused the request.
	Enforced bool
	// Required is set when the driver's protocol relies on it; a check
	// that is not required is reported for the operator only.
	Required bool
}

// Safe reports whether the store enforces every condition the driver
// relies on, or the driver does not rely on the store's.
func (r ProbeResult) Safe() bool {
	missing := func(c ProbeCheck) bool { return c.Required && !c.Enforced }
	return r.Guarded || !slices.ContainsFunc(r.Checks, missing)
}

// Missing names the required checks the store did not enforce, joined by
// "; ".
func (r ProbeResult) Missing() string {
	var miss []string
	for _, c := range r.Checks {
		if c.Required && !c.Enforced {
			miss = append(miss, c.Request)
		}
	}
	return strings.Join(miss, "; ")
}

// String lists every check: "PutObject If-Match with a wrong ETag:
// enforced; DeleteObject If-Match with a wrong ETag: ignored (not relied
// on)".
func (r ProbeResult) String() string {
	parts := make([]string, len(r.Checks))
	for i, c := range r.Checks {
		what := "enforced"
		if !c.Enforced {
			what = "ignored"
		}
		if !c.Required {
			what += " (not relied on)"
		}
		parts[i] = c.Request + ": " + what
	}
	return strings.Join(parts, "; ")
}

// Enforced reports whether the check of request was made and enforced.
func (r ProbeResult) Enforced(request string) bool {
	i := slices.IndexFunc(r.Checks, func(c ProbeCheck) bool { return c.Request == request })
	return i >= 0 && r.Checks[i].Enforced
}
