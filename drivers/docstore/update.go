package docstore

import (
	"context"
	"fmt"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// Update implements driver.Driver: read the concern document and its
// revision, check cond, Replace with that revision; when the revision has
// moved on, read again and decide again. Every write records its write ID
// (driver.WriteOf) among the document's last three; a lost answer, or a
// resend, is resolved as concernWrite says.
func (d *Driver) Update(ctx context.Context, id model.ID, c model.Concern, cond driver.Condition, next model.Value) (driver.Outcome, error) {
	if err := d.begin(ctx); err != nil {
		return driver.Outcome{}, err
	}
	cw := d.updateWrite(ctx, id, c, next)
	var failed *driver.Outcome // the condition failed
	err := cw.run(ctx, func(cur *document) (*document, error) {
		val, err := cur.value()
		if err != nil {
			return nil, err
		}
		if !cond.Holds(val, next) {
			failed = &driver.Outcome{Current: val}
			return nil, nil
		}
		return cur.next(next, cw.w)
	})
	switch {
	case err != nil:
		return driver.Outcome{}, err
	case failed != nil:
		return *failed, nil
	}
	return driver.Outcome{Applied: true, Current: next.Clone()}, nil
}

// updateWrite returns the concernWrite of an Update of concern c of id to
// next: landed when the document records its write ID; never landed when
// the document, in the same life, proves it (driverutil.WriteIDs).
func (d *Driver) updateWrite(ctx context.Context, id model.ID, c model.Concern, next model.Value) *concernWrite {
	cw := d.newConcernWrite(ctx, id, c, "update "+id.String()+" "+c.String())
	cw.landed = func(cd *document) bool { return cd.writes().Has(cw.w.ID) }
	cw.neverLanded = func(cd *document) bool {
		return cd.Life == cw.life && cd.writes().NeverLanded(cd.V, next.V, rising(cd.SK))
	}
	return cw
}

// Retract implements driver.Driver. The status document holds the retracted
// flag, so one conditional write sets it and bumps status together. A
// retracted record is done, whoever retracted it; within one generation
// nothing clears the flag, so a status document of the generation a lost
// attempt was sent to that is not retracted proves the attempt never
// landed.
func (d *Driver) Retract(ctx context.Context, id model.ID, at time.Time) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	cw := d.newConcernWrite(ctx, id, model.Status, "retract "+id.String())
	cw.landed = func(cd *document) bool { return cd.Retracted || cd.writes().Has(cw.w.ID) }
	cw.neverLanded = func(*document) bool { return true }
	return cw.run(ctx, func(cur *document) (*document, error) {
		nd, err := cur.next(model.Value{V: cur.V + 1, Payload: model.RetractedStatus(at)}, cw.w)
		if nd != nil {
			nd.Retracted = true
		}
		return nd, err
	})
}

// run writes the version of the current document that next returns until
// it lands, the write is found to have landed, or next returns nil.
func (cw *concernWrite) run(ctx context.Context, next func(cur *document) (*document, error)) error {
	for attempt := range writeAttempts {
		cur, landed, err := cw.current(ctx)
		if err != nil || landed {
			return err
		}
		nd, err := next(cur)
		if err != nil || nd == nil {
			return err
		}
		if landed, err := cw.attempt(ctx, cur, nd); landed || err != nil {
			return err
		}
		pause(ctx, attempt)
	}
	return gaveUp(ctx, cw.what, cw.cause, cw.last)
}

// concernWrite is one write of a concern document (an Update or a Retract)
// across its attempts. Each attempt is a Replace conditional on the
// revision read, so it lands at most once, and never on a document written
// since that read, of this generation or a later one.
//
// When an attempt's answer is lost (maybeApplied), or the write is a resend
// (driver.Write.Resend), the write is ambiguous, and every later read
// resolves it before anything else: the document holding the write
// (landed: its write ID, or for a retract the flag) means done; a document
// of the generation the lost attempt was sent to, still live, at the
// revision that attempt was conditioned on or proving by its write IDs that
// the write never landed (neverLanded), lets the write go on (conflict or
// send again); anything else (the record purged or created again since, a
// resend, whose first attempt this process did not see) is an error
// wrapping model.ErrOutcomeUnknown.
type concernWrite struct {
	d    *Driver
	id   model.ID
	c    model.Concern
	w    driver.Write
	what string // for errors: "update ID head"

	landed      func(cd *document) bool // cd holds the write
	neverLanded func(cd *document) bool // cd, of the lost attempt's generation, proves it never landed

	// Set when the write becomes ambiguous: the generation and life of the
	// document the lost attempt was sent to ("" for a resend), the
	// revision the last lost attempt was conditioned on, and the first
	// lost answer.
	ambiguous      bool
	gen, life, rev string
	cause          error
	last           error // the last refusal, for gaveUp
}

