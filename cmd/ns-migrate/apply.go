package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"nameservice.dev/nameservice"
)

// maxAttempts bounds how often one concern is retried while a writer at the
// target keeps moving it (each retry starts from the value that writer left).
const maxAttempts = 8

// conflictError says why a record was not written: the target is ahead of
// the source or diverged from it (a writer at the target may have got there
// first), and its value stands.
type conflictError struct{ reason string }

func (e *conflictError) Error() string { return e.reason }

func conflictf(format string, args ...any) error {
	return &conflictError{fmt.Sprintf(format, args...)}
}

// copier writes source records into the target.
type copier struct {
	dst *nameservice.NameService
	// created and existed count the records found absent and present at
	// the target, to choose which request to try first (see copyRecord).
	created, existed atomic.Int64
}

// copyRecord plans src against the target's current record and carries the
// plan out. It returns the action taken and, for actConflict and actFailed,
// why.
//
// While most records are new at the target (a first copy), it tries the
// create first, which is one request for a new record and costs a read only
// when the record exists; once most records exist (a re-run), it reads
// first, so a record to skip costs one read.
func (c *copier) copyRecord(ctx context.Context, src *nameservice.Record, dryRun bool) (action, error) {
	if !dryRun && c.created.Load() >= c.existed.Load() {
		err := c.dst.Import(ctx, src)
		switch {
		case err == nil:
			c.created.Add(1)
			return actCreate, nil
		case !errors.Is(err, nameservice.ErrAlreadyExists):
			return actFailed, err
		}
	}
	for attempt := 0; ; attempt++ {
		dst, err := c.lookup(ctx, src.ID.String())
		if err != nil {
			return actFailed, fmt.Errorf("reading the target: %w", err)
		}
		if dst == nil {
			c.created.Add(1)
		} else {
			c.existed.Add(1)
		}
		p := planRecord(src, dst)
		if p.action == actConflict {
			return actConflict, conflictf("%s", p.reason)
		}
		if dryRun || p.action == actSkip {
			return p.action, nil
		}
		err = c.apply(ctx, src, p)
		// A record created at the target since it was read: plan again
		// against what is there now.
		if p.action == actCreate && errors.Is(err, nameservice.ErrAlreadyExists) && attempt == 0 {
			continue
		}
		switch _, isConflict := errors.AsType[*conflictError](err); {
		case isConflict:
			return actConflict, err
		case err != nil:
			return actFailed, err
		}
		return p.action, nil
	}
}

// lookup returns the target's record, or nil when there is none.
func (c *copier) lookup(ctx context.Context, id string) (*nameservice.Record, error) {
	rec, err := c.dst.Lookup(ctx, id)
	if errors.Is(err, nameservice.ErrNotFound) {
		return nil, nil
	}
	return rec, err
}

func (c *copier) apply(ctx context.Context, src *nameservice.Record, p plan) error {
	id := src.ID.String()
	if p.action == actCreate {
		return c.dst.Import(ctx, src)
	}
	for _, s := range p.steps {
		if err := c.advance(ctx, id, s); err != nil {
			return err
		}
	}
	if p.retract != nil {
		return c.retract(ctx, src.ID, *p.retract)
	}
	return nil
}

// advance moves concern s.concern of id from s.from to s.to by
// compare-and-set, as a live writer would. When another writer moved it
// first, it retries from that writer's value while that value is still
// behind the source, and otherwise leaves it (a conflictError).
func (c *copier) advance(ctx context.Context, id string, s step) error {
	cur := s.from
	for range maxAttempts {
		out, err := c.push(ctx, id, s.concern, cur, s.to)
		if err != nil || out.Applied {
			return err
		}
		cur = out.Current
		if cur.Equal(s.to) {
			return nil
		}
		if cur.V >= s.to.V {
			return conflictf("%s moved during the copy: %s", s.concern, behind(s.concern, s.to, cur))
		}
	}
	return conflictf("%s of %s kept moving under %d attempts", s.concern, id, maxAttempts)
}

func (c *copier) push(ctx context.Context, id string, con nameservice.Concern, from, to nameservice.Value) (nameservice.Outcome, error) {
	switch con {
	case nameservice.Head, nameservice.Index:
		ref, ok := to.Ref()
		if !ok {
			return nameservice.Outcome{}, fmt.Errorf("%s of %s: source value %s is not a ref", con, id, to)
		}
		return c.dst.CompareAndSetRef(ctx, id, con, &from, ref)
	case nameservice.Status:
		return c.dst.PushStatus(ctx, id, from, to)
	default:
		return c.dst.PushConfig(ctx, id, from, to)
	}
}

// retract retracts the target the way the source was: its clock set to the
// source status's retracted_at, so the status it pushes at status_v+1 is the
// source's; a source status further on is then pushed by compare-and-set.
func (c *copier) retract(ctx context.Context, id nameservice.ID, s step) error {
	at := time.Now()
	if sec, ok := s.to.Payload.Int("retracted_at"); ok {
		at = time.Unix(sec, 0)
	}
	if err := c.dst.RetractAt(ctx, id, at); err != nil {
		return fmt.Errorf("retract %s: %w", id, err)
	}
	cur, err := c.dst.StatusOf(ctx, id.String())
	if err != nil || cur.Equal(s.to) {
		return err
	}
	if cur.V >= s.to.V {
		return conflictf("status after the retract: %s", behind(nameservice.Status, s.to, cur))
	}
	return c.advance(ctx, id.String(), step{concern: nameservice.Status, from: cur, to: s.to})
}
