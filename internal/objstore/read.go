package objstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"

	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// readDoc reads and decodes one record file of id and caches it; nil when
// it is absent or holds another ID's record (a/b:main and a:b/main share a
// key). A file that does not decode is an error wrapping model.ErrInternal.
func (r *Records) readDoc(ctx context.Context, id model.ID, key string) (*cached, error) {
	obj, err := r.get(ctx, key)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		r.cache.drop(key)
		return nil, nil
	}
	c, err := r.decodeDoc(id, key, obj)
	if errors.Is(err, errOtherID) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r.cache.put(key, *c)
	return c, nil
}

// errOtherID: a file holds the record of another ID that maps to its key.
var errOtherID = errors.New("the file holds another ID's record")

func (r *Records) decodeDoc(id model.ID, key string, obj *cached) (*cached, error) {
	doc, err := jsonld.Decode(obj.data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", r.cfg.Name, r.object(key), err)
	}
	if err := r.owner(id, key, doc); err != nil {
		return nil, err
	}
	return &cached{tag: obj.tag, data: obj.data, doc: doc}, nil
}

// owner checks that doc, read at id's key, may be a file of id: when it is
// another ID's, errOtherID (wrapped) if that ID maps to the same key, and
// errMisplaced's error otherwise.
func (r *Records) owner(id model.ID, key string, doc *jsonld.File) error {
	if ownedBy(doc, id) {
		return nil
	}
	other, _, err := doc.RecordID()
	switch {
	case err != nil:
		return fmt.Errorf("%s: %s: %w", r.cfg.Name, r.object(key), err)
	case layout.Stem(other) != layout.Stem(id):
		return errMisplaced(r.cfg.Name, r.object(key), other)
	}
	return fmt.Errorf("%s: %s: %w", r.cfg.Name, r.object(key), errOtherID)
}

// errMisplaced is the error of the defining file obj holding record id, whose
// own file is another: a file copied or moved by hand. Reads, creates,
// purges and listings all give it.
func errMisplaced(name, obj string, id model.ID) error {
	return fmt.Errorf("%s: %s: %w: the file holds record %s, whose file is another (moved or copied by hand? move it back, or remove it)",
		name, obj, model.ErrInternal, id)
}

// ownedBy reports whether doc may be a file of id: it names id, or no ID.
func ownedBy(doc *jsonld.File, id model.ID) bool {
	return doc.ID == "" || doc.ID == id.String()
}

func (r *Records) cachedOf(id model.ID, key string) (cached, bool) {
	c, ok := r.cache.get(key)
	return c, ok && ownedBy(c.doc, id)
}

// docFor returns key's file from the cache, or reads it when fresh is set
// or the cache has none. ok is false when it is absent.
func (r *Records) docFor(ctx context.Context, id model.ID, key string, fresh bool) (*cached, error) {
	if !fresh {
		if c, ok := r.cachedOf(id, key); ok {
			return &c, nil
		}
	}
	return r.readDoc(ctx, id, key)
}

// readAll reads the given keys of id in parallel; entries are nil for
// absent files.
func (r *Records) readAll(ctx context.Context, id model.ID, keys []string) ([]*cached, error) {
	docs, errs := parallel(keys, func(_ int, k string) (*cached, error) { return r.readDoc(ctx, id, k) })
	return docs, cmp.Or(errs...)
}

// parallel calls fn on every element of in (and its index) at once and
// returns its results and errors in order.
func parallel[E, T any](in []E, fn func(int, E) (T, error)) ([]T, []error) {
	out, errs := make([]T, len(in)), make([]error, len(in))
	var wg sync.WaitGroup
	for i, e := range in {
		wg.Go(func() { out[i], errs[i] = fn(i, e) })
	}
	wg.Wait()
	return out, errs
}

func keys(files []layout.File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Key
	}
	return out
}

// load reads record id from all its files at once; nil when it does not
// exist. A record of this package has its token in every file written for
// it, and only a collector deletes files (of a record purged long enough),
// so a missing file is a concern never written in this incarnation, and a
// sealed one still holds its value. A file of another token is debris of
// an earlier record, or of a later one (the defining file read before a
// purge, the file after a re-create): the defining file is read again and
// must still hold the same token. A record without a token (Fluree's) gets
// the older check: a missing file is read again, then the defining file
// must still exist.
func (r *Records) load(ctx context.Context, id model.ID, files []layout.File) (*model.Record, error) {
	for range 3 {
		rec, stable, err := r.loadOnce(ctx, id, files)
		if err != nil || stable {
			return rec, err
		}
	}
	return nil, fmt.Errorf("%s: %w: record %s kept changing while being read", r.cfg.Name, model.ErrUnavailable, id)
}

