// Package guard is the one place where the rules of the model are enforced
// before anything reaches a driver. New wraps a driver.Driver, in the
// spirit of etcd's namespace.NewKV: every call is checked, and a call that
// breaks a rule returns an error wrapping driver.ErrInvalidArgument (or
// driver.ErrInvalidID) that names the field and the limit, without calling
// the driver, so nothing is written; an error of the driver itself comes
// back marked as a BackendError. The rules, the same on every backend
// (docs/model.md):
//
//   - IDs follow driver.ParseID's rules;
//   - every limit below, on payloads, addresses, source types,
//     dependencies and whole records;
//   - watermarks stay within [0, MaxWatermark], so that no increment a
//     driver makes (a retract's status_v + 1) can overflow, and a
//     compare-and-set moves its watermark forward;
//   - values Fluree can read: a content ID in canonical form with a digest
//     of at most 64 bytes, a branch count that fits Fluree's u32;
//   - every string valid UTF-8.
//
// nameservice.New, ns serve (both route families), ns-migrate and ns check
// all write through it.
package guard

import (
	"context"
	"fmt"
	"time"

	"nameservice.dev/nameservice/driver"
)

// Driver is a driver.Driver that checks every call before passing it on.
type Driver struct {
	d driver.Driver
}

// New returns d behind the guard.
func New(d driver.Driver) *Driver { return &Driver{d: d} }

var _ driver.Driver = (*Driver)(nil)

// Create implements driver.Driver: rec must pass CheckRecord.
func (g *Driver) Create(ctx context.Context, rec *driver.Record) error {
	if err := CheckRecord(rec); err != nil {
		return err
	}
	return FromBackend(g.d.Create(ctx, rec))
}

// Get implements driver.Driver: id must be valid.
func (g *Driver) Get(ctx context.Context, id driver.ID) (*driver.Record, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	rec, err := g.d.Get(ctx, id)
	return rec, FromBackend(err)
}

// Update implements driver.Driver: id must be valid and the update pass
// CheckUpdate.
func (g *Driver) Update(ctx context.Context, id driver.ID, c driver.Concern, cond driver.Condition, next driver.Value) (driver.Outcome, error) {
	if err := id.Validate(); err != nil {
		return driver.Outcome{}, err
	}
	if err := CheckUpdate(c, cond, next); err != nil {
		return driver.Outcome{}, err
	}
	out, err := g.d.Update(ctx, id, c, cond, next)
	return out, FromBackend(err)
}

// Retract implements driver.Driver: id must be valid.
func (g *Driver) Retract(ctx context.Context, id driver.ID, at time.Time) error {
	if err := id.Validate(); err != nil {
		return err
	}
	return FromBackend(g.d.Retract(ctx, id, at))
}

// Delete implements driver.Driver: id must be valid.
func (g *Driver) Delete(ctx context.Context, id driver.ID) error {
	if err := id.Validate(); err != nil {
		return err
	}
	return FromBackend(g.d.Delete(ctx, id))
}

// List implements driver.Driver: opts must pass CheckList.
func (g *Driver) List(ctx context.Context, opts driver.ListOptions) (*driver.Page, error) {
	if err := CheckList(opts); err != nil {
		return nil, err
	}
	page, err := g.d.List(ctx, opts)
	return page, FromBackend(err)
}

var _ driver.HeadsReader = (*Driver)(nil)

// errNoHeadsReader tells the caller of Heads to read the record with Get.
var errNoHeadsReader = fmt.Errorf("%w: this backend's driver has no read of the heads alone", driver.ErrUnsupported)

// Heads implements driver.HeadsReader: id must be valid. It returns an
// error wrapping ErrUnsupported when the driver has no cheaper read than
// Get.
func (g *Driver) Heads(ctx context.Context, id driver.ID) (driver.Heads, error) {
	if err := id.Validate(); err != nil {
		return driver.Heads{}, err
	}
	h, ok := g.d.(driver.HeadsReader)
	if !ok {
		return driver.Heads{}, errNoHeadsReader
	}
	heads, err := h.Heads(ctx, id)
	return heads, FromBackend(err)
}

// Close implements driver.Driver.
func (g *Driver) Close() error { return g.d.Close() }

// Unwrap returns the driver behind the guard.
func (g *Driver) Unwrap() driver.Driver { return g.d }
