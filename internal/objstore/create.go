package objstore

import (
	"context"
	"errors"
	"fmt"
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
// file holds a record.
func (r *Records) checkFree(ctx context.Context, id driver.ID, key string) error {
	obj, err := r.get(ctx, key)
	if err != nil || obj == nil {
		return err
	}
	doc, err := jsonld.Decode(obj.data)
	if err != nil {
		return fmt.Errorf("%s: create %s: %s: %w", r.cfg.Name, id, key, err)
	}
	if doc.ID != "" && doc.ID != id.String() {
		return fmt.Errorf("%s: create %s: %w: %s holds record %q (their IDs map to one key)", r.cfg.Name,
			id, driver.ErrAlreadyExists, key, doc.ID)
	}
	return fmt.Errorf("%s: create: %w: %s", r.cfg.Name, driver.ErrAlreadyExists, id)
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
		if err := r.checkFree(ctx, rec.ID, f.Key); err != nil {
			return err
		}
	}
	return fmt.Errorf("%s: create %s: %w: %s could not be written in %d attempts", r.cfg.Name, rec.ID, driver.ErrUnavailable, f.Key, maxAttempts)
}

// Delete implements driver.Driver. It reads the record's files in
// parallel, removes the defining file conditional on its tag (the record
// is gone from then on), then writes a tombstone (f:purged, with the
// record's token) over each of the other files, conditional on the tag it
// read or absent: a writer holding a cached tag of one of them gets a
// failed precondition, reads again and finds the record gone, and a push
// that read the record just before cannot create the file afterwards. A
// record without a token (written by Fluree or an older version) has its
// other files removed instead. A defining file holding another record's
// @id is not removed (an error wrapping ErrInternal); one that does not
// decode is, so a corrupt record can be purged.
func (r *Records) Delete(ctx context.Context, id driver.ID) error {
	if err := r.begin(ctx); err != nil {
		return err
	}
	files, err := r.files(id)
	if err != nil {
		return err
	}
	defer r.cache.drop(keys(files)...)
	for attempt := range maxAttempts {
		if err := r.backoff(ctx, attempt); err != nil {
			return err
		}
		objs, err := r.readObjects(ctx, keys(files))
		if err != nil {
			return err
		}
		tok, err := r.purgeable(id, files[0].Key, objs[0])
		if err != nil {
			return err
		}
		done, err := r.deleteDefining(ctx, id, files[0].Key, objs[0].tag)
		if err != nil {
			return err
		}
		if done {
			r.fence(ctx, id, tok, files[1:], objs[1:])
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

// purgeable checks the defining file before a purge and returns its token:
// ErrNotFound when absent, ErrInternal when it holds another record. A
// file that does not decode has no token.
func (r *Records) purgeable(id driver.ID, key string, obj *object) (string, error) {
	if obj == nil {
		return "", r.errNotFound(id)
	}
	c, err := r.decodeDoc(id, key, obj)
	switch {
	case errors.Is(err, jsonld.ErrMalformed):
		return "", nil
	case err != nil:
		return "", err
	}
	return c.doc.Incarnation, nil
}

// deleteDefining removes the defining file at tag; done is false when it
// changed meanwhile.
func (r *Records) deleteDefining(ctx context.Context, id driver.ID, key, tag string) (bool, error) {
	err := r.del(ctx, key, ifMatch(tag))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrPrecondition):
		return false, nil
	case errors.Is(err, ErrMissing):
		return false, r.errNotFound(id)
	case r.maybeApplied(err) && ctx.Err() == nil:
		tag, herr := r.head(ctx, key)
		if herr != nil {
			return false, err
		}
		return tag == "", nil
	}
	return false, err
}

// fence makes the other files of a purged record harmless, in parallel:
// tombstones of token tok over them, or, without a token, their removal.
// It is best effort: the record is already gone, and a file it leaves is
// debris the next create of the ID ignores.
func (r *Records) fence(ctx context.Context, id driver.ID, tok string, files []layout.File, objs []*object) {
	var wg sync.WaitGroup
	for i, f := range files {
		if tok == "" {
			wg.Go(func() { _ = r.del(ctx, f.Key, Precondition{}) })
			continue
		}
		wg.Go(func() { r.tombstone(ctx, id, tok, f, objs[i]) })
	}
	wg.Wait()
}

// tombstone writes a tombstone of token tok over file f, as read in obj. On
// a failed precondition it reads f again and stops unless f still holds a
// file of this record that is not a tombstone; any later writer with
// another token is a new record's.
func (r *Records) tombstone(ctx context.Context, id driver.ID, tok string, f layout.File, obj *object) {
	data, err := jsonld.Encode(&driver.Record{ID: id}, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Incarnation: tok, Tombstone: true})
	if err != nil {
		return
	}
	for range 4 {
		pc := ifAbsent()
		if obj != nil {
			pc = ifMatch(obj.tag)
		}
		if _, err := r.put(ctx, f.Key, data, pc); err == nil || ctx.Err() != nil {
			return
		}
		if obj, err = r.get(ctx, f.Key); err != nil {
			return
		}
		if obj != nil {
			doc, err := jsonld.Decode(obj.data)
			if err == nil && (doc.Incarnation != tok || doc.Purged) {
				return
			}
		}
	}
}
