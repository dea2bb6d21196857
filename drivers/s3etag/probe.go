package s3etag

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

// ProbeResult says which preconditions an endpoint enforced.
type ProbeResult struct {
	CreateEnforced bool // PutObject If-None-Match: * on an existing key got 412
	UpdateEnforced bool // PutObject If-Match with a wrong ETag got 412
	DeleteEnforced bool // DeleteObject If-Match with a wrong ETag got 412
}

// Enforced reports whether the writes the driver relies on are safe.
func (r ProbeResult) Enforced() bool { return r.CreateEnforced && r.UpdateEnforced }

func (r ProbeResult) String() string {
	var miss []string
	if !r.CreateEnforced {
		miss = append(miss, "PutObject If-None-Match: * on an existing object")
	}
	if !r.UpdateEnforced {
		miss = append(miss, "PutObject If-Match with a wrong ETag")
	}
	if !r.DeleteEnforced {
		miss = append(miss, "DeleteObject If-Match with a wrong ETag")
	}
	if len(miss) == 0 {
		return "every precondition enforced"
	}
	return "not rejected: " + strings.Join(miss, "; ")
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
	var res ProbeResult
	key := probePrefix + token()
	etag, err := d.rawPut(ctx, key, []byte("{}"), precond{})
	if err != nil {
		return res, err
	}
	defer func() { _ = d.rawDel(context.WithoutCancel(ctx), key, precond{}) }()
	wrong := strings.Repeat("0", 32)
	if wrong == etag {
		wrong = strings.Repeat("1", 32)
	}
	checks := []struct {
		ok  *bool
		run func() error
	}{
		{&res.CreateEnforced, func() error { _, err := d.rawPut(ctx, key, []byte("{}"), ifAbsent()); return err }},
		{&res.UpdateEnforced, func() error { _, err := d.rawPut(ctx, key, []byte("{}"), ifMatch(wrong)); return err }},
		{&res.DeleteEnforced, func() error { return d.rawDel(ctx, key, ifMatch(wrong)) }},
	}
	for _, c := range checks {
		err := c.run()
		switch {
		case errors.Is(err, errPrecondition):
			*c.ok = true
		case err != nil && !errors.Is(err, errMissing):
			return res, err
		}
	}
	return res, nil
}
