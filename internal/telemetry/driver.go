package telemetry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"nameservice.dev/nameservice/driver"
)

// instrumented is a driver.Driver that reports every call.
type instrumented struct {
	d  driver.Driver
	in *instruments
}

func (w *instrumented) Create(ctx context.Context, rec *driver.Record) error {
	ctx, c := w.in.start(ctx, "create", rec.ID, "")
	err := w.d.Create(ctx, rec)
	c.end(ctx, errOutcome(err, OutcomeApplied), err)
	return err
}

func (w *instrumented) Get(ctx context.Context, id driver.ID) (*driver.Record, error) {
	ctx, c := w.in.start(ctx, "get", id, "")
	rec, err := w.d.Get(ctx, id)
	c.end(ctx, errOutcome(err, OutcomeOK), err)
	return rec, err
}

func (w *instrumented) Update(ctx context.Context, id driver.ID, cn driver.Concern, cond driver.Condition, next driver.Value) (driver.Outcome, error) {
	ctx, c := w.in.start(ctx, "update", id, cn.String())
	out, err := w.d.Update(ctx, id, cn, cond, next)
	outcome := errOutcome(err, OutcomeApplied)
	if err == nil && !out.Applied {
		outcome = OutcomeStale
		if cond.Kind == driver.Equals {
			outcome = OutcomeConflict
		}
	}
	c.end(ctx, outcome, err)
	return out, err
}

func (w *instrumented) Retract(ctx context.Context, id driver.ID, at time.Time) error {
	ctx, c := w.in.start(ctx, "retract", id, "")
	err := w.d.Retract(ctx, id, at)
	c.end(ctx, errOutcome(err, OutcomeApplied), err)
	return err
}

func (w *instrumented) Delete(ctx context.Context, id driver.ID) error {
	ctx, c := w.in.start(ctx, "delete", id, "")
	err := w.d.Delete(ctx, id)
	c.end(ctx, errOutcome(err, OutcomeApplied), err)
	return err
}

func (w *instrumented) List(ctx context.Context, opts driver.ListOptions) (*driver.Page, error) {
	ctx, c := w.in.start(ctx, "list", driver.ID{}, "")
	p, err := w.d.List(ctx, opts)
	c.end(ctx, errOutcome(err, OutcomeOK), err)
	return p, err
}

func (w *instrumented) Close() error { return w.d.Close() }

var (
	_ driver.Brancher  = (*instrumented)(nil)
	_ driver.Collector = (*instrumented)(nil)
)

func (w *instrumented) Collect(ctx context.Context, opts driver.CollectOptions) (driver.CollectStats, error) {
	c, ok := w.d.(driver.Collector)
	if !ok {
		return driver.CollectStats{}, fmt.Errorf("%w: this backend's driver cannot collect what purges left", driver.ErrUnsupported)
	}
	ctx, call := w.in.start(ctx, "collect", driver.ID{}, "")
	st, err := c.Collect(ctx, opts)
	call.end(ctx, errOutcome(err, OutcomeOK), err)
	return st, err
}

// brancher returns the branch operations of the driver underneath.
func (w *instrumented) brancher() (driver.Brancher, error) {
	b, ok := w.d.(driver.Brancher)
	if !ok {
		return nil, fmt.Errorf("%w: this backend's driver cannot create, drop or reset branches", driver.ErrUnsupported)
	}
	return b, nil
}

func (w *instrumented) CreateBranch(ctx context.Context, rec *driver.Record) (*driver.Record, error) {
	b, err := w.brancher()
	if err != nil {
		return nil, err
	}
	ctx, c := w.in.start(ctx, "create branch", rec.ID, "")
	out, err := b.CreateBranch(ctx, rec)
	c.end(ctx, errOutcome(err, OutcomeApplied), err)
	return out, err
}

func (w *instrumented) DropBranch(ctx context.Context, id driver.ID) error {
	b, err := w.brancher()
	if err != nil {
		return err
	}
	ctx, c := w.in.start(ctx, "drop branch", id, "")
	err = b.DropBranch(ctx, id)
	c.end(ctx, errOutcome(err, OutcomeApplied), err)
	return err
}

func (w *instrumented) ResetHead(ctx context.Context, id driver.ID, head driver.Value, index *driver.Value) (*driver.Record, error) {
	b, err := w.brancher()
	if err != nil {
		return nil, err
	}
	ctx, c := w.in.start(ctx, "reset head", id, "head")
	prev, err := b.ResetHead(ctx, id, head, index)
	c.end(ctx, errOutcome(err, OutcomeApplied), err)
	return prev, err
}

var _ driver.CommitIndexer = (*instrumented)(nil)

// commitIndexer returns the commit index of the driver underneath.
func (w *instrumented) commitIndexer() (driver.CommitIndexer, error) {
	ci, ok := w.d.(driver.CommitIndexer)
	if !ok {
		return nil, fmt.Errorf("%w: this backend's driver keeps no commit index", driver.ErrUnsupported)
	}
	return ci, nil
}

func (w *instrumented) PendingCommitCIDs(ctx context.Context, id driver.ID, sinceT int64) ([]driver.CommitEntry, bool, error) {
	ci, err := w.commitIndexer()
	if err != nil {
		return nil, false, err
	}
	ctx, c := w.in.start(ctx, "pending commit cids", id, "head")
	entries, ok, err := ci.PendingCommitCIDs(ctx, id, sinceT)
	c.end(ctx, errOutcome(err, OutcomeOK), err)
	return entries, ok, err
}

func (w *instrumented) PruneCommitIndex(ctx context.Context, id driver.ID, upToT int64) error {
	ci, err := w.commitIndexer()
	if err != nil {
		return err
	}
	ctx, c := w.in.start(ctx, "prune commit index", id, "head")
	err = ci.PruneCommitIndex(ctx, id, upToT)
	c.end(ctx, errOutcome(err, OutcomeApplied), err)
	return err
}

var _ driver.HeadsReader = (*instrumented)(nil)

func (w *instrumented) Heads(ctx context.Context, id driver.ID) (driver.Heads, error) {
	h, ok := w.d.(driver.HeadsReader)
	if !ok {
		return driver.Heads{}, fmt.Errorf("%w: this backend's driver has no read of the heads alone", driver.ErrUnsupported)
	}
	ctx, c := w.in.start(ctx, "heads", id, "")
	heads, err := h.Heads(ctx, id)
	c.end(ctx, errOutcome(err, OutcomeOK), err)
	return heads, err
}

// Unwrap returns the driver underneath.
func (w *instrumented) Unwrap() driver.Driver { return w.d }

// errOutcome is the outcome of a call that returned err: ok when nil.
func errOutcome(err error, ok string) string {
	switch {
	case err == nil:
		return ok
	case errors.Is(err, driver.ErrNotFound):
		return OutcomeNotFound
	case errors.Is(err, driver.ErrAlreadyExists):
		return OutcomeConflict
	}
	return OutcomeError
}
