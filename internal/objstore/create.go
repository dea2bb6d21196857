package objstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/branching"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/jsonld"
)

// Create implements driver.Driver with one write: the defining file, with
// IfAbsent, holding the initial value of every concern and a new random
// incarnation token (f:incarnation). Files of the record's other concerns
// are only written by later pushes, each carrying that token; a file at
// their keys with another token is debris of an earlier record of the ID,
// which readers ignore and the first push replaces. A create that finds a
// purge's mark at the key replaces the mark, conditional on its tag: only
// conditional writes decide which of racing creates wins, never a delete.
// A create that finds a record writes nothing: an error wrapping
// ErrAlreadyExists (a/b:main and a:b/main share ns@v2/a/b/main.json; the
// error does not name the other).
func (r *Records) Create(ctx context.Context, rec *driver.Record) error {
	if err := r.begin(ctx); err != nil {
		return err
	}
	files, err := r.files(rec.ID)
	if err != nil {
		return err
	}
	if err := rec.Validate(); err != nil {
		return fmt.Errorf("%s: create: %w", r.cfg.Name, err)
	}
	return r.writeDefining(ctx, rec, files[0], token(), time.Time{})
}

// allParts are the parts a create writes into the defining file.
const allParts = jsonld.Identity | jsonld.HeadPart | jsonld.IndexPart | jsonld.StatusPart | jsonld.ConfigPart

// writeDefining creates the defining file: with IfAbsent, or over a
// purge's mark on the mark's tag. A write that did not land (the key
// changed meanwhile, or a lost answer that reading back shows never
// landed) is decided again from a fresh read: only a record that is really
// there makes the create fail with ErrAlreadyExists. The token makes the
// bytes unique to this create, so reading back tells our write from
// another's. tok is the new record's incarnation token. A create of a
// branch gives a deadline (see CreateBranch): it sends no write after it,
// and gives up when it finds a mark holding its own token (a settler's
// fence).
func (r *Records) writeDefining(ctx context.Context, rec *driver.Record, f layout.File, tok string, deadline time.Time) error {
	data, err := jsonld.Encode(rec, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Parts: allParts, Incarnation: tok})
	if err != nil {
		return fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
	}
	pc, collecting := ifAbsent(), false
	for attempt := range maxAttempts {
		if err := r.backoff(ctx, attempt); err != nil {
			return err
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return fmt.Errorf("%s: create %s: %w: %s could not be written within %v of recording the branch in its source", r.cfg.Name, rec.ID, driver.ErrUnavailable, f.Key, branching.CreateWindow)
		}
		done, err := r.writeCAS(ctx, rec.ID, f, pc, data)
		if err != nil || done {
			return err
		}
		if pc, collecting, err = r.createOver(ctx, rec.ID, f.Key, tok); err != nil {
			return err
		}
	}
	if collecting {
		return fmt.Errorf("%s: create %s: %w: a collector (ns gc) is removing what a purge left at %s; try again", r.cfg.Name, rec.ID, driver.ErrUnavailable, f.Key)
	}
	return fmt.Errorf("%s: create %s: %w: %s could not be written in %d attempts", r.cfg.Name, rec.ID, driver.ErrUnavailable, f.Key, maxAttempts)
}

// createOver reads the defining file after a create's write did not land
// and returns the precondition of the next attempt: IfAbsent when the key
// is free, the tag of a purge's mark (replaced, never deleted), or an error
// wrapping ErrAlreadyExists when it holds a record. A mark a collector is
// removing (see Collect) is not replaced but waited for: collecting is set,
// and IfAbsent fails until the collector has removed it.
func (r *Records) createOver(ctx context.Context, id driver.ID, key, tok string) (pc Precondition, collecting bool, err error) {
	obj, err := r.get(ctx, key)
	if err != nil || obj == nil {
		return ifAbsent(), false, err
	}
	doc, err := jsonld.Decode(obj.data)
	switch {
	case err != nil:
		return Precondition{}, false, fmt.Errorf("%s: create %s: %s: %w", r.cfg.Name, id, r.object(key), err)
	case doc.Purged && doc.Incarnation == tok:
		return Precondition{}, false, fmt.Errorf("%s: create %s: %w: the branch's create was settled as failed while it was held up", r.cfg.Name, id, driver.ErrUnavailable)
	case doc.Purged && collectingNow(doc):
		return ifAbsent(), true, nil
	case doc.Purged:
		return ifMatch(obj.tag), false, nil
	}
	if err := r.owner(id, key, doc); errors.Is(err, errOtherID) {
		return Precondition{}, false, fmt.Errorf("%s: create %s: %w: %s holds another ID that maps to the same file", r.cfg.Name,
			id, driver.ErrAlreadyExists, r.object(key))
	} else if err != nil {
		return Precondition{}, false, err
	}
	return Precondition{}, false, fmt.Errorf("%s: create: %w: %s", r.cfg.Name, driver.ErrAlreadyExists, id)
}

