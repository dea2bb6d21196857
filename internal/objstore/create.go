package objstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/jsonld"
)

// Create implements driver.Driver with one write: the defining file, with
// IfAbsent, holding the initial value of every concern and a new random
// incarnation token (f:incarnation). Files of the record's other concerns
// are only written by later pushes, each carrying that token; a file at
// their keys with another token is debris of an earlier record of the ID,
// which readers ignore and the first push replaces. A create that finds
// the key taken writes nothing and reads the defining file to say who
// holds it: an error wrapping ErrAlreadyExists (a/b:main and a:b/main
// share ns@v2/a/b/main.json).
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
	return r.writeDefining(ctx, rec, files[0])
}

// allParts are the parts a create writes into the defining file.
const allParts = jsonld.Identity | jsonld.HeadPart | jsonld.IndexPart | jsonld.StatusPart | jsonld.ConfigPart

// checkFree returns an error wrapping ErrAlreadyExists when the defining
// file holds a record, and the tag of the defining file when it is a
// purge's mark (the ID is free).
func (r *Records) checkFree(ctx context.Context, id driver.ID, key string) (string, error) {
	obj, err := r.get(ctx, key)
	if err != nil || obj == nil {
		return "", err
	}
	doc, err := jsonld.Decode(obj.data)
	if err != nil {
		return "", fmt.Errorf("%s: create %s: %s: %w", r.cfg.Name, id, key, err)
	}
	if doc.ID != "" && doc.ID != id.String() {
		return "", fmt.Errorf("%s: create %s: %w: %s holds record %q (their IDs map to one key)", r.cfg.Name,
			id, driver.ErrAlreadyExists, key, doc.ID)
	}
	if doc.Purged {
		return obj.tag, nil
	}
	return "", fmt.Errorf("%s: create: %w: %s", r.cfg.Name, driver.ErrAlreadyExists, id)
}

// writeDefining creates the defining file with IfAbsent. A write that did
// not land (a failed precondition on a key a purge emptied meanwhile, or a
// lost answer that reading back shows never landed) is tried again while
// the key is still free: only a defining file that is really there makes
// the create fail with ErrAlreadyExists. The token makes the bytes unique
// to this create, so reading back tells our write from another's.
func (r *Records) writeDefining(ctx context.Context, rec *driver.Record, f layout.File) error {
	data, err := jsonld.Encode(rec, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Parts: allParts, Incarnation: token()})
	if err != nil {
		return fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
	}
	for attempt := range maxAttempts {
		if err := r.backoff(ctx, attempt); err != nil {
			return err
		}
		done, err := r.writeCAS(ctx, rec.ID, f, ifAbsent(), data)
		if err != nil || done {
			return err
		}
		mark, err := r.checkFree(ctx, rec.ID, f.Key)
		if err != nil {
			return err
		}
		if mark != "" {
			_ = r.del(ctx, f.Key, ifMatch(mark)) // a purge's mark it did not remove
		}
	}
	return fmt.Errorf("%s: create %s: %w: %s could not be written in %d attempts", r.cfg.Name, rec.ID, driver.ErrUnavailable, f.Key, maxAttempts)
}

