package objstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"nameservice.dev/nameservice/internal/branching"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// Create implements driver.Driver with one write: the defining file, with
// IfAbsent, holding the initial value of every concern and an incarnation
// token (f:incarnation), the ID of the create's driver.Write, so that the
// write can be found again (see lost.go). Files of the record's other
// concerns are only written by later pushes, each carrying that token; a
// file at their keys with another token is debris of an earlier record of
// the ID, which readers ignore and the first push replaces. A create that
// finds a purge's mark at the key replaces the mark, conditional on its
// tag: only conditional writes decide which of racing creates wins, never
// a delete. A create that finds a record writes nothing: an error wrapping
// ErrAlreadyExists (a/b:main and a:b/main share ns@v2/a/b/main.json; the
// error does not name the other).
func (r *Records) Create(ctx context.Context, rec *model.Record) error {
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
	w, err := r.writeOf(ctx)
	if err != nil {
		return err
	}
	if w.Resend {
		return r.resent(ctx, rec.ID, files[0].Key, func(doc *jsonld.File) bool { return createdBy(doc, w.ID) })
	}
	return r.writeDefining(ctx, rec, files[0], w.ID, time.Time{})
}

// allParts are the parts a create writes into the defining file.
const allParts = jsonld.Identity | jsonld.HeadPart | jsonld.IndexPart | jsonld.StatusPart | jsonld.ConfigPart

// writeDefining creates the defining file: with IfAbsent, or over a
// purge's mark on the mark's tag. A write that did not land (the key
// changed meanwhile) is decided again from a fresh read: only a record
// that is really there makes the create fail with ErrAlreadyExists, and
// one holding tok (the new record's incarnation token) is this create's,
// landed before. A lost answer is resolved as lost.go says. A create of a
// branch gives a deadline (see CreateBranch): it sends no write after it,
// and gives up when it finds a mark holding its own token (a settler's
// fence).
func (r *Records) writeDefining(ctx context.Context, rec *model.Record, f layout.File, tok string, deadline time.Time) error {
	data, err := jsonld.Encode(rec, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Parts: allParts, Incarnation: tok})
	if err != nil {
		return fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
	}
	inTime := func() error {
		if !deadline.IsZero() && time.Now().After(deadline) {
			return fmt.Errorf("%s: create %s: %w: %s could not be written within %v of recording the branch in its source", r.cfg.Name, rec.ID, model.ErrUnavailable, f.Key, branching.CreateWindow)
		}
		return nil
	}
	over := overMark{pc: ifAbsent()}
	for attempt := range maxAttempts {
		if err := r.backoff(ctx, attempt); err != nil {
			return err
		}
		if err := inTime(); err != nil {
			return err
		}
		l, err := r.attempt(ctx, rec.ID, f.Key, over.pc, data)
		switch {
		case l == landed:
			return nil
		case l == lost:
			pc, mark := over.pc, over.mark
			s := &sent{id: rec.ID, key: f.Key, pc: pc, data: data, gate: inTime, settle: func(ctx context.Context, cause error) (bool, error) {
				return r.settleCreate(ctx, rec.ID, f.Key, tok, pc, mark, cause)
			}}
			return r.resolveLost(ctx, s, err)
		case err != nil:
			return err
		}
		if over, err = r.createOver(ctx, rec.ID, f.Key, tok); err != nil || over.landed {
			return err
		}
	}
	if over.collecting {
		return fmt.Errorf("%s: create %s: %w: a collector (ns gc) is removing what a purge left at %s; try again", r.cfg.Name, rec.ID, model.ErrUnavailable, f.Key)
	}
	return fmt.Errorf("%s: create %s: %w: %s could not be written in %d attempts", r.cfg.Name, rec.ID, model.ErrUnavailable, f.Key, maxAttempts)
}

