package s3etag

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/objstore"
)

// ProbeResult says which preconditions an endpoint enforced.
type ProbeResult struct {
	CreateEnforced bool // PutObject If-None-Match: * on an existing key got 412
	UpdateEnforced bool // PutObject If-Match with a wrong ETag got 412
	DeleteEnforced bool // DeleteObject If-Match with a wrong ETag got 412
}

// Enforced reports whether the writes the driver relies on are safe.
func (r ProbeResult) Enforced() bool { return r.CreateEnforced && r.UpdateEnforced }

func (r ProbeResult) String() string {
	return objstore.Unenforced("not rejected: ",
		objstore.Check{Held: r.CreateEnforced, Text: "PutObject If-None-Match: * on an existing object"},
		objstore.Check{Held: r.UpdateEnforced, Text: "PutObject If-Match with a wrong ETag"},
		objstore.Check{Held: r.DeleteEnforced, Text: "DeleteObject If-Match with a wrong ETag"})
}

// probe checks, on a probe key under the prefix, that the endpoint rejects
// the preconditions the driver relies on; it refuses a store that does not,
// unless the lock protocol or Unsafe is configured. It also shows early
// that the bucket is reachable with these credentials.
func (d *Driver) probe(ctx context.Context) error {
	res, err := d.Probe(ctx)
	if err != nil {
		return err
	}
	d.probed = res
	if res.Enforced() || d.lock != nil || d.cfg.Unsafe {
		return nil
	}
	return fmt.Errorf("s3: %w: the endpoint of bucket %q ignores conditional writes (%s); concurrent writers would lose updates. "+
		"Use a store that enforces them (AWS S3, versitygw), or the DynamoDB lock protocol (lock=dynamodb://TABLE), "+
		"or accept the risk with unsafe=true", driver.ErrUnsupported, d.cfg.Bucket, res)
}

// Probed returns what the probe on open found.
func (d *Driver) Probed() ProbeResult { return d.probed }

// Probe runs the precondition checks against the endpoint directly (never
// through the lock protocol) and removes its probe object.
func (d *Driver) Probe(ctx context.Context) (ProbeResult, error) {
	r, err := objstore.Probe(ctx, objstore.ProbeOps{Put: d.rawPut, Delete: d.rawDel,
		Wrong: func(etag string) string {
			if wrong := strings.Repeat("0", 32); wrong != etag {
				return wrong
			}
			return strings.Repeat("1", 32)
		},
		Refusal: func(err error) (bool, error) {
			switch {
			case errors.Is(err, errPrecondition):
				return true, nil
			case err != nil && !errors.Is(err, errMissing):
				return false, err
			}
			return false, nil
		},
	}, nil)
	return ProbeResult{CreateEnforced: r.Create, UpdateEnforced: r.Update, DeleteEnforced: r.Delete}, err
}
