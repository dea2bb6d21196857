package blob

import (
	"context"
	"errors"
	"fmt"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/objstore"
)

// ProbeResult says which preconditions a service enforced.
type ProbeResult struct {
	CreateEnforced bool // a write with IfNotExist on an existing object failed
	UpdateEnforced bool // a write conditional on a wrong tag failed
	DeleteEnforced bool // a delete conditional on a wrong tag failed
	DeleteReaches  bool // a delete conditional on the right tag removed the object
}

// Enforced reports whether the requests the driver relies on are safe.
func (r ProbeResult) Enforced() bool {
	return r.CreateEnforced && r.UpdateEnforced && r.DeleteEnforced && r.DeleteReaches
}

func (r ProbeResult) String() string {
	return objstore.Unenforced("",
		objstore.Check{Held: r.CreateEnforced, Text: "a write with IfNotExist on an existing object succeeded"},
		objstore.Check{Held: r.UpdateEnforced, Text: "a write conditional on a wrong generation or ETag succeeded"},
		objstore.Check{Held: r.DeleteEnforced, Text: "a delete conditional on a wrong generation or ETag succeeded"},
		objstore.Check{Held: r.DeleteReaches, Text: "a conditional delete through the service's client did not reach the object gocloud wrote (a gocloud-prefixed bucket? use the URL path or Config.Prefix)"})
}

// probe checks, on a probe key under the prefix, that the service enforces
// the preconditions the driver relies on, and refuses it otherwise. It also
// shows early that the bucket is reachable with these credentials.
func (d *Driver) probe(ctx context.Context) error {
	res, err := d.Probe(ctx)
	if err != nil {
		return err
	}
	d.probed = res
	if res.Enforced() {
		return nil
	}
	return fmt.Errorf("%s: %w: the service behind this bucket does not enforce the preconditions the driver relies on (%s); "+
		"concurrent writers would lose updates", d.be.name(), driver.ErrUnsupported, res)
}

// Probed returns what the probe on open found.
func (d *Driver) Probed() ProbeResult { return d.probed }

// Probe writes a probe object, checks that a create, an update and a delete
// with a failing precondition are refused, and removes the object with a
// delete conditional on its tag (five requests).
func (d *Driver) Probe(ctx context.Context) (ProbeResult, error) {
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
			if errors.Is(err, errPrecondition) || errors.Is(err, errMissing) {
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
		case !errors.Is(err, errPrecondition) && !errors.Is(err, errMissing):
			return err
		}
		return nil
	})
	return ProbeResult{CreateEnforced: r.Create, UpdateEnforced: r.Update, DeleteEnforced: r.Delete, DeleteReaches: reaches}, err
}
