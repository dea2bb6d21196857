package docstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// Delete implements driver.Driver. It first marks the meta document
// purging, by revision, recording the delete's write ID (driver.WriteOf):
// from then on the record does not exist, and of racing deletes exactly one
// wins (a Delete by revision cannot tell them apart, since some providers
// accept it when the document is already gone). It then removes the meta
// document and the concern documents of the record's generation, each by
// revision. A mark left by a delete that died is removed by the next
// creator once StaleAfter has passed.
//
// After a lost answer, or for a resend, the meta document decides: marked
// with the write's ID, the mark landed (the delete finishes the purge); of
// the generation the lost mark was sent to and still live, or marked by
// another delete, it never landed (a marked meta document never returns to
// live, and a mark needs a live one); gone, of another generation, or a
// resend not found, the outcome is unknown.
func (d *Driver) Delete(ctx context.Context, id model.ID) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	return d.purge(ctx, id, nil)
}

// purge is Delete. When check is not nil it is called with the meta
// document each time it is read, before the mark; its error stops the
// purge, so that the mark (by revision) is conditional on a version check
// accepted.
func (d *Driver) purge(ctx context.Context, id model.ID, check func(*document) error) error {
	p := &purge{d: d, id: id, w: driver.WriteOf(ctx), what: "delete " + id.String()}
	if p.w.Resend {
		p.lost = errors.New("the write is a resend")
	}
	for attempt := range writeAttempts {
		docs, err := d.getDocs(ctx, id, allSorts)
		if err != nil {
			return p.or(ctx, err)
		}
		m := docs[0]
		if m != nil && m.State == statePurging && m.W == p.w.ID {
			d.finishPurge(ctx, m, docs) // our mark landed though its answer was lost
			return nil
		}
		if err := p.check(ctx, m); err != nil {
			return err
		}
		if check != nil {
			if err := check(m); err != nil {
				return err
			}
		}
		mark := *m
		mark.State, mark.CreatingMS, mark.W = statePurging, time.Now().UnixMilli(), p.w.ID
		err = d.coll.Replace(ctx, &mark)
		switch {
		case err == nil:
			d.finishPurge(ctx, &mark, docs)
			return nil
		case maybeApplied(ctx, err):
			p.lost, p.gen = cmp.Or(p.lost, err), cmp.Or(p.gen, m.Gen)
		case !retryable(ctx, err):
			return p.or(ctx, fmt.Errorf("docstore: %s: %w", p.what, classify(ctx, err)))
		}
		pause(ctx, attempt)
	}
	return gaveUp(ctx, p.what, p.lost, nil)
}

// purge is the state of one Delete across its attempts.
type purge struct {
	d    *Driver
	id   model.ID
	w    driver.Write
	what string
	// lost is the first lost answer (or the resend), gen the generation
	// the lost mark was sent to ("" for a resend).
	lost error
	gen  string
}

// check returns the error that stops the purge at meta document m (nil:
// mark it), after a lost answer too.
func (p *purge) check(ctx context.Context, m *document) error {
	switch {
	case p.lost == nil:
		return live(p.id, m)
	case p.gen == "":
		return outcomeUnknown(ctx, p.what, "%v; the record holds no mark of this write, and this process cannot tell whether an earlier attempt purged a record created since", p.lost)
	case m != nil && m.Gen == p.gen && m.State == statePurging:
		return live(p.id, nil) // another delete marked it: ours never landed
	case m == nil || m.Gen != p.gen || m.State != stateLive:
		return outcomeUnknown(ctx, p.what, "%v; the record has been purged, or purged and created again, since", p.lost)
	}
	return nil // still live: the mark never landed
}

// or returns err, the error of a step of the purge, or once an answer was
// lost, the unknown outcome it leaves.
func (p *purge) or(ctx context.Context, err error) error {
	if p.lost == nil {
		return err
	}
	return outcomeUnknown(ctx, p.what, "%v; then: %v", p.lost, err)
}

// finishPurge removes the marked meta document, then the concern documents
// among docs (meta first) of its generation. The purge is done once the
// mark landed, so this reports nothing: what it cannot remove stays
// invisible, and the next creator of the ID removes it once StaleAfter has
// passed.
func (d *Driver) finishPurge(ctx context.Context, mark *document, docs []*document) {
	if d.deleteDoc(ctx, mark) != nil {
		return
	}
	for _, doc := range docs[1:] {
		if doc != nil && doc.Gen == docs[0].Gen && d.deleteDoc(ctx, doc) != nil {
			return
		}
	}
}

// deleteDoc removes doc by revision; when its revision has moved on (a late
// update), it reads it again and removes it if it is still of doc's
// generation.
func (d *Driver) deleteDoc(ctx context.Context, doc *document) error {
	for attempt := range writeAttempts {
		err := d.coll.Delete(ctx, doc)
		if err == nil {
			return nil
		}
		if !retryable(ctx, err) {
			return fmt.Errorf("docstore: delete %s %s: %w", doc.PK, doc.SK, classify(ctx, err))
		}
		cur, err := d.getOne(ctx, doc)
		if err != nil {
			return err
		}
		if cur == nil || cur.Gen != doc.Gen {
			return nil
		}
		doc = cur
		pause(ctx, attempt)
	}
	return gaveUp(ctx, "delete "+doc.PK+" "+doc.SK, nil, nil)
}

// Collect implements driver.Collector: a purge deletes the record's
// documents, so a purge that finished leaves nothing to collect. What a
// purge that died half-way left (a purging meta document, concern
// documents of its generation) is invisible to readers and is removed by
// the next create of the ID once StaleAfter has passed.
func (d *Driver) Collect(ctx context.Context, _ driver.CollectOptions) (driver.CollectStats, error) {
	return driver.CollectStats{}, d.begin(ctx)
}

var _ driver.Collector = (*Driver)(nil)
