package docstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"gocloud.dev/gcerrors"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/branching"
	"nameservice.dev/nameservice/model"
)

// StaleAfter is how long, unless Config.StaleAfter says otherwise, a meta
// document may stay in state creating before another creator may remove
// it: a creator that died half-way holds its ID no longer than this.
// Creators' clocks must agree to well within it.
const StaleAfter = 30 * time.Second

// cleanupTimeout bounds the removal of a failed creation's documents.
const cleanupTimeout = 10 * time.Second

// Create implements driver.Driver. It claims the ID by creating the meta
// document in state creating, creates the concern documents, and commits the
// meta document to live with its revision. Readers see the record only once
// it is live; a creation that fails removes, by revision, what it wrote.
// The record's generation is the create's write ID (driver.WriteOf), so
// that any process can tell the record it made.
func (d *Driver) Create(ctx context.Context, rec *model.Record) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	w := driver.WriteOf(ctx)
	if !w.Resend {
		return d.create(ctx, rec, w.ID, time.Time{})
	}
	// A resend is resolved without writing: a meta document of its
	// generation, live or marked by a purge since, means the create landed.
	// Anything else is an unknown outcome: the earlier attempt, in another
	// process, may still be at work, may have died half-way, or may have
	// created a record that was purged since.
	what := "create " + rec.ID.String()
	meta, err := d.getOne(ctx, keyDoc(rec.ID, skMeta))
	switch {
	case err != nil:
		return outcomeUnknown(ctx, what, "the write is a resend, and reading the record failed: %v", err)
	case meta != nil && meta.Gen == w.ID && meta.State != stateCreating:
		return nil
	}
	return outcomeUnknown(ctx, what, "the write is a resend, and the record is not one it created: this process cannot tell whether an earlier attempt is still at work, or created a record purged since")
}

// create is Create with the record's generation gen. A create of a branch
// gives a deadline (internal/branching): it claims and commits only before
// it, and otherwise removes what it wrote.
func (d *Driver) create(ctx context.Context, rec *model.Record, gen string, deadline time.Time) error {
	meta := metaDoc(rec, gen, time.Now().UnixMilli())
	if err := d.claim(ctx, meta, deadline); err != nil {
		return err
	}
	docs, err := d.createConcerns(ctx, rec, meta)
	if err == nil {
		err = late(rec.ID, deadline)
	}
	if err == nil {
		err = d.commit(ctx, meta)
	}
	// A commit whose outcome is unknown may have made the record live:
	// removing its documents then would tear it. What stays, if it did not
	// land, is an invisible claim the next creator takes over once stale.
	if err != nil && !errors.Is(err, model.ErrOutcomeUnknown) {
		d.rollback(ctx, meta, docs)
	}
	return err
}

// late returns an error wrapping ErrUnavailable once deadline (when set)
// has passed.
func late(id model.ID, deadline time.Time) error {
	if deadline.IsZero() || time.Now().Before(deadline) {
		return nil
	}
	return fmt.Errorf("docstore: create %s: %w: not done within %v of recording the branch in its source", id, model.ErrUnavailable, branching.CreateWindow)
}

// claim creates meta, in state creating, and sets its revision. When another
// meta document holds the ID it returns ErrAlreadyExists if that one is live,
// waits while it is being created, and removes it once it is stale.
func (d *Driver) claim(ctx context.Context, meta *document, deadline time.Time) error {
	id := meta.PK
	for attempt := 0; ; attempt++ {
		if err := late(model.ID{Name: meta.Name, Branch: meta.Branch}, deadline); err != nil {
			return err
		}
		meta.CreatingMS = time.Now().UnixMilli() // the claim's age counts from when it is made
		err := d.coll.Create(ctx, meta)
		if err == nil {
			return nil
		}
		if gcerrors.Code(err) != gcerrors.AlreadyExists && !retryable(ctx, err) {
			return fmt.Errorf("docstore: create %s: %w", id, classify(ctx, err))
		}
		cur, err := d.getOne(ctx, meta)
		switch {
		case err != nil:
			return err
		case cur == nil: // deleted meanwhile: try again
		case cur.Gen == meta.Gen && cur.State == stateCreating: // ours, whose answer was lost
			meta.Rev, meta.CreatingMS = cur.Rev, cur.CreatingMS
			return nil
		case cur.State == stateLive:
			return fmt.Errorf("docstore: %w: %s", model.ErrAlreadyExists, id)
		case time.Now().UnixMilli()-cur.CreatingMS > d.staleAfter.Milliseconds():
			_ = d.coll.Delete(ctx, cur) // by revision: only if still that stale claim
		default:
			pause(ctx, attempt) // another creator is at work: wait for its outcome
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("docstore: create %s: %w", id, err)
		}
	}
}

// getOne reads the document with the keys of like. It returns nil when
// there is none.
func (d *Driver) getOne(ctx context.Context, like *document) (*document, error) {
	doc := &document{Key: like.Key, PK: like.PK, SK: like.SK}
	err := d.coll.Get(ctx, doc)
	switch gcerrors.Code(err) {
	case gcerrors.OK:
		return doc, nil
	case gcerrors.NotFound:
		return nil, nil
	}
	return nil, fmt.Errorf("docstore: read %s %s: %w", like.PK, like.SK, classify(ctx, err))
}