func (r *Records) loadOnce(ctx context.Context, id model.ID, files []layout.File) (*model.Record, bool, error) {
	docs, err := r.readAll(ctx, id, keys(files))
	if err != nil || docs[0] == nil || docs[0].doc.Purged {
		return nil, true, err
	}
	if docs[0].doc.Incarnation == "" {
		if stable, err := r.recheckMissing(ctx, id, files, docs); err != nil || !stable {
			return nil, stable, err
		}
	}
	if strangers(docs[0].doc, docs[1:]) {
		if same, err := r.sameIncarnation(ctx, id, files[0].Key, docs[0]); err != nil || !same {
			return nil, false, err
		}
	}
	rec, err := r.assemble(id, files[0].Key, docs)
	return rec, true, err
}

// belongs reports whether non-defining file f is part of the record whose
// defining file is def: it carries def's token, or one of the two has none.
// Fluree writes whole files without the members it does not know: a new
// index file on every index publish, the main file without its token on
// every other write, so a file without a token beside one with a token is
// Fluree's write to the same record (it reads it so). A sealed file is read
// as debris unless it carries def's token, and a sealed file without a
// token is never written.
func belongs(def, f *jsonld.File) bool {
	switch {
	case f == nil:
		return false
	case f.Incarnation == def.Incarnation:
		return !(f.Purged && def.Incarnation == "")
	}
	return (f.Incarnation == "" || def.Incarnation == "") && !f.Purged
}

// sameIncarnation reads the defining file again and reports whether it
// still holds def's token.
func (r *Records) sameIncarnation(ctx context.Context, id model.ID, key string, def *cached) (bool, error) {
	now, err := r.readDoc(ctx, id, key)
	if err != nil || now == nil {
		return false, err
	}
	return now.doc.Incarnation == def.doc.Incarnation && !now.doc.Purged, nil
}

// assemble builds record id from its files as read (the defining file
// first, entries nil when absent), keeping only the files of the defining
// file's incarnation; nil when the defining file is a purge's mark.
func (r *Records) assemble(id model.ID, defKey string, docs []*cached) (*model.Record, error) {
	def := docs[0].doc
	if def.Purged {
		return nil, nil
	}
	others := make([]*jsonld.File, len(docs)-1)
	for i, c := range docs[1:] {
		if c != nil && belongs(def, c.doc) {
			others[i] = c.doc
		}
	}
	rec, err := jsonld.Assemble(id, def, others...)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", r.cfg.Name, defKey, err)
	}
	return rec, nil
}

// recheckMissing reads the missing non-defining files again (filling docs)
// and then reports whether the defining file still exists. Its tag may
// have changed (a concurrent push): that does not matter, only a delete in
// between would. It serves records without an incarnation token only.
func (r *Records) recheckMissing(ctx context.Context, id model.ID, files []layout.File, docs []*cached) (bool, error) {
	var missing []int
	var again []string
	for i, c := range docs {
		if c == nil {
			missing, again = append(missing, i), append(again, files[i].Key)
		}
	}
	if len(missing) == 0 {
		return true, nil
	}
	found, err := r.readAll(ctx, id, again)
	if err != nil {
		return true, err
	}
	for j, i := range missing {
		docs[i] = found[j]
	}
	tag, err := r.store.Head(ctx, files[0].Key)
	return err != nil || tag != "", err
}

// Get implements driver.Driver: every file of the record read in parallel
// (two reads in layout B, four in C). It returns an error wrapping
// ErrNotFound when the defining file is absent, and one wrapping
// ErrInternal, naming the key, when a file does not decode or holds another
// record's @id.
func (r *Records) Get(ctx context.Context, id model.ID) (*model.Record, error) {
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	files, err := r.files(id)
	if err != nil {
		return nil, err
	}
	rec, err := r.load(ctx, id, files)
	if err == nil && rec == nil {
		return nil, r.errNotFound(id)
	}
	return rec, err
}

func (r *Records) errNotFound(id model.ID) error {
	return fmt.Errorf("%s: %w: %s", r.cfg.Name, model.ErrNotFound, id)
}
