package objstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// A record's branch bookkeeping (f:branches, f:branchOps) lives in its
// defining file, written on its tag like any other write (branching.go); a
// fence is a purge's mark holding the fenced create's token, which a create
// of that token gives up on (see writeDefining).

// CreateBranch implements driver.Brancher (branching.go).
func (r *Records) CreateBranch(ctx context.Context, rec *model.Record) (*model.Record, error) {
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	if _, err := r.files(rec.ID); err != nil {
		return nil, err
	}
	if err := rec.Validate(); err != nil {
		return nil, fmt.Errorf("%s: create branch: %w", r.cfg.Name, err)
	}
	if err := createBranch(ctx, r, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// DropBranch implements driver.Brancher (branching.go).
func (r *Records) DropBranch(ctx context.Context, id model.ID) error {
	if err := r.begin(ctx); err != nil {
		return err
	}
	return dropBranch(ctx, r, id)
}

// ResetHead implements driver.Brancher with resetHead: the index,
// then the head, each set by compare-and-set against the value read. An
// inline index in the defining file that would still win over the one set
// (the merge rule) is removed before the head is set.
func (r *Records) ResetHead(ctx context.Context, id model.ID, head model.Value, index *model.Value) (*model.Record, error) {
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	// resetHead calls fold only when index is set.
	fold := func(ctx context.Context) error { return r.dropInlineIndex(ctx, id, *index) }
	// resetHead's errors, from r's own reads and writes, name the driver and
	// the ID already.
	return resetHead(ctx, r, id, head, index, fold)
}

// dropInlineIndex rewrites the defining file of id without its inline
// index while that index, not index, is what readers merge (the inline
// one wins when its t is higher, and when index is unborn).
func (r *Records) dropInlineIndex(ctx context.Context, id model.ID, index model.Value) error {
	files, err := r.files(id)
	if err != nil {
		return err
	}
	f := files[0]
	for range maxAttempts {
		rec, err := r.Get(ctx, id)
		if err != nil || rec.Index.Equal(index) {
			return err
		}
		def, err := r.readDoc(ctx, id, f.Key)
		if err != nil || def == nil || def.doc.Index == nil {
			return r.orNotFound(err, id)
		}
		if _, err := r.writeWithoutIndex(ctx, id, f, def); err != nil {
			return err
		}
	}
	return r.contended(id, model.Index)
}

// readBook reads the bookkeeping of record id from its defining file,
// afresh: an error wrapping model.ErrNotFound when there is no such (live)
// record.
func (r *Records) readBook(ctx context.Context, id model.ID) (*book, error) {
	files, err := r.files(id)
	if err != nil {
		return nil, err
	}
	c, err := r.readDoc(ctx, id, files[0].Key)
	if err != nil || c == nil || c.doc.Purged {
		return nil, r.orNotFound(err, id)
	}
	rec, err := jsonld.Assemble(id, c.doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", r.cfg.Name, r.object(files[0].Key), err)
	}
	return &book{ID: id, Record: rec, Incarnation: c.doc.Incarnation, Ops: c.doc.BranchOps, Branches: rec.Branches, def: c}, nil
}

// writeBook rewrites the defining file b was read from, on its tag, with
// b's count and entries; done is false when the file changed meanwhile.
// After a lost answer it reads the file again: done when landed (nil:
// never) accepts its entries.
func (r *Records) writeBook(ctx context.Context, b *book, landed func([]jsonld.BranchOp) bool) (done bool, err error) {
	files, err := r.files(b.ID)
	if err != nil {
		return false, err
	}
	f, c := files[0], b.def
	rec, err := jsonld.Assemble(b.ID, c.doc)
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
	}
	rec.Branches = b.Branches
	data, err := jsonld.Encode(rec, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Parts: f.Parts, Prev: c.doc, BranchOps: &b.Ops})
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
	}
	tag, err := r.store.Put(ctx, f.Key, data, IfMatch(c.tag))
	switch {
	case err == nil:
		r.remember(b.ID, f.Key, tag, data)
		return true, nil
	case errors.Is(err, ErrPrecondition), errors.Is(err, ErrMissing),
		r.cfg.RetryThrottled && errors.Is(err, model.ErrThrottled):
		return false, nil
	case r.store.MaybeApplied(err) && ctx.Err() == nil:
		now, rerr := r.readDoc(ctx, b.ID, f.Key)
		done := rerr == nil && now != nil && !now.doc.Purged && landed != nil && landed(now.doc.BranchOps)
		return done, rerr
	}
	return false, err
}

// stateOf reads id's defining file, of which an entry names incarnation
// inc, and returns its state and, when live, its entries: live when a live
// record of inc, tokenless when one of no token (a branch's main file that
// Fluree rewrote: its writes drop the token, which every record of this
// package carries).
func (r *Records) stateOf(ctx context.Context, id model.ID, inc string) (branchState, []jsonld.BranchOp, error) {
	_, doc, err := r.defining(ctx, id)
	if err != nil || doc == nil || doc.Purged || !ownedBy(doc, id) || doc.Incarnation != inc && doc.Incarnation != "" {
		return gone, nil, err
	}
	if doc.Incarnation != inc {
		return tokenless, doc.BranchOps, nil
	}
	return live, doc.BranchOps, nil
}

// defining reads id's defining file, also decoded (nil when absent or not
// decodable).
func (r *Records) defining(ctx context.Context, id model.ID) (obj *cached, doc *jsonld.File, err error) {
	files, err := r.files(id)
	if err != nil {
		return nil, nil, err
	}
	if obj, err = r.get(ctx, files[0].Key); err != nil || obj == nil {
		return nil, nil, err
	}
	doc, _ = jsonld.Decode(obj.data)
	return obj, doc, nil
}

// fence writes a purge's mark holding inc where id's defining file would
// be, unless a record (or a collector's mark) is there: a create of inc
// that has not landed then gives up on it, or fails its precondition.
func (r *Records) fence(ctx context.Context, id model.ID, inc string) error {
	files, err := r.files(id)
	if err != nil {
		return err
	}
	for range maxAttempts {
		obj, doc, err := r.defining(ctx, id)
		if err != nil {
			return err
		}
		pc := IfAbsent()
		if obj != nil {
			if doc == nil || !doc.Purged || collectingNow(doc) || doc.Incarnation == inc {
				return nil // a record, or a mark no create replaces now
			}
			pc = IfMatch(obj.tag)
		}
		data, err := r.tombstone(id, inc, "")
		if err != nil {
			return err
		}
		if done, err := r.writeCAS(ctx, id, files[0], pc, data); err != nil || done {
			return err
		}
	}
	return r.contended(id, model.Status)
}

// createAs creates rec with incarnation inc, as Create does, sending no
// write after deadline, and failing (ErrUnavailable) once it meets a fence
// of inc (writeDefining).
func (r *Records) createAs(ctx context.Context, rec *model.Record, inc string, deadline time.Time) error {
	files, err := r.files(rec.ID)
	if err != nil {
		return err
	}
	return r.writeDefining(ctx, rec, files[0], inc, deadline)
}

// purgeChecked purges id (see Delete) while check accepts the entries of
// each read of its defining file.
func (r *Records) purgeChecked(ctx context.Context, id model.ID, check func([]jsonld.BranchOp) error) error {
	return r.purge(ctx, id, func(def *jsonld.File) error {
		if def == nil {
			return check(nil)
		}
		return check(def.BranchOps)
	})
}