// Delete implements driver.Driver. It reads the record's files in
// parallel and seals each of the others: rewrites it conditional on its tag
// with f:purged added (its value kept), or, where there is none or it is
// debris of another record, writes a bare tombstone with the record's
// token (IfAbsent, or on the debris' tag). Then it replaces the defining
// file, conditional on its tag, by a mark (see mark): the record is gone
// from then on. Until then readers still see every value; a push meeting
// a sealed file waits for the purge (a writer with a cached tag meets the
// failed precondition first), so nothing is written to the record once
// sealed. A purge that stops after sealing leaves the record readable but
// its sealed concerns refuse pushes (ErrUnavailable) until a purge runs
// again. A record without a token (written by Fluree or an older version)
// has its defining file removed first and the others after. A defining
// file holding another record's @id is not removed (an error wrapping
// ErrInternal); one that does not decode is, so a corrupt record can be
// purged.
func (r *Records) Delete(ctx context.Context, id driver.ID) error {
	if err := r.begin(ctx); err != nil {
		return err
	}
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
		if tok != "" {
			sealed, err := r.seal(ctx, id, def, files[1:], objs[1:])
			if err != nil || !sealed {
				if err != nil {
					return err
				}
				continue
			}
			done, err := r.mark(ctx, id, files[0].Key, objs[0].tag, tok)
			if err != nil || done {
				return err
			}
			continue
		}
		done, err := r.deleteDefining(ctx, id, files[0].Key, objs[0].tag, tok)
		if err != nil {
			return err
		}
		if done {
			r.deleteOthers(ctx, files[1:])
			return nil
		}
	}
	return r.contended(id, driver.Status)
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
// decoded: ErrNotFound when absent, ErrInternal when it holds another
// record; nil when it does not decode.
func (r *Records) purgeable(id driver.ID, key string, obj *object) (*jsonld.File, error) {
	if obj == nil {
		return nil, r.errNotFound(id)
	}
	c, err := r.decodeDoc(id, key, obj)
	switch {
	case errors.Is(err, jsonld.ErrMalformed):
		return nil, nil
	case err != nil:
		return nil, err
	case c.doc.Purged:
		return nil, r.errNotFound(id)
	}
	return c.doc, nil
}

// mark replaces the defining file at tag by a purge's mark (its @id and
// token, f:purged): the record is gone from then on, and of purges racing
// for it exactly one wins this write. The mark is then removed, best
// effort (a reader takes a mark for an absent record, a create replaces
// it). done is false when the defining file changed meanwhile.
func (r *Records) mark(ctx context.Context, id driver.ID, key, tag, tok string) (bool, error) {
	data, err := jsonld.Encode(&driver.Record{ID: id}, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Incarnation: tok, Tombstone: true})
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", r.cfg.Name, key, err)
	}
	newTag, err := r.put(ctx, key, data, ifMatch(tag))
	switch {
	case err == nil:
		_ = r.del(ctx, key, ifMatch(newTag))
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

// deleteDefining removes the defining file at tag, holding token tok; done
// is false when it changed meanwhile. A delete whose answer was lost is
// resolved by reading the key: absent, it landed; the same record (its
// token), it did not; another record means the ID was created again, maybe
// after our delete landed, maybe after another purge's: the outcome is
// unknown.
func (r *Records) deleteDefining(ctx context.Context, id driver.ID, key, tag, tok string) (bool, error) {
	err := r.del(ctx, key, ifMatch(tag))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrPrecondition):
		return false, nil
	case errors.Is(err, ErrMissing):
		return false, r.errNotFound(id)
	case r.maybeApplied(err) && ctx.Err() == nil:
		obj, gerr := r.get(ctx, key)
		if gerr != nil {
			return false, err
		}
		if obj == nil {
			return true, nil
		}
		if now, perr := r.purgeable(id, key, obj); perr != nil || now == nil || now.Incarnation != tok || tok == "" && normTag(obj.tag) != normTag(tag) {
			return false, fmt.Errorf("%s: purge %s: %w: outcome unknown: the delete's answer was lost (%v) and the ID holds another record now", r.cfg.Name, id, driver.ErrUnavailable, err)
		}
		return false, nil
	}
	return false, err
}

// deleteOthers removes the other files of a purged record without a
// token. It is best effort: the record is already gone.
func (r *Records) deleteOthers(ctx context.Context, files []layout.File) {
	var wg sync.WaitGroup
	for _, f := range files {
		wg.Go(func() { _ = r.del(ctx, f.Key, Precondition{}) })
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
	pc, rec, opts := ifAbsent(), &driver.Record{ID: id}, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Incarnation: def.Incarnation, Tombstone: true}
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
