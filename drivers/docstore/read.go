package docstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"gocloud.dev/gcerrors"

	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

// Bounds of the driver's loops.
const (
	// readAttempts bounds the re-reads of a record whose documents disagree
	// (read while it was deleted and created again).
	readAttempts = 5
	// writeAttempts bounds the read-compare-write rounds of one update.
	writeAttempts = 50
)

// errTorn reports documents of one record that do not fit together: read
// while the record was being deleted or created again.
var errTorn = errors.New("documents of different generations")

// allSorts are the sort names of a record's documents, meta first.
var allSorts = []string{skMeta, "head", "index", "status", "config"}

// getDocs reads the documents sks of id in one action list. A document that
// does not exist is nil.
func (d *Driver) getDocs(ctx context.Context, id model.ID, sks []string) ([]*document, error) {
	docs := make([]*document, len(sks))
	al := d.coll.Actions()
	for i, sk := range sks {
		docs[i] = keyDoc(id, sk)
		al.Get(docs[i])
	}
	for i, err := range actionErrors(al.Do(ctx), len(sks)) {
		switch gcerrors.Code(err) {
		case gcerrors.OK:
		case gcerrors.NotFound:
			docs[i] = nil
		default:
			return nil, fmt.Errorf("docstore: read %s %s: %w", id, sks[i], classify(ctx, err))
		}
	}
	return docs, nil
}

// live returns meta's error: ErrNotFound unless meta is a live meta document.
func live(id model.ID, meta *document) error {
	if meta == nil || meta.State != stateLive {
		return fmt.Errorf("docstore: %w: %s", model.ErrNotFound, id)
	}
	return nil
}

// Get implements driver.Driver.
func (d *Driver) Get(ctx context.Context, id model.ID) (*model.Record, error) {
	if err := d.begin(ctx); err != nil {
		return nil, err
	}
	var err error
	for attempt := range readAttempts {
		var docs []*document
		if docs, err = d.getDocs(ctx, id, allSorts); err != nil {
			return nil, err
		}
		var rec *model.Record
		if rec, err = assemble(id, docs); !errors.Is(err, errTorn) {
			return rec, err
		}
		pause(ctx, attempt)
	}
	return nil, fmt.Errorf("docstore: %w: %v", model.ErrInternal, err)
}

// assemble builds the record from its documents, meta first then the
// concerns in model.Concerns order. It returns an error wrapping errTorn
// when a concern document is missing or of another generation.
func assemble(id model.ID, docs []*document) (*model.Record, error) {
	meta := docs[0]
	if err := live(id, meta); err != nil {
		return nil, err
	}
	mid, m, err := meta.meta()
	if err != nil {
		return nil, err
	}
	rec := &model.Record{ID: mid, Meta: m}
	for i, c := range model.Concerns {
		if !c.AppliesTo(m.Kind) {
			continue // a head document here is a leftover of an earlier ledger
		}
		cd := docs[i+1]
		if cd == nil {
			return nil, fmt.Errorf("record %s: %s document missing (meta generation %s): %w", id, c, meta.Gen, errTorn)
		}
		if cd.Gen != meta.Gen {
			return nil, fmt.Errorf("record %s: %s document of generation %s, meta of %s: %w", id, c, cd.Gen, meta.Gen, errTorn)
		}
		v, err := cd.value()
		if err != nil {
			return nil, err
		}
		rec.SetValue(c, v)
		if c == model.Status {
			rec.Retracted = cd.Retracted
		}
	}
	return rec, nil
}

// readConcern reads the meta document of id and the document of concern c
// of its generation, checking that the record is live. It returns an
// error wrapping ErrNotFound when the record does not exist or has no such
// concern.
func (d *Driver) readConcern(ctx context.Context, id model.ID, c model.Concern) (*document, *document, error) {
	for attempt := range readAttempts {
		docs, err := d.getDocs(ctx, id, []string{skMeta, c.String()})
		if err != nil {
			return nil, nil, err
		}
		meta, cd := docs[0], docs[1]
		if err := live(id, meta); err != nil {
			return nil, nil, err
		}
		if !c.AppliesTo(model.Kind(meta.Kind)) {
			return nil, nil, fmt.Errorf("docstore: %w: %s has no %s", model.ErrNotFound, id, c)
		}
		if cd != nil && cd.Gen == meta.Gen {
			return meta, cd, nil
		}
		pause(ctx, attempt) // read while it was purged and created again
	}
	return nil, nil, fmt.Errorf("docstore: %w: record %s: %s document missing or of another generation", model.ErrInternal, id, c)
}

// pause waits a little, more after each attempt, with jitter, or until ctx
// is done.
func pause(ctx context.Context, attempt int) {
	base := time.Millisecond << min(attempt, 5)
	_ = driverutil.Sleep(ctx, base+rand.N(base))
}