func (d *Driver) newConcernWrite(ctx context.Context, id model.ID, c model.Concern, what string) *concernWrite {
	cw := &concernWrite{d: d, id: id, c: c, w: driver.WriteOf(ctx), what: what}
	if cw.w.Resend {
		cw.ambiguous, cw.cause = true, fmt.Errorf("the write is a resend")
	}
	return cw
}

// current reads the concern document the next attempt starts from, or
// reports that the write landed.
func (cw *concernWrite) current(ctx context.Context) (cur *document, landed bool, err error) {
	if !cw.ambiguous {
		_, cur, err := cw.d.readConcern(ctx, cw.id, cw.c)
		return cur, err == nil && cw.landed(cur), err
	}
	docs, err := cw.d.getDocs(ctx, cw.id, []string{skMeta, cw.c.String()})
	if err != nil {
		return nil, false, cw.unknown(ctx, "reading the record back failed: %v", err)
	}
	meta, cd := docs[0], docs[1]
	switch {
	case cd != nil && cw.landed(cd):
		return nil, true, nil
	case cw.gen == "":
		return nil, false, cw.unknown(ctx, "the write is not in the %s document, and this process cannot tell which record an earlier attempt reached", cw.c)
	case meta == nil || meta.State != stateLive || meta.Gen != cw.gen || cd == nil || cd.Gen != cw.gen:
		return nil, false, cw.unknown(ctx, "the record has been purged, or purged and created again, since")
	case cw.rev != "" && cw.d.revision(cd) == cw.rev, cw.neverLanded(cd):
		return cd, false, nil
	}
	return nil, false, cw.unknown(ctx, "the %s document has been written since, by writes that could have overwritten this one", cw.c)
}

// attempt sends nd, the next version of cur. It reports whether it landed;
// a lost answer makes the write ambiguous, for the next read to resolve.
func (cw *concernWrite) attempt(ctx context.Context, cur, nd *document) (bool, error) {
	err := cw.d.coll.Replace(ctx, nd)
	switch {
	case err == nil:
		return true, nil
	case maybeApplied(ctx, err):
		if !cw.ambiguous {
			cw.ambiguous, cw.gen, cw.life, cw.cause = true, cur.Gen, cur.Life, err
		}
		cw.rev = cw.d.revision(cur)
		return false, nil
	case retryable(ctx, err):
		cw.last = err // refused: another writer got in between
		return false, nil
	case cw.ambiguous:
		return false, cw.unknown(ctx, "sending it again failed: %v", err)
	}
	return false, fmt.Errorf("docstore: %s: %w", cw.what, classify(ctx, err))
}

func (cw *concernWrite) unknown(ctx context.Context, format string, args ...any) error {
	return outcomeUnknown(ctx, cw.what, "%v; %s", cw.cause, fmt.Sprintf(format, args...))
}

// revision returns doc's revision as text; "" when there is none.
func (d *Driver) revision(doc *document) string {
	s, err := d.coll.RevisionToString(doc.Rev)
	if err != nil || doc.Rev == nil {
		return ""
	}
	return s
}

// gaveUp is the error of a loop that ran out of attempts: an unknown
// outcome once an answer was lost (lost, the first), else the last refusal.
func gaveUp(ctx context.Context, what string, lost, last error) error {
	if lost != nil {
		return outcomeUnknown(ctx, what, "%v; no conclusive answer in %d attempts", lost, writeAttempts)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("docstore: %s: %w", what, err)
	}
	return fmt.Errorf("docstore: %s: %w: no conclusive write in %d attempts (last: %v)", what, model.ErrUnavailable, writeAttempts, last)
}
