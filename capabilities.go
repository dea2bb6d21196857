package nameservice

import (
	"context"
	"reflect"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/guard"
	"nameservice.dev/nameservice/internal/telemetry"
)

// The driver's optional capabilities, forwarded by the layer (layer.go)
// only when the driver has them: without one, a call returns an error
// wrapping ErrUnsupported that names what the driver cannot do, and the
// driver is not called. Every call is checked, traced and marked as the
// contract's are.

// ProbeResult is what Probe found.
type ProbeResult = driver.ProbeResult

// Provision creates the resources the driver needs that do not exist yet (a
// table, a lock table) and returns once they are usable; see
// driver.Provisioner. It is idempotent. It returns an error wrapping
// ErrUnsupported when the backend has nothing to create.
func (ns *NameService) Provision(ctx context.Context) error {
	p, ok := ns.d.(driver.Provisioner)
	if !ok {
		return unsupported("has no table to create")
	}
	return ns.traced(ctx, "provision", ID{}, "", telemetry.OutcomeApplied, p.Provision)
}

// Probe checks that the store enforces the conditions the driver relies on
// (an object store's preconditions); see driver.Prober. It reads and writes
// no record. It returns an error wrapping ErrUnsupported when the driver
// relies on none it can probe.
func (ns *NameService) Probe(ctx context.Context) (ProbeResult, error) {
	p, ok := ns.d.(driver.Prober)
	if !ok {
		return ProbeResult{}, unsupported("has no conditions to probe")
	}
	return call(ctx, ns.in, "probe", ID{}, "", telemetry.OutcomeOK, p.Probe)
}

// ChangedAt returns when each concern of record id last changed, for the
// concerns whose time the backend keeps (DynamoDB's updated_at_ms); see
// driver.ChangeTimer. It returns an error wrapping ErrNotFound for an
// unknown ID, and ErrUnsupported when the backend keeps no such times.
func (ns *NameService) ChangedAt(ctx context.Context, id ID) (map[Concern]time.Time, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	ct, ok := ns.d.(driver.ChangeTimer)
	if !ok {
		return nil, unsupported("keeps no change times")
	}
	return call(ctx, ns.in, "changed at", id, "", telemetry.OutcomeOK, func(ctx context.Context) (map[Concern]time.Time, error) {
		return ct.ChangedAt(ctx, id)
	})
}

// As sets *target to the driver when the driver has the type target points
// to (an interface it implements, or its own type), and reports whether it
// did: gocloud's escape hatch, for what one backend alone offers (the
// DynamoDB driver's table upgrades, the file store's directory). What is
// called through it is not checked, traced or marked: use NameService's
// methods for everything they offer.
func (ns *NameService) As(target any) bool {
	v := reflect.ValueOf(target)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return false
	}
	if e := v.Elem(); reflect.TypeOf(ns.d).AssignableTo(e.Type()) {
		e.Set(reflect.ValueOf(ns.d))
		return true
	}
	return false
}

// heads reads the head and index of id with the driver's own read of the
// two (driver.HeadsReader), or returns an error wrapping ErrUnsupported
// when it has none (the caller reads the record with Get).
func (ns *NameService) heads(ctx context.Context, id ID) (Heads, error) {
	if err := id.Validate(); err != nil {
		return Heads{}, err
	}
	h, ok := ns.d.(driver.HeadsReader)
	if !ok {
		return Heads{}, unsupported("has no read of the heads alone")
	}
	return call(ctx, ns.in, "heads", id, "", telemetry.OutcomeOK, func(ctx context.Context) (Heads, error) {
		return h.Heads(ctx, id)
	})
}

// brancher returns the driver's branch operations (driver.Brancher).
func (ns *NameService) brancher() (driver.Brancher, error) {
	b, ok := ns.d.(driver.Brancher)
	if !ok {
		return nil, unsupported("cannot create, drop or reset branches")
	}
	return b, nil
}

// createBranch creates rec, which must pass guard.CheckBranchRecord, as a
// branch of its source.
func (ns *NameService) createBranch(ctx context.Context, rec *Record) (*Record, error) {
	if err := guard.CheckBranchRecord(rec); err != nil {
		return nil, err
	}
	b, err := ns.brancher()
	if err != nil {
		return nil, err
	}
	return call(ctx, ns.in, "create branch", rec.ID, "", telemetry.OutcomeApplied, func(ctx context.Context) (*Record, error) {
		return b.CreateBranch(ctx, rec)
	})
}

