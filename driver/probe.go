package driver

import (
	"context"
	"slices"
	"strings"
)

// Prober is an optional capability: a driver whose protocol relies on the
// backend enforcing conditions on its requests (an object store's
// preconditions), which it can check against the live store.
type Prober interface {
	// Probe sends requests whose conditions fail to an object of its own
	// beside the records, reports which the store refused, and removes the
	// object. It reads and writes no record.
	Probe(ctx context.Context) (ProbeResult, error)
}

// ProbeResult is what a probe found.
type ProbeResult struct {
	Checks []ProbeCheck
	// Guarded is set when the driver keeps writers apart by a protocol of
	// its own (a lock table), so that conditions the store ignores are
	// not relied on.
	Guarded bool
}

// ProbeCheck is one condition a probe checked.
type ProbeCheck struct {
	// Request names the request and its condition, e.g. "PutObject
	// If-Match with a wrong ETag".
	Request string
	// Enforced is set when the store refused the request.
	Enforced bool
	// Required is set when the driver's protocol relies on it; a check
	// that is not required is reported for the operator only.
	Required bool
}

// Safe reports whether the store enforces every condition the driver
// relies on, or the driver does not rely on the store's.
func (r ProbeResult) Safe() bool {
	missing := func(c ProbeCheck) bool { return c.Required && !c.Enforced }
	return r.Guarded || !slices.ContainsFunc(r.Checks, missing)
}

// Missing names the required checks the store did not enforce, joined by
// "; ".
func (r ProbeResult) Missing() string {
	var miss []string
	for _, c := range r.Checks {
		if c.Required && !c.Enforced {
			miss = append(miss, c.Request)
		}
	}
	return strings.Join(miss, "; ")
}

// String lists every check: "PutObject If-Match with a wrong ETag:
// enforced; DeleteObject If-Match with a wrong ETag: ignored (not relied
// on)".
func (r ProbeResult) String() string {
	parts := make([]string, len(r.Checks))
	for i, c := range r.Checks {
		what := "enforced"
		if !c.Enforced {
			what = "ignored"
		}
		if !c.Required {
			what += " (not relied on)"
		}
		parts[i] = c.Request + ": " + what
	}
	return strings.Join(parts, "; ")
}

// Enforced reports whether the check of request was made and enforced.
func (r ProbeResult) Enforced(request string) bool {
	for _, c := range r.Checks {
		if c.Request == request {
			return c.Enforced
		}
	}
	return false
}
