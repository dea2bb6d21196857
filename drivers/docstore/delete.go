package docstore

import (
	"context"
	"fmt"

	"gocloud.dev/gcerrors"

	"nameservice.dev/nameservice/driver"
)

// Delete implements driver.Driver. It removes the meta document first, by
// revision (from then on the record does not exist), then the concern
// documents of the record's generation, each by revision.
func (d *Driver) Delete(ctx context.Context, id driver.ID) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	var prev []*document // the documents read before an ambiguous delete
	for attempt := range writeAttempts {
		docs, err := d.getDocs(ctx, id, allSorts)
		if err != nil {
			return err
		}
		if err := live(id, docs[0]); err != nil {
			if prev != nil { // our delete landed though its answer was lost
				return d.deleteConcerns(ctx, prev)
			}
			return err
		}
		err = d.coll.Delete(ctx, docs[0])
		if err == nil {
			return d.deleteConcerns(ctx, docs)
		}
		if !retryable(ctx, err) {
			return fmt.Errorf("docstore: delete %s: %w", id, classify(ctx, err))
		}
		prev = nil
		if c := code(err); c != gcerrors.FailedPrecondition && c != gcerrors.NotFound {
			prev = docs
		}
		pause(ctx, attempt)
	}
	return gaveUp(ctx, "delete "+id.String(), nil)
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
