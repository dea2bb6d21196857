package blob

import (
	"context"
	"errors"
	"fmt"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/model"
)

// The requests the probe checks, as ProbeResult names them.
const (
	ProbeCreate = "a write with IfNotExist on an existing object"
	ProbeUpdate = "a write conditional on a wrong generation or ETag"
	// ProbeDelete is reported, not relied on: no decision of the driver
	// rests on a conditional delete (docs/s3.md).
	ProbeDelete = "a delete conditional on a wrong generation or ETag"
	// ProbeReach: deletes must reach the objects gocloud writes, or
	// collection would remove nothing.
	ProbeReach = "a delete through the service's client reaching the object gocloud wrote (a gocloud-prefixed bucket? use the URL path or Config.Prefix)"
)

// probe checks, on a probe key under the prefix, that the service enforces
// the preconditions the driver relies on, and refuses it otherwise.
func (d *Driver) probe(ctx context.Context) (err error) {
	if d.probed, err = d.Probe(ctx); err != nil || d.probed.Safe() {
		return err
	}
	return fmt.Errorf("%s: %w: the service behind this bucket does not enforce the preconditions the driver relies on (not rejected: %s); "+
		"concurrent writers would lose updates", d.be.name(), model.ErrUnsupported, d.probed.Missing())
}

// Probed returns what the probe on open found.
func (d *Driver) Probed() driver.ProbeResult { return d.probed }

// Probe implements driver.Prober: it writes a probe object, checks that a
// create, an update and a delete with a failing precondition are refused,
// and removes the object with a delete conditional on its tag.
func (d *Driver) Probe(ctx context.Context) (driver.ProbeResult, error) {
	reaches, s := false, store{d}
	r, err := objstore.Probe(ctx, objstore.ProbeOps{Put: s.Put, Delete: s.Delete,
		Wrong: func(tag string) string {
			wrong := "1"
			if d.be.name() == SchemeAzure {
				wrong = "0x8D0000000000000"
			}
			if wrong == tag {
				wrong += "1"
			}
			return wrong
		},
		Refusal: func(err error) (bool, error) {
			if errors.Is(err, objstore.ErrPrecondition) || errors.Is(err, errMissing) {
				return true, nil
			}
			return false, err
		},
	}, func(key, tag string, r objstore.Refused) error {
		var err error
		if !r.Create || !r.Update {
			// A write that was not refused changed the object's tag.
			if tag, err = s.Head(ctx, key); err != nil || tag == "" {
				return err
			}
		}
		err = s.Delete(ctx, key, objstore.IfMatch(tag))
		switch {
		case err == nil:
			reaches = true
		case !errors.Is(err, objstore.ErrPrecondition) && !errors.Is(err, errMissing):
			return err
		}
		return nil
	})
	return driver.ProbeResult{Checks: []driver.ProbeCheck{
		{Request: ProbeCreate, Enforced: r.Create, Required: true},
		{Request: ProbeUpdate, Enforced: r.Update, Required: true},
		{Request: ProbeDelete, Enforced: r.Delete},
		{Request: ProbeReach, Enforced: reaches, Required: true},
	}}, err
}

var _ driver.Prober = (*Driver)(nil)
