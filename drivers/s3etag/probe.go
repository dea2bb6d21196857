package s3etag

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/model"
)

// The requests the probe checks, as ProbeResult names them.
const (
	ProbeCreate = "PutObject If-None-Match: * on an existing object"
	ProbeUpdate = "PutObject If-Match with a wrong ETag"
	// ProbeDelete is reported, not relied on: no decision of the driver
	// rests on a conditional delete (docs/s3.md).
	ProbeDelete = "DeleteObject If-Match with a wrong ETag"
)

// probe checks, on a probe key under the prefix, that the endpoint rejects
// the preconditions the driver relies on, and refuses it otherwise unless
// the lock protocol or Unsafe is configured.
func (d *Driver) probe(ctx context.Context) (err error) {
	if d.probed, err = d.Probe(ctx); err != nil || d.probed.Safe() || d.cfg.Unsafe {
		return err
	}
	return fmt.Errorf("s3: %w: the endpoint of bucket %q ignores conditional writes (not rejected: %s); concurrent writers would lose updates. "+
		"Use a store that enforces them (AWS S3, versitygw), or the DynamoDB lock protocol (lock=dynamodb://TABLE), "+
		"or accept the risk with unsafe=true", model.ErrUnsupported, d.cfg.Bucket, d.probed.Missing())
}

// Probed returns what the probe on open found.
func (d *Driver) Probed() driver.ProbeResult { return d.probed }

// Probe implements driver.Prober: the precondition checks, sent to the
// endpoint directly (never through the lock protocol: Guarded says so).
func (d *Driver) Probe(ctx context.Context) (driver.ProbeResult, error) {
	r, err := objstore.Probe(ctx, objstore.ProbeOps{Put: d.rawPut, Delete: d.rawDel,
		Wrong: func(etag string) string {
			if wrong := strings.Repeat("0", 32); wrong != etag {
				return wrong
			}
			return strings.Repeat("1", 32)
		},
		Refusal: func(err error) (bool, error) {
			switch {
			case errors.Is(err, objstore.ErrPrecondition):
				return true, nil
			case err != nil && !errors.Is(err, objstore.ErrMissing):
				return false, err
			}
			return false, nil
		},
	}, nil)
	return driver.ProbeResult{Guarded: d.lock != nil, Checks: []driver.ProbeCheck{
		{Request: ProbeCreate, Enforced: r.Create, Required: true},
		{Request: ProbeUpdate, Enforced: r.Update, Required: true},
		{Request: ProbeDelete, Enforced: r.Delete},
	}}, err
}

var _ driver.Prober = (*Driver)(nil)