// dropBranch removes branch id and counts it out of its source.
func (ns *NameService) dropBranch(ctx context.Context, id ID) error {
	if err := id.Validate(); err != nil {
		return err
	}
	b, err := ns.brancher()
	if err != nil {
		return err
	}
	return ns.traced(ctx, "drop branch", id, "", telemetry.OutcomeApplied, func(ctx context.Context) error {
		return b.DropBranch(ctx, id)
	})
}

// resetHead sets the head of id, and its index when index is not nil, as
// guard.CheckReset allows, returning the record as it was.
//
// A resend (driver.Write.Resend) is not run: a reset obeys no watermark, so
// running it again after an earlier attempt landed and others pushed since
// would move their heads back a second time, and the answer a landed reset
// owes, the record it replaced, is not in the store to be found. The
// resend is answered outcome unknown; the caller reads the record.
func (ns *NameService) resetHead(ctx context.Context, id ID, head Value, index *Value) (*Record, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	if err := guard.CheckReset(head, index); err != nil {
		return nil, err
	}
	if w, ok := driver.WriteFrom(ctx); ok && w.Resend {
		return nil, driver.OutcomeUnknown("a reset is not sent again: an earlier attempt may have landed; read the record to see whether it did")
	}
	b, err := ns.brancher()
	if err != nil {
		return nil, err
	}
	return call(ctx, ns.in, "reset head", id, "head", telemetry.OutcomeApplied, func(ctx context.Context) (*Record, error) {
		return b.ResetHead(ctx, id, head, index)
	})
}

// collect removes what purges left (driver.Collector), with opts as
// guard.CheckCollect allows.
func (ns *NameService) collect(ctx context.Context, opts CollectOptions) (CollectStats, error) {
	if err := guard.CheckCollect(opts); err != nil {
		return CollectStats{}, err
	}
	c, ok := ns.d.(driver.Collector)
	if !ok {
		return CollectStats{}, unsupported("cannot collect what purges left")
	}
	return call(ctx, ns.in, "collect", ID{}, "", telemetry.OutcomeOK, func(ctx context.Context) (CollectStats, error) {
		return c.Collect(ctx, opts)
	})
}

// commitIndexer returns the driver's commit index (driver.CommitIndexer).
func (ns *NameService) commitIndexer(id ID) (driver.CommitIndexer, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	ci, ok := ns.d.(driver.CommitIndexer)
	if !ok {
		return nil, unsupported("keeps no commit index (the DynamoDB and file drivers do)")
	}
	return ci, nil
}

// pendingCommitCIDs reads the entries of id's commit index above sinceT.
func (ns *NameService) pendingCommitCIDs(ctx context.Context, id ID, sinceT int64) ([]CommitEntry, bool, error) {
	ci, err := ns.commitIndexer(id)
	if err != nil {
		return nil, false, err
	}
	var entries []CommitEntry
	var usable bool
	err = ns.traced(ctx, "pending commit cids", id, "head", telemetry.OutcomeOK, func(ctx context.Context) (err error) {
		entries, usable, err = ci.PendingCommitCIDs(ctx, id, sinceT)
		return err
	})
	return entries, usable, err
}

// pruneCommitIndex removes the entries of id's commit index up to upToT.
func (ns *NameService) pruneCommitIndex(ctx context.Context, id ID, upToT int64) error {
	ci, err := ns.commitIndexer(id)
	if err != nil {
		return err
	}
	return ns.traced(ctx, "prune commit index", id, "head", telemetry.OutcomeApplied, func(ctx context.Context) error {
		return ci.PruneCommitIndex(ctx, id, upToT)
	})
}

// errNoFeed is feed's error for a driver without a change feed.
var errNoFeed = unsupported("has no change feed")

// feed opens the driver's change feed (driver.Watcher), untraced and
// unchecked (Watch checks opts), or returns errNoFeed when it has none;
// the feed may refuse with an error wrapping ErrUnsupported too (no feed
// on this store).
func (ns *NameService) feed(ctx context.Context, opts driver.WatchOptions) (<-chan Event, error) {
	w, ok := ns.d.(driver.Watcher)
	if !ok {
		return nil, errNoFeed
	}
	ch, err := w.Watch(ctx, opts)
	return ch, guard.FromBackend(err)
}

// versioner returns the driver's listing of versions (driver.Versioner),
// or nil when it has none.
func (ns *NameService) versioner() func(context.Context, driver.VersionsOptions) (*driver.VersionPage, error) {
	v, ok := ns.d.(driver.Versioner)
	if !ok {
		return nil
	}
	return func(ctx context.Context, opts driver.VersionsOptions) (*driver.VersionPage, error) {
		page, err := v.Versions(ctx, opts)
		return page, guard.FromBackend(err)
	}
}
