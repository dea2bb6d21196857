package docstore

import (
	"context"
	"fmt"
	"time"

	"nameservice.dev/nameservice/driver"
)

// Update implements driver.Driver: read the concern document and its
// revision, check cond, Replace with that revision; when the revision has
// moved on (or the answer was lost), read again and decide again.
func (d *Driver) Update(ctx context.Context, id driver.ID, c driver.Concern, cond driver.Condition, next driver.Value) (driver.Outcome, error) {
	if err := d.begin(ctx); err != nil {
		return driver.Outcome{}, err
	}
	w := token()
	var lastErr error
	for attempt := range writeAttempts {
		cur, err := d.readConcern(ctx, id, c)
		if err != nil {
			return driver.Outcome{}, err
		}
		if cur.W == w { // an earlier attempt landed though its answer was lost
			return driver.Outcome{Applied: true, Current: next.Clone()}, nil
		}
		val, err := cur.value()
		if err != nil {
			return driver.Outcome{}, err
		}
		if !cond.Holds(val, next) {
			return driver.Outcome{Current: val}, nil
		}
		nd, err := cur.next(next, w)
		if err != nil {
			return driver.Outcome{}, err
		}
		if lastErr = d.coll.Replace(ctx, nd); lastErr == nil {
			return driver.Outcome{Applied: true, Current: next.Clone()}, nil
		}
		if !retryable(ctx, lastErr) {
			return driver.Outcome{}, fmt.Errorf("docstore: update %s %s: %w", id, c, classify(ctx, lastErr))
		}
		pause(ctx, attempt)
	}
	return driver.Outcome{}, gaveUp(ctx, "update "+id.String()+" "+c.String(), lastErr)
}

// Retract implements driver.Driver. The status document holds the retracted
// flag, so one conditional write sets it and bumps status together.
func (d *Driver) Retract(ctx context.Context, id driver.ID, at time.Time) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	w := token()
	var lastErr error
	for attempt := range writeAttempts {
		cur, err := d.readConcern(ctx, id, driver.Status)
		if err != nil {
			return err
		}
		if cur.Retracted {
			return nil // already retracted, possibly by an earlier attempt of ours
		}
		nd, err := cur.next(driver.Value{V: cur.V + 1, Payload: driver.RetractedStatus(at)}, w)
		if err != nil {
			return err
		}
		nd.Retracted = true
		if lastErr = d.coll.Replace(ctx, nd); lastErr == nil {
			return nil
		}
		if !retryable(ctx, lastErr) {
			return fmt.Errorf("docstore: retract %s: %w", id, classify(ctx, lastErr))
		}
		pause(ctx, attempt)
	}
	return gaveUp(ctx, "retract "+id.String(), lastErr)
}

// gaveUp is the error of a loop that ran out of attempts.
func gaveUp(ctx context.Context, what string, last error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("docstore: %s: %w", what, err)
	}
	return fmt.Errorf("docstore: %s: %w: no conclusive write in %d attempts (last: %v)", what, driver.ErrUnavailable, writeAttempts, last)
}
