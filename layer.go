package nameservice

import (
	"context"
	"errors"
	"fmt"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/guard"
	"nameservice.dev/nameservice/internal/telemetry"
	"nameservice.dev/nameservice/model"
)

// The driver contract's calls, made here alone (internal/archtest), as
// gocloud's blob.Bucket makes them: checked against package guard's rules (a
// refusal is returned unwrapped, the driver not called), traced, made, and
// the driver's error marked a guard.BackendError, so a server tells a client
// its code but not its text. The exported ones speak the contract by ID for
// servers and tools (ns serve's /ns/v1 routes); the portable API is built on
// them.

// Condition and Page are the driver contract's types the record-level
// calls use.
type (
	Condition = driver.Condition
	Page      = driver.Page
)

// Get reads record id, retracted or not, strongly consistently. It returns
// an error wrapping ErrNotFound for an unknown ID. Lookup is Get by a
// string ID.
func (ns *NameService) Get(ctx context.Context, id ID) (*Record, error) {
	return ns.get(ctx, id, ns.in)
}

// get is Get reporting to in: nil for the polls of a watch, which are not
// worth a span each.
func (ns *NameService) get(ctx context.Context, id ID, in *telemetry.Instruments) (*Record, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	return call(ctx, in, "get", id, "", telemetry.OutcomeOK, func(ctx context.Context) (*Record, error) {
		return ns.d.Get(ctx, id)
	})
}

// Ping reads a record that need not exist, untraced (a readiness probe
// every few seconds is not a call to trace), and returns nil when the
// backend answers, found or not: the backend's error otherwise.
func (ns *NameService) Ping(ctx context.Context) error {
	_, err := ns.get(ctx, ID{Name: "readyz-probe", Branch: model.DefaultBranch}, nil)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	return err
}

// Create creates rec exactly as given, in one atomic step, when its ID is
// free. rec must pass guard.CheckRecord. It returns an error wrapping
// ErrAlreadyExists when the ID is taken, retracted or not. Import is Create
// of a copy, with the operation named in its error.
func (ns *NameService) Create(ctx context.Context, rec *Record) error {
	if err := guard.CheckRecord(rec); err != nil {
		return err
	}
	return ns.traced(ctx, "create", rec.ID, "", telemetry.OutcomeApplied, func(ctx context.Context) error {
		return ns.d.Create(ctx, rec)
	})
}

// Update sets concern c of record id to next under cond (guard.CheckUpdate
// says which updates may be asked for). An update whose condition does not
// hold is not applied and is no error: the Outcome carries the current
// value. It returns an error wrapping ErrNotFound for an unknown ID or a
// concern the record's kind lacks.
func (ns *NameService) Update(ctx context.Context, id ID, c Concern, cond Condition, next Value) (Outcome, error) {
	if err := id.Validate(); err != nil {
		return Outcome{}, err
	}
	if err := guard.CheckUpdate(c, cond, next); err != nil {
		return Outcome{}, err
	}
	ctx, call := ns.in.Start(ctx, "update", id, c.String())
	out, err := ns.d.Update(ctx, id, c, cond, next)
	call.End(ctx, telemetry.UpdateOutcome(out, cond, err), err)
	return out, guard.FromBackend(err)
}

// RetractAt marks id retracted and pushes its status to {state: retracted,
// retracted_at: at} at status_v+1, in one atomic step; Retract is RetractAt
// now, by a string ID. Retracting twice is a no-op. It returns an error
// wrapping ErrNotFound for an unknown ID.
func (ns *NameService) RetractAt(ctx context.Context, id ID, at time.Time) error {
	if err := id.Validate(); err != nil {
		return err
	}
	return ns.traced(ctx, "retract", id, "", telemetry.OutcomeApplied, func(ctx context.Context) error {
		return ns.d.Retract(ctx, id, at)
	})
}

// Delete removes record id entirely; Purge is Delete by a string ID. It
// returns an error wrapping ErrNotFound for an unknown ID.
func (ns *NameService) Delete(ctx context.Context, id ID) error {
	if err := id.Validate(); err != nil {
		return err
	}
	return ns.traced(ctx, "delete", id, "", telemetry.OutcomeApplied, func(ctx context.Context) error {
		return ns.d.Delete(ctx, id)
	})
}

// ListPage returns one page of the records matching opts (guard.CheckList
// says which options are well formed), in ascending ID order, with the
// records that could not be read in its Failed; List iterates over every
// page.
func (ns *NameService) ListPage(ctx context.Context, opts ListOptions) (*Page, error) {
	return ns.listPage(ctx, opts, ns.in)
}

// listPage is ListPage reporting to in: nil for the polls of a watch.
func (ns *NameService) listPage(ctx context.Context, opts ListOptions, in *telemetry.Instruments) (*Page, error) {
	if err := guard.CheckList(opts); err != nil {
		return nil, err
	}
	return call(ctx, in, "list", ID{}, "", telemetry.OutcomeOK, func(ctx context.Context) (*Page, error) {
		return ns.d.List(ctx, opts)
	})
}

// Close closes the driver.
func (ns *NameService) Close() error { return ns.d.Close() }

// traced makes call f of the driver as operation op on id (zero for none)
// and concern ("" for none), whose outcome is ok when it succeeds, and
// marks its error as the backend's.
func (ns *NameService) traced(ctx context.Context, op string, id ID, concern, ok string, f func(context.Context) error) error {
	_, err := call(ctx, ns.in, op, id, concern, ok, func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx) })
	return err
}

// call is traced for a call f that returns a result, reporting to in
// (nil: untraced).
func call[T any](ctx context.Context, in *telemetry.Instruments, op string, id ID, concern, ok string, f func(context.Context) (T, error)) (T, error) {
	ctx, c := in.Start(ctx, op, id, concern)
	v, err := f(ctx)
	c.End(ctx, telemetry.ErrOutcome(err, ok), err)
	return v, guard.FromBackend(err)
}

// unsupported returns an error wrapping ErrUnsupported: the driver cannot
// do what (its capability is missing).
func unsupported(what string) error {
	return fmt.Errorf("%w: this backend's driver %s", model.ErrUnsupported, what)
}