// createConcerns creates the concern documents of rec under the generation
// of claim, the creation's meta document. A document already there is a
// leftover of an earlier record or of a failed creation: it is removed by
// revision and the create tried again. It returns the documents, with the
// revisions of those it created.
func (d *Driver) createConcerns(ctx context.Context, rec *model.Record, claim *document) ([]*document, error) {
	var docs []*document
	for _, c := range model.Concerns {
		if rec.Value(c) == nil {
			continue
		}
		doc := keyDoc(rec.ID, c.String())
		doc.Gen, doc.Retracted = claim.Gen, c == model.Status && rec.Retracted
		if err := doc.setValue(*rec.Value(c)); err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
	pending := docs
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt == writeAttempts {
			return docs, gaveUp(ctx, "create "+rec.ID.String(), nil, nil)
		}
		var err error
		if pending, err = d.createDocs(ctx, claim, pending); err != nil {
			return docs, err
		}
	}
	return docs, nil
}

// stillClaimed returns an error wrapping ErrUnavailable unless claim, the
// meta document of a creation, is still there, of its generation and
// creating: another creator may have taken a stale claim over.
func (d *Driver) stillClaimed(ctx context.Context, claim *document) error {
	cur, err := d.getOne(ctx, claim)
	if err != nil {
		return err
	}
	if cur == nil || cur.Gen != claim.Gen || cur.State != stateCreating {
		return fmt.Errorf("docstore: create %s: %w: the creation took longer than %v and another creator took the ID over", claim.PK, model.ErrUnavailable, d.staleAfter)
	}
	return nil
}

// createDocs creates docs, of the generation of claim, at once and returns
// those to create again. A leftover is removed only once the claim is
// found still there after the leftover was read: a creator that takes a
// stale claim over removes it before it writes documents of its own, so
// the leftover read is not one of them (a creation slowed past StaleAfter
// would otherwise remove the new creator's documents under its live
// record).
func (d *Driver) createDocs(ctx context.Context, claim *document, docs []*document) ([]*document, error) {
	gen := claim.Gen
	al := d.coll.Actions()
	for _, doc := range docs {
		al.Create(doc)
	}
	var again []*document
	for i, err := range actionErrors(al.Do(ctx), len(docs)) {
		if err == nil {
			continue
		}
		if gcerrors.Code(err) != gcerrors.AlreadyExists && !retryable(ctx, err) {
			return nil, fmt.Errorf("docstore: create %s %s: %w", docs[i].PK, docs[i].SK, classify(ctx, err))
		}
		cur, err := d.getOne(ctx, docs[i])
		if err != nil {
			return nil, err
		}
		if cur != nil && cur.Gen == gen {
			docs[i].Rev = cur.Rev // ours: the answer was lost
			continue
		}
		if cur != nil {
			if err := d.stillClaimed(ctx, claim); err != nil {
				return nil, err
			}
			_ = d.coll.Delete(ctx, cur) // a leftover; by revision
		}
		again = append(again, docs[i])
	}
	return again, nil
}

// commit turns the claimed meta document live, by revision: the moment the
// record starts to exist. After a lost answer it reads the meta document: of
// its generation and still creating, the commit has not landed (a live meta
// document never returns to creating) and is sent again; of its generation
// and live or purging, it landed; gone or of another generation, the record
// may have been created and purged since, and the outcome is unknown.
func (d *Driver) commit(ctx context.Context, meta *document) error {
	what := "create " + meta.PK
	next := *meta
	next.State, next.CreatingMS = stateLive, 0
	var lost error // the first lost answer
	for attempt := range writeAttempts {
		err := d.coll.Replace(ctx, &next)
		switch {
		case err == nil:
			return nil
		case maybeApplied(ctx, err):
			lost = cmp.Or(lost, err)
		case !retryable(ctx, err) && lost != nil:
			return outcomeUnknown(ctx, what, "%v; sending the commit again failed: %v", lost, err)
		case !retryable(ctx, err):
			return fmt.Errorf("docstore: %s: %w", what, classify(ctx, err))
		}
		cur, err := d.getOne(ctx, meta)
		switch {
		case err != nil && lost != nil:
			return outcomeUnknown(ctx, what, "%v; reading the record back failed: %v", lost, err)
		case err != nil:
			return err
		case cur != nil && cur.Gen == meta.Gen && cur.State == stateCreating:
			next.Rev = cur.Rev
		case cur != nil && cur.Gen == meta.Gen:
			return nil // our commit landed; its answer was lost
		case lost != nil:
			return outcomeUnknown(ctx, what, "%v; the record has been purged, or purged and created again, since", lost)
		default:
			return fmt.Errorf("docstore: %s: %w: the creation took longer than %v and another creator took the ID over", what, model.ErrUnavailable, d.staleAfter)
		}
		pause(ctx, attempt)
	}
	return gaveUp(ctx, what, lost, nil)
}

// rollback removes, by revision, the documents a failed creation wrote:
// the concern documents first, then the claim. What it cannot remove stays
// invisible and is cleaned up by the next creator of the ID.
func (d *Driver) rollback(ctx context.Context, meta *document, docs []*document) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	al := d.coll.Actions()
	n := 0
	for _, doc := range docs {
		if doc.Rev != nil {
			al.Delete(doc)
			n++
		}
	}
	if n > 0 {
		_ = al.Do(ctx)
	}
	if meta.Rev != nil {
		_ = d.coll.Delete(ctx, meta)
	}
}