// settleCreate reads back the defining file of a create whose answer was
// lost: it landed when the file holds its token (the record, or the mark
// of its purge); it may be sent again when the file is still the mark it
// was to replace. An absent file proves nothing: the create may have
// landed and been purged, and a collector removed the mark.
func (r *Records) settleCreate(ctx context.Context, id model.ID, key, tok string, pc Precondition, mark *jsonld.File, cause error) (bool, error) {
	now, err := r.readBack(ctx, id, key, cause)
	switch {
	case err != nil:
		return false, err
	case now != nil && createdBy(now.doc, tok):
		r.found(key, now)
		return true, nil
	case pc.Tag != "" && r.holds(now, pc, mark):
		return false, nil
	case now == nil:
		return false, r.unknown(key, "the answer was lost (%v), and the file is absent: a purge and a collector (ns gc) may have removed what the create wrote", cause)
	}
	return false, r.unknown(key, "the answer was lost (%v), and another create or a purge has written the file since", cause)
}

// overMark is what a create does next after a write that did not land:
// write with pc (IfAbsent, or over a purge's mark, read as mark), wait
// for a collector, or nothing, since its record is there (landed).
type overMark struct {
	pc         Precondition
	mark       *jsonld.File
	collecting bool
	landed     bool
}

// createOver reads the defining file after a create's write did not land
// and returns what to do next: write with IfAbsent when the key is free,
// or on the tag of a purge's mark (replaced, never deleted); nothing when
// the file holds tok (this create landed before); an error wrapping
// ErrAlreadyExists when it holds a record. A mark a collector is removing
// (see Collect) is not replaced but waited for: collecting is set, and
// IfAbsent fails until the collector has removed it.
func (r *Records) createOver(ctx context.Context, id model.ID, key, tok string) (overMark, error) {
	obj, err := r.get(ctx, key)
	if err != nil || obj == nil {
		return overMark{pc: ifAbsent()}, err
	}
	doc, err := jsonld.Decode(obj.data)
	switch {
	case err != nil:
		return overMark{}, fmt.Errorf("%s: create %s: %s: %w", r.cfg.Name, id, r.object(key), err)
	case ownedBy(doc, id) && createdBy(doc, tok):
		return overMark{landed: true}, nil
	case doc.Purged && doc.Incarnation == tok:
		return overMark{}, fmt.Errorf("%s: create %s: %w: the branch's create was settled as failed while it was held up", r.cfg.Name, id, model.ErrUnavailable)
	case doc.Purged && collectingNow(doc):
		return overMark{pc: ifAbsent(), collecting: true}, nil
	case doc.Purged:
		return overMark{pc: ifMatch(obj.tag), mark: doc}, nil
	}
	if err := r.owner(id, key, doc); errors.Is(err, errOtherID) {
		return overMark{}, fmt.Errorf("%s: create %s: %w: %s holds another ID that maps to the same file", r.cfg.Name,
			id, model.ErrAlreadyExists, r.object(key))
	} else if err != nil {
		return overMark{}, err
	}
	return overMark{}, fmt.Errorf("%s: create: %w: %s", r.cfg.Name, model.ErrAlreadyExists, id)
}

// Delete implements driver.Driver with conditional writes only: it reads
// the record's files in parallel and seals each of the others (rewrites it
// conditional on its tag with f:purged and f:purgedAt added, its value
// kept, or, where there is none or it is debris of another record, writes
// a bare tombstone with the record's token, IfAbsent or on the debris'
// tag). A file of another token is debris only when the defining file,
// read again after it, still holds the record: a read that came back late
// may hold a file of a record created since, which is left alone. Then it
// replaces the defining file, conditional on its tag, by a mark (see
// mark): the record is gone from then on. Until then readers still see
// every value; a push meeting a sealed file waits for the purge, up to
// purgeWait (a writer with a cached tag meets the failed precondition first), so
// nothing is written to the record once sealed. A purge that stops after
// sealing leaves the record readable but its sealed concerns refuse pushes
// (ErrUnavailable) until a purge runs again. Nothing is deleted: the mark
// and the sealed files stay until Collect removes them. A record without a
// token (written by Fluree or an older version) has its defining file
// marked first and its other files sealed after, each on the tag it was
// read at. A defining file holding another ID's record is not touched
// (ErrNotFound: no record of this ID); one that does not decode is marked,
// so a corrupt record can be purged.
func (r *Records) Delete(ctx context.Context, id model.ID) error {
	if err := r.begin(ctx); err != nil {
		return err
	}
	return r.purge(ctx, id, nil)
}