// Delete implements driver.Driver with conditional writes only: it reads
// the record's files in parallel and seals each of the others (rewrites it
// conditional on its tag with f:purged and f:purgedAt added, its value
// kept, or, where there is none or it is debris of another record, writes
// a bare tombstone with the record's token, IfAbsent or on the debris'
// tag). Then it replaces the defining file, conditional on its tag, by a
// mark (see mark): the record is gone from then on. Until then readers
// still see every value; a push meeting a sealed file waits for the purge
// (a writer with a cached tag meets the failed precondition first), so
// nothing is written to the record once sealed. A purge that stops after
// sealing leaves the record readable but its sealed concerns refuse pushes
// (ErrUnavailable) until a purge runs again. Nothing is deleted: the mark
// and the sealed files stay until Collect removes them. A record without a
// token (written by Fluree or an older version) has its defining file
// marked first and its other files sealed after, each on the tag it was
// read at. A defining file holding another ID's record is not touched
// (ErrNotFound: no record of this ID); one that does not decode is marked,
// so a corrupt record can be purged.
func (r *Records) Delete(ctx context.Context, id driver.ID) error {
	if err := r.begin(ctx); err != nil {
		return err
	}
	return r.purge(ctx, id, nil)
}

// purge is Delete. When check is not nil it is called with each read of the
// defining file (nil when it does not decode) before anything is written,
// and its error stops the purge: the mark is then conditional on a file
// check accepted.
func (r *Records) purge(ctx context.Context, id driver.ID, check func(*jsonld.File) error) error {
	files, err := r.files(id)
	if err != nil {
		return err
	}
	defer r.cache.drop(keys(files)...)
	first := ""
	for attempt := range maxAttempts {
		if err := r.backoff(ctx, attempt); err != nil {
			return err
		}
		objs, err := r.readObjects(ctx, keys(files))
		if err != nil {
			return err
		}
		def, err := r.purgeable(id, files[0].Key, objs[0])
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(def); err != nil {
				return err
			}
		}
		tok := ""
		if def != nil {
			tok = def.Incarnation
		}
		if attempt == 0 {
			first = tok
		} else if tok != first {
			// The record this purge set out to remove was purged by
			// another, and the ID created again: not ours to remove.
			return r.errNotFound(id)
		}
		if done, err := r.purgeOnce(ctx, id, def, files, objs); err != nil || done {
			return err
		}
	}
	return r.contended(id, driver.Status)
}

// purgeOnce purges the record whose files were read as objs (def is the
// defining file decoded, nil when it does not decode). done is false when
// a file changed meanwhile (read again).
func (r *Records) purgeOnce(ctx context.Context, id driver.ID, def *jsonld.File, files []layout.File, objs []*object) (bool, error) {
	if def == nil || def.Incarnation == "" {
		done, err := r.mark(ctx, id, files[0].Key, objs[0].tag, "")
		if done {
			r.sealRead(ctx, id, files[1:], objs[1:])
		}
		return done, err
	}
	sealed, err := r.seal(ctx, id, def, files[1:], objs[1:])
	if err != nil || !sealed {
		return false, err
	}
	return r.mark(ctx, id, files[0].Key, objs[0].tag, def.Incarnation)
}

