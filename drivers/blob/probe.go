package blob

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"nameservice.dev/nameservice/driver"
)

// probePrefix holds the probe objects, beside ns@v2/ so List never sees
// them.
const probePrefix = "ns@v2.probe/"

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
	var miss []string
	if !r.CreateEnforced {
		miss = append(miss, "a write with IfNotExist on an existing object succeeded")
	}
	if !r.UpdateEnforced {
		miss = append(miss, "a write conditional on a wrong generation or ETag succeeded")
	}
	if !r.DeleteEnforced {
		miss = append(miss, "a delete conditional on a wrong generation or ETag succeeded")
	}
	if !r.DeleteReaches {
		miss = append(miss, "a conditional delete through the service's client did not reach the object gocloud wrote (a gocloud-prefixed bucket? use the URL path or Options.Prefix)")
	}
	if len(miss) == 0 {
		return "every precondition enforced"
	}
	return strings.Join(miss, "; ")
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
	var res ProbeResult
	key := probePrefix + token()
	tag, err := d.put(ctx, key, []byte("{}"), precond{})
	if err != nil {
		return res, err
	}
	defer func() { _ = d.del(context.WithoutCancel(ctx), key, precond{}) }()
	wrong := "1"
	if d.be.name() == SchemeAzure {
		wrong = "0x8D0000000000000"
	}
	if wrong == tag {
		wrong += "1"
	}
	checks := []struct {
		ok  *bool
		run func() error
	}{
		{&res.CreateEnforced, func() error { _, err := d.put(ctx, key, []byte("{}"), ifAbsent()); return err }},
		{&res.UpdateEnforced, func() error { _, err := d.put(ctx, key, []byte("{}"), ifMatch(wrong)); return err }},
		{&res.DeleteEnforced, func() error { return d.del(ctx, key, ifMatch(wrong)) }},
	}
	for _, c := range checks {
		err := c.run()
		switch {
		case errors.Is(err, errPrecondition) || errors.Is(err, errMissing):
			*c.ok = true
		case err != nil:
			return res, err
		}
	}
	if !res.CreateEnforced || !res.UpdateEnforced {
		if tag, err = d.head(ctx, key); err != nil || tag == "" {
			return res, err
		}
	}
	if err := d.del(ctx, key, ifMatch(tag)); err == nil {
		res.DeleteReaches = true
	} else if !errors.Is(err, errPrecondition) && !errors.Is(err, errMissing) {
		return res, err
	}
	return res, nil
}