// purge is Delete. When check is not nil it is called with each read of the
// defining file (nil when it does not decode) before anything is written,
// and its error stops the purge: the mark is then conditional on a file
// check accepted. The mark records the write's entry (see lost.go); once a
// seal's answer was lost, finding the record gone or created again is an
// error wrapping model.ErrOutcomeUnknown rather than ErrNotFound.
func (r *Records) purge(ctx context.Context, id model.ID, check func(*jsonld.File) error) error {
	files, err := r.files(id)
	if err != nil {
		return err
	}
	w, err := r.writeOf(ctx)
	if err != nil {
		return err
	}
	entry := purgeEntry(w)
	if w.Resend {
		return r.resent(ctx, id, files[0].Key, func(doc *jsonld.File) bool { return doc.Purged && hasEntry(doc, entry) })
	}
	defer r.cache.drop(keys(files)...)
	first, unsure := "", false
	gone := func(err error) error {
		if unsure && errors.Is(err, model.ErrNotFound) {
			return r.unknown(files[0].Key, "a seal's answer was lost, and the record was purged by another meanwhile")
		}
		return err
	}
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
			return gone(err)
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
			return gone(r.errNotFound(id))
		}
		done, lostSeal, err := r.purgeOnce(ctx, id, def, files, objs, entry)
		unsure = unsure || lostSeal
		if err != nil || done {
			return err
		}
	}
	return r.contended(id, model.Status)
}

// purgeOnce purges the record whose files were read as objs (def is the
// defining file decoded, nil when it does not decode). done is false when
// a file changed meanwhile (read again); lostSeal is set when a seal's
// answer was lost.
func (r *Records) purgeOnce(ctx context.Context, id model.ID, def *jsonld.File, files []layout.File, objs []*object, entry string) (done, lostSeal bool, err error) {
	if def == nil || def.Incarnation == "" {
		done, err := r.mark(ctx, id, files[0].Key, objs[0].tag, def, entry)
		if done {
			r.sealRead(ctx, id, files[1:], objs[1:])
		}
		return done, false, err
	}
	if strangers(def, objs[1:]) {
		// The files were read in parallel, and one read may come back
		// long after the others (the SDK retrying it): a file of another
		// token is debris of an earlier record only if the defining
		// file, read again after it, is still def's record. Otherwise it
		// may be the value of a record created since the defining file
		// was read, which a seal (a tombstone over it) would erase.
		same, err := r.sameIncarnation(ctx, id, files[0].Key, &cached{doc: def})
		if err != nil || !same {
			return false, false, err
		}
	}
	sealed, lostSeal, err := r.seal(ctx, id, def, files[1:], objs[1:])
	if err != nil || !sealed {
		return false, lostSeal, err
	}
	done, err = r.mark(ctx, id, files[0].Key, objs[0].tag, def, entry)
	return done, lostSeal, err
}

