package objstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// Create implements driver.Driver with one write: the defining file, with
// IfAbsent, holding every concern's initial value and an incarnation token
// (f:incarnation), the ID of the create's driver.Write. The other files
// are written by later pushes, each carrying that token; one with another
// token is debris of an earlier record of the ID, which readers ignore and
// the first push replaces. A purge's mark at the key is replaced on its
// tag, never deleted. A record at the key is an error wrapping
// ErrAlreadyExists (a/b:main and a:b/main share ns@v2/a/b/main.json).
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

const allParts = jsonld.Identity | jsonld.HeadPart | jsonld.IndexPart | jsonld.StatusPart | jsonld.ConfigPart

// writeDefining creates the defining file with token tok, with IfAbsent or
// over a purge's mark on its tag, deciding again from a fresh read after a
// write that did not land (createOver). A branch create gives a deadline
// (see CreateBranch): it sends no write after it, and gives up when it
// finds a mark holding its own token (a settler's fence).
func (r *Records) writeDefining(ctx context.Context, rec *model.Record, f layout.File, tok string, deadline time.Time) error {
	data, err := jsonld.Encode(rec, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Parts: allParts, Incarnation: tok})
	if err != nil {
		return fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
	}
	inTime := func() error {
		if !deadline.IsZero() && time.Now().After(deadline) {
			return fmt.Errorf("%s: create %s: %w: %s could not be written within %v of recording the branch in its source", r.cfg.Name, rec.ID, model.ErrUnavailable, f.Key, createWindow)
		}
		return nil
	}
	over := overMark{pc: IfAbsent()}
	for attempt := range maxAttempts {
		if err := r.backoff(ctx, attempt); err != nil {
			return err
		}
		if err := inTime(); err != nil {
			return err
		}
		pc, mark := over.pc, over.mark
		settle := func(ctx context.Context, cause error) (bool, error) {
			return r.settleCreate(ctx, rec.ID, f.Key, tok, pc, mark, cause)
		}
		done, err := r.send(ctx, &sent{id: rec.ID, key: f.Key, pc: pc, data: data, gate: inTime, settle: settle})
		if err != nil || done {
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
// lost: it landed when the file holds its token (the record, or its
// purge's mark); it may be sent again while the file is still the mark it
// was to replace. An absent file proves nothing: a purge and a collector
// may have removed what landed.
func (r *Records) settleCreate(ctx context.Context, id model.ID, key, tok string, pc Precondition, mark *jsonld.File, cause error) (bool, error) {
	now, done, err := r.readLanded(ctx, id, key, cause, func(d *jsonld.File) bool { return createdBy(d, tok) })
	switch {
	case err != nil || done:
		return done, err
	case pc.Tag != "" && r.holds(now, pc, mark):
		return false, nil
	case now == nil:
		return false, r.unknown(key, "the answer was lost (%v), and the file is absent: a purge and a collector (ns gc) may have removed what the create wrote", cause)
	}
	return false, r.unknown(key, "the answer was lost (%v), and another create or a purge has written the file since", cause)
}

// overMark is what a create does after a write that did not land: write
// with pc (over the purge's mark read as mark), wait for a collector, or
// nothing (landed).
type overMark struct {
	pc         Precondition
	mark       *jsonld.File
	collecting bool
	landed     bool
}

// createOver reads the defining file after a create's write did not land
// and returns what to do next: write with IfAbsent when the key is free or
// a collector's mark is there (collecting: wait for it), or on a purge's
// mark's tag; nothing when the file holds tok (landed before); an error
// wrapping ErrAlreadyExists when it holds a record.
func (r *Records) createOver(ctx context.Context, id model.ID, key, tok string) (overMark, error) {
	obj, err := r.get(ctx, key)
	if err != nil || obj == nil {
		return overMark{pc: IfAbsent()}, err
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
		return overMark{pc: IfAbsent(), collecting: true}, nil
	case doc.Purged:
		return overMark{pc: IfMatch(obj.tag), mark: doc}, nil
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
// on its tag with f:purged and f:purgedAt added, its value kept; a bare
// tombstone with the record's token where there is none or debris), then
// replaces the defining file, on its tag, by a mark: the record is gone
// from then on. A push meeting a sealed file waits for the purge, up to
// purgeWait; one that stops after sealing leaves those concerns refusing
// pushes (ErrUnavailable) until a purge runs again. Collect removes the
// mark and sealed files. A record without a token (Fluree's) is marked
// first and sealed after. A defining file holding another ID's record is
// not touched (ErrNotFound); one that does not decode is marked, so that a
// corrupt record can be purged.
func (r *Records) Delete(ctx context.Context, id model.ID) error {
	if err := r.begin(ctx); err != nil {
		return err
	}
	return r.purge(ctx, id, nil)
}

// purge is Delete; check, when not nil, is called with each read of the
// defining file (nil when it does not decode) before anything is written,
// and its error stops the purge. Once a seal's answer was lost, finding the
// record gone or created again is an error wrapping model.ErrOutcomeUnknown
// rather than ErrNotFound.
func (r *Records) purge(ctx context.Context, id model.ID, check func(*jsonld.File) error) error {
	files, err := r.files(id)
	if err != nil {
		return err
	}
	w, err := r.writeOf(ctx)
	if err != nil {
		return err
	}
	entry := w.ID + "@purge"
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
		// nil entries are absent objects; a doc is nil when it does not decode.
		objs, errs := parallel(keys(files), func(_ int, k string) (*cached, error) {
			o, err := r.get(ctx, k)
			if o != nil {
				o.doc, _ = jsonld.Decode(o.data)
			}
			return o, err
		})
		if err := cmp.Or(errs...); err != nil {
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
		switch {
		case attempt == 0:
			first = tok
		case tok == "" && first != "":
			// The token is gone: Fluree rewrote the defining file (its
			// writes drop it), or the record was purged and created again.
			// The record may be the one this purge has sealed files of.
			return r.unknown(files[0].Key, "the defining file lost its token while the purge ran (Fluree rewrote it, or the record was purged and created again); read the record, and purge it again if it is there")
		case tok != first:
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

// purgeOnce purges the record whose files were read as objs (def: the
// defining file decoded, nil when it does not decode). done is false when
// a file changed meanwhile; lostSeal is set when a seal's answer was lost.
func (r *Records) purgeOnce(ctx context.Context, id model.ID, def *jsonld.File, files []layout.File, objs []*cached, entry string) (done, lostSeal bool, err error) {
	if def == nil || def.Incarnation == "" {
		done, err := r.mark(ctx, id, files[0].Key, objs[0].tag, def, entry)
		if done {
			r.sealRead(ctx, id, files[1:], objs[1:])
		}
		return done, false, err
	}
	if strangers(def, objs[1:]) {
		// Parallel reads may come back far apart (an SDK retry): a file of
		// another token is debris only if the defining file, read again
		// now, is still def's record; else it may be a newer record's
		// value, which a seal would erase.
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

// strangers reports whether files hold one that is not part of def's
// record: of another token, or not decoded.
func strangers(def *jsonld.File, files []*cached) bool {
	return slices.ContainsFunc(files, func(c *cached) bool { return c != nil && !belongs(def, c.doc) })
}

// purgeable checks the defining file before a purge and returns it
// decoded: ErrNotFound when absent, a mark, or another ID's record; nil
// when it does not decode.
func (r *Records) purgeable(id model.ID, key string, obj *cached) (*jsonld.File, error) {
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
// not decode) by a purge's mark holding its @id and token and the purge's
// entry: of racing purges exactly one wins this write. done is false when
// the defining file changed meanwhile.
func (r *Records) mark(ctx context.Context, id model.ID, key, tag string, def *jsonld.File, entry string) (bool, error) {
	tok := ""
	if def != nil {
		tok = def.Incarnation
	}
	data, err := r.tombstone(id, tok, entry)
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", r.cfg.Name, key, err)
	}
	pc := IfMatch(tag)
	landed := func(d *jsonld.File) bool { return d.Purged && hasEntry(d, entry) }
	settle := r.settleOn(id, key, pc, def, landed)
	return r.send(ctx, &sent{id: id, key: key, pc: pc, data: data, settle: settle})
}

// tombstone encodes a bare tombstone of id with token tok and the write
// entry (none when ""), timed now.
func (r *Records) tombstone(id model.ID, tok, entry string) ([]byte, error) {
	return jsonld.Encode(&model.Record{ID: id}, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Incarnation: tok, Tombstone: true,
		PurgedAt: time.Now().UnixMilli(), WriteID: entry})
}

// sealRead replaces each existing file of objs by a tombstone without a
// token, on its tag, once the defining file of a record without a token is
// marked, so that a later record written without one (by Fluree) does not
// read them as its own. Best effort: a file that changed meanwhile is a
// later record's.
func (r *Records) sealRead(ctx context.Context, id model.ID, files []layout.File, objs []*cached) {
	data, err := r.tombstone(id, "", "")
	if err != nil {
		return
	}
	var wg sync.WaitGroup
	for i, f := range files {
		if objs[i] != nil {
			wg.Go(func() { _, _ = r.store.Put(ctx, f.Key, data, IfMatch(objs[i].tag)) })
		}
	}
	wg.Wait()
}

// seal seals the other files of def's record in parallel. ok is false when
// one of them changed meanwhile; unsure is set when an answer was lost.
func (r *Records) seal(ctx context.Context, id model.ID, def *jsonld.File, files []layout.File, objs []*cached) (ok, unsure bool, err error) {
	res, errs := parallel(files, func(i int, f layout.File) (landing, error) {
		return r.sealOne(ctx, id, def, f, objs[i])
	})
	if slices.Contains(res, lost) {
		return false, true, nil // the next read shows what is there now
	}
	if err := errors.Join(errs...); err != nil {
		return false, false, err
	}
	return !slices.Contains(res, refused), false, nil
}

// sealOne seals file f as read in obj (see Delete); one sealed already
// will do, since a seal is the same whoever writes it.
func (r *Records) sealOne(ctx context.Context, id model.ID, def *jsonld.File, f layout.File, obj *cached) (landing, error) {
	pc, rec := IfAbsent(), &model.Record{ID: id}
	opts := jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Incarnation: def.Incarnation, Tombstone: true, PurgedAt: time.Now().UnixMilli()}
	if obj != nil {
		pc = IfMatch(obj.tag)
		if doc := obj.doc; belongs(def, doc) {
			if doc.Purged {
				return landed, nil
			}
			var err error
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
