package docstore

import (
	"context"
	"fmt"

	"nameservice.dev/nameservice/driver"
)

// Delete implements driver.Driver. It first marks the meta document
// purging, by revision: from then on the record does not exist, and of
// racing deletes exactly one wins (a Delete by revision cannot tell them
// apart, since some providers accept it when the document is already gone).
// It then removes the meta document and the concern documents of the
// record's generation, each by revision. A mark left by a delete that died
// is removed by the next creator once StaleAfter has passed.
func (d *Driver) Delete(ctx context.Context, id driver.ID) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	return d.purge(ctx, id, nil)
}

// purge is Delete. When check is not nil it is called with the meta
// document each time it is read, before the mark; its error stops the
// purge, so that the mark (by revision) is conditional on a version check
// accepted.
func (d *Driver) purge(ctx context.Context, id driver.ID, check func(*document) error) error {
	w := token()
	for attempt := range writeAttempts {
		docs, err := d.getDocs(ctx, id, allSorts)
		if err != nil {
			return err
		}
		if m := docs[0]; m != nil && m.State == statePurging && m.W == w {
			return d.finishPurge(ctx, m, docs) // our mark landed though its answer was lost
		}
		if err := live(id, docs[0]); err != nil {
			return err
		}
		if check != nil {
			if err := check(docs[0]); err != nil {
				return err
			}
		}
		mark := *docs[0]
		mark.State, mark.CreatingMS, mark.W = statePurging, d.now().UnixMilli(), w
		err = d.coll.Replace(ctx, &mark)
		if err == nil {
			return d.finishPurge(ctx, &mark, docs)
		}
		if !retryable(ctx, err) {
			return fmt.Errorf("docstore: delete %s: %w", id, classify(ctx, err))
		}
		pause(ctx, attempt)
	}
	return gaveUp(ctx, "delete "+id.String(), nil)
}

// finishPurge removes the marked meta document, then the concern documents
// among docs of its generation.
func (d *Driver) finishPurge(ctx context.Context, mark *document, docs []*document) error {
	if err := d.deleteDoc(ctx, mark); err != nil {
		return err
	}
	return d.deleteConcerns(ctx, docs)
}

// deleteConcerns removes the concern documents among docs (meta first) that
// belong to the meta document's generation.
func (d *Driver) deleteConcerns(ctx context.Context, docs []*document) error {
	gen := docs[0].Gen
	for _, doc := range docs[1:] {
		if doc == nil || doc.Gen != gen {
			continue
		}
		if err := d.deleteDoc(ctx, doc); err != nil {
			return err
		}
	}
	return nil
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
	return gaveUp(ctx, "delete "+doc.PK+" "+doc.SK, nil)
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