// readObjects reads keys in parallel, without decoding; nil entries are
// absent objects.
func (r *Records) readObjects(ctx context.Context, keys []string) ([]*object, error) {
	out := make([]*object, len(keys))
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Go(func() { out[i], errs[i] = r.get(ctx, k) })
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// purgeable checks the defining file before a purge and returns it
// decoded: ErrNotFound when absent, a mark, or another ID's record; nil
// when it does not decode.
func (r *Records) purgeable(id driver.ID, key string, obj *object) (*jsonld.File, error) {
	if obj == nil {
		return nil, r.errNotFound(id)
	}
	c, err := r.decodeDoc(id, key, obj)
	switch {
	case errors.Is(err, jsonld.ErrMalformed):
		return nil, nil
	case errors.Is(err, errOtherID):
		return nil, r.errNotFound(id)
	case err != nil:
		return nil, err
	case c.doc.Purged:
		return nil, r.errNotFound(id)
	}
	return c.doc, nil
}

// mark replaces the defining file at tag by a purge's mark (its @id and
// token, f:purged, f:purgedAt): the record is gone from then on, and of
// purges racing for it exactly one wins this write. The mark stays: a
// reader takes it for an absent record, a create replaces it on its tag,
// and Collect removes it. done is false when the defining file changed
// meanwhile.
func (r *Records) mark(ctx context.Context, id driver.ID, key, tag, tok string) (bool, error) {
	data, err := r.tombstone(id, tok)
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", r.cfg.Name, key, err)
	}
	_, err = r.put(ctx, key, data, ifMatch(tag))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrPrecondition), errors.Is(err, ErrMissing):
		return false, nil
	case r.maybeApplied(err) && ctx.Err() == nil:
		obj, gerr := r.get(ctx, key)
		if gerr == nil && obj != nil && normTag(obj.tag) == normTag(tag) {
			return false, nil // it did not land
		}
		return false, fmt.Errorf("%s: purge %s: %w: outcome unknown: the answer was lost (%v) and the record is gone, by this purge or another", r.cfg.Name, id, driver.ErrUnavailable, err)
	}
	return false, err
}

// tombstone encodes a bare tombstone of id with token tok, timed now.
func (r *Records) tombstone(id driver.ID, tok string) ([]byte, error) {
	return jsonld.Encode(&driver.Record{ID: id}, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Incarnation: tok, Tombstone: true,
		PurgedAt: time.Now().UnixMilli()})
}

// sealRead replaces each existing file of objs by a tombstone without a
// token, conditional on the tag it was read at, once the defining file of
// a record without a token is marked: a later record written without a
// token (by Fluree) must not read them as its own. It is best effort: the
// record is gone already, and a file that changed meanwhile belongs to a
// record created since.
func (r *Records) sealRead(ctx context.Context, id driver.ID, files []layout.File, objs []*object) {
	data, err := r.tombstone(id, "")
	if err != nil {
		return
	}
	var wg sync.WaitGroup
	for i, f := range files {
		if objs[i] != nil {
			wg.Go(func() { _, _ = r.put(ctx, f.Key, data, ifMatch(objs[i].tag)) })
		}
	}
	wg.Wait()
}

// seal seals the other files of the record whose defining file is def, in
// parallel. ok is false when one of them changed meanwhile (read again).
func (r *Records) seal(ctx context.Context, id driver.ID, def *jsonld.File, files []layout.File, objs []*object) (bool, error) {
	oks := make([]bool, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Go(func() { oks[i], errs[i] = r.sealOne(ctx, id, def, f, objs[i]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return false, err
	}
	return !slices.Contains(oks, false), nil
}

// sealOne seals file f as read in obj; see Delete.
func (r *Records) sealOne(ctx context.Context, id driver.ID, def *jsonld.File, f layout.File, obj *object) (bool, error) {
	pc, rec := ifAbsent(), &driver.Record{ID: id}
	opts := jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Incarnation: def.Incarnation, Tombstone: true, PurgedAt: time.Now().UnixMilli()}
	if obj != nil {
		pc = ifMatch(obj.tag)
		if doc, err := jsonld.Decode(obj.data); err == nil && belongs(def, doc) {
			if doc.Purged {
				return true, nil
			}
			if rec, err = jsonld.Assemble(id, def, doc); err != nil {
				return false, fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
			}
			opts.Parts, opts.Prev = f.Parts, doc
		}
	}
	data, err := jsonld.Encode(rec, opts)
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
	}
	_, err = r.put(ctx, f.Key, data, pc)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrPrecondition), errors.Is(err, ErrMissing), r.maybeApplied(err) && ctx.Err() == nil:
		return false, nil // the next read shows what is there now
	}
	return false, err
}
