package nameservice

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/guard"
	"nameservice.dev/nameservice/internal/telemetry"
	"nameservice.dev/nameservice/model"
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

// Heads returns the head and index of ledger id, read strongly
// consistently, retracted or not: with the driver's own read of the two
// (driver.HeadsReader: one request on DynamoDB) when it has one, else with
// Lookup's read. It returns an error wrapping ErrNotFound for an unknown ID
// and ErrWrongKind for a graph source.
func (ns *NameService) Heads(ctx context.Context, id string) (Heads, error) {
	return byID("get heads", id, func(pid ID) (h Heads, err error) {
		hr, ok := ns.d.(driver.HeadsReader)
		if ok {
			h, err = call(ctx, ns.in, "heads", pid, "", telemetry.OutcomeOK, func(ctx context.Context) (Heads, error) {
				return hr.Heads(ctx, pid)
			})
		}
		if !ok || errors.Is(err, model.ErrUnsupported) {
			var rec *Record
			if rec, err = ns.Get(ctx, pid); err == nil {
				h, err = model.HeadsOf(rec)
			}
		}
		return h, err
	})
}

// capability returns the driver as capability C, or an error wrapping
// ErrUnsupported saying what the driver cannot do.
func capability[C any](ns *NameService, what string) (C, error) {
	c, ok := ns.d.(C)
	if !ok {
		return c, unsupported(what)
	}
	return c, nil
}

// noBranches is what a driver without driver.Brancher cannot do.
const noBranches = "cannot create, drop or reset branches"

// createBranch creates rec, which must pass guard.CheckBranchRecord, as a
// branch of its source.
func (ns *NameService) createBranch(ctx context.Context, rec *Record) (*Record, error) {
	if err := guard.CheckBranchRecord(rec); err != nil {
		return nil, err
	}
	b, err := capability[driver.Brancher](ns, noBranches)
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
	b, err := capability[driver.Brancher](ns, noBranches)
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
	b, err := capability[driver.Brancher](ns, noBranches)
	if err != nil {
		return nil, err
	}
	return call(ctx, ns.in, "reset head", id, "head", telemetry.OutcomeApplied, func(ctx context.Context) (*Record, error) {
		return b.ResetHead(ctx, id, head, index)
	})
}

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
func (ns *NameService) Collect(ctx context.Context, opts CollectOptions) (st CollectStats, err error) {
	c, ok := ns.d.(driver.Collector)
	switch err = guard.CheckCollect(opts); {
	case err != nil:
	case !ok:
		err = unsupported("cannot collect what purges left")
	default:
		st, err = call(ctx, ns.in, "collect", ID{}, "", telemetry.OutcomeOK, func(ctx context.Context) (CollectStats, error) {
			return c.Collect(ctx, opts)
		})
	}
	if err != nil {
		return st, fmt.Errorf("collect: %w", err)
	}
	return st, nil
}

// CommitEntry is one entry of Fluree's commit index: a commit's t and
// content ID.
type CommitEntry = driver.CommitEntry

// noCommitIndex is what a driver without a commit index cannot do.
const noCommitIndex = "keeps no commit index (the DynamoDB and file drivers do)"

// PendingCommitCIDs returns the entries of ledger id's commit index with t
// above sinceT, ascending by t: Fluree's pending_commit_cids, which its
// indexer calls to find the commits since its last index. ok is false when
// there is no usable index for id (the caller walks the commit chain
// instead). The index is Fluree v4's, kept beside the record by the
// DynamoDB and file drivers, which add an entry for each commit head
// published as a content ID, as Fluree does (see driver.CommitIndexer); it
// is an accelerator, not the truth. It returns an error wrapping
// ErrUnsupported for another driver, ErrInvalidID for a malformed ID.
func (ns *NameService) PendingCommitCIDs(ctx context.Context, id string, sinceT int64) ([]CommitEntry, bool, error) {
	const op = "pending commit cids"
	var entries []CommitEntry
	var usable bool
	err := onID(op, id, func(pid ID) error {
		ci, err := capability[driver.CommitIndexer](ns, noCommitIndex)
		if err != nil {
			return err
		}
		return ns.traced(ctx, op, pid, "head", telemetry.OutcomeOK, func(ctx context.Context) (err error) {
			entries, usable, err = ci.PendingCommitCIDs(ctx, pid, sinceT)
			return err
		})
	})
	return entries, usable, err
}

// PruneCommitIndex removes the entries of ledger id's commit index with t
// at or below upToT: Fluree's prune_commit_index, which its indexer calls
// once an index covers them. Errors are PendingCommitCIDs'.
func (ns *NameService) PruneCommitIndex(ctx context.Context, id string, upToT int64) error {
	const op = "prune commit index"
	return onID(op, id, func(pid ID) error {
		ci, err := capability[driver.CommitIndexer](ns, noCommitIndex)
		if err != nil {
			return err
		}
		return ns.traced(ctx, op, pid, "head", telemetry.OutcomeApplied, func(ctx context.Context) error {
			return ci.PruneCommitIndex(ctx, pid, upToT)
		})
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