// strangers reports whether objs hold a file that is not part of the
// record whose defining file is def: one of another token, or one that
// does not decode.
func strangers(def *jsonld.File, objs []*object) bool {
	for _, o := range objs {
		if o == nil {
			continue
		}
		if doc, err := jsonld.Decode(o.data); err != nil || !belongs(def, doc) {
			return true
		}
	}
	return false
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
func (r *Records) purgeable(id model.ID, key string, obj *object) (*jsonld.File, error) {
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

// mark replaces the defining file at tag (def, decoded; nil when it does
// not decode) by a purge's mark (its @id and token, f:purged, f:purgedAt
// and the purge's entry): the record is gone from then on, and of purges
// racing for it exactly one wins this write. The mark stays: a reader
// takes it for an absent record, a create replaces it on its tag, and
// Collect removes it. done is false when the defining file changed
// meanwhile. A lost answer is resolved as lost.go says.
func (r *Records) mark(ctx context.Context, id model.ID, key, tag string, def *jsonld.File, entry string) (bool, error) {
	tok := ""
	if def != nil {
		tok = def.Incarnation
	}
	data, err := r.tombstone(id, tok, entry)
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", r.cfg.Name, key, err)
	}
	pc := ifMatch(tag)
	l, err := r.attempt(ctx, id, key, pc, data)
	if l != lost {
		return l == landed, err
	}
	s := &sent{id: id, key: key, pc: pc, data: data, settle: func(ctx context.Context, cause error) (bool, error) {
		now, err := r.readBack(ctx, id, key, cause)
		switch {
		case err != nil:
			return false, err
		case now != nil && now.doc != nil && now.doc.Purged && hasEntry(now.doc, entry):
			return true, nil
		case r.holds(now, pc, def):
			return false, nil
		}
		return false, r.unknown(key, "the answer was lost (%v), and the record was written since, by another writer or purge", cause)
	}}
	err = r.resolveLost(ctx, s, err)
	return err == nil, err
}

// tombstone encodes a bare tombstone of id with token tok and the write
// entry (none when ""), timed now.
func (r *Records) tombstone(id model.ID, tok, entry string) ([]byte, error) {
	return jsonld.Encode(&model.Record{ID: id}, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Incarnation: tok, Tombstone: true,
		PurgedAt: time.Now().UnixMilli(), WriteID: entry})
}

// sealRead replaces each existing file of objs by a tombstone without a
// token, conditional on the tag it was read at, once the defining file of
// a record without a token is marked: a later record written without a
// token (by Fluree) must not read them as its own. It is best effort: the
// record is gone already, and a file that changed meanwhile belongs to a
// record created since.
func (r *Records) sealRead(ctx context.Context, id model.ID, files []layout.File, objs []*object) {
	data, err := r.tombstone(id, "", "")
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
// parallel. ok is false when one of them changed meanwhile (read again);
// unsure is set when a seal's answer was lost.
func (r *Records) seal(ctx context.Context, id model.ID, def *jsonld.File, files []layout.File, objs []*object) (ok, unsure bool, err error) {
	res := make([]landing, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Go(func() { res[i], errs[i] = r.sealOne(ctx, id, def, f, objs[i]) })
	}
	wg.Wait()
	if slices.Contains(res, lost) {
		return false, true, nil // the next read shows what is there now
	}
	if err := errors.Join(errs...); err != nil {
		return false, false, err
	}
	return !slices.Contains(res, refused), false, nil
}

// sealOne seals file f as read in obj; see Delete. A seal is the same
// whoever writes it, so one sealed already is as good as one this call
// wrote.
func (r *Records) sealOne(ctx context.Context, id model.ID, def *jsonld.File, f layout.File, obj *object) (landing, error) {
	pc, rec := ifAbsent(), &model.Record{ID: id}
	opts := jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Incarnation: def.Incarnation, Tombstone: true, PurgedAt: time.Now().UnixMilli()}
	if obj != nil {
		pc = ifMatch(obj.tag)
		if doc, err := jsonld.Decode(obj.data); err == nil && belongs(def, doc) {
			if doc.Purged {
				return landed, nil
			}
			if rec, err = jsonld.Assemble(id, def, doc); err != nil {
				return refused, fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
			}
			opts.Parts, opts.Prev = f.Parts, doc
		}
	}
	data, err := jsonld.Encode(rec, opts)
	if err != nil {
		return refused, fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
	}
	l, err := r.attempt(ctx, id, f.Key, pc, data)
	if l == lost {
		return lost, nil
	}
	return l, err
}
