package objstore

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// maxAttempts bounds the read-compare-write loop of one operation under
// contention. Object stores sustain a few conditional writes per second per
// key (GCS about one), so a loop that keeps losing reports ErrUnavailable
// rather than spinning.
const maxAttempts = 16

// contendWait is the least time a push keeps trying while it loses to
// other writers, whatever maxAttempts says: in lock mode on a loaded
// machine a push lost sixteen times in about a second to writers that kept
// succeeding, which is contention, not an outage.
const contendWait = 10 * time.Second

// purgeWait is how long a push waits for a purge under way (the target
// sealed) before it answers unavailable; S3 in lock mode on a loaded
// machine took 4.5 s for a purge.
const purgeWait = 15 * time.Second

// state is what an update reads: the defining file, the file holding the
// concern (the same file, or nil when absent or debris) and the record.
type state struct {
	def, target *cached
	// debris is a file at the target's key of another record of the ID,
	// which a write replaces on its tag.
	debris *cached
	rec    *model.Record
	// read: the files came from the store, so a conflict needs no re-read.
	read    bool
	sealed  bool // a purge has sealed the target: it is waited for
	changed bool // the defining file changed incarnation while being read
}

// state returns the files of id that concern target (an index into files)
// needs, from the cache unless fresh is set; an error wrapping ErrNotFound
// when the defining file is absent.
func (r *Records) state(ctx context.Context, id model.ID, files []layout.File, target int, fresh bool) (*state, error) {
	st := &state{}
	ks := []string{files[0].Key}
	if target != 0 {
		ks = append(ks, files[target].Key)
	}
	var docs []*cached
	for _, k := range ks {
		if c, ok := r.cachedOf(id, k); ok && !fresh {
			docs = append(docs, &c)
		}
	}
	if len(docs) < len(ks) {
		// IfAbsent on an absent target does not show that the record
		// still exists: read the defining file too.
		var err error
		if docs, err = r.readAll(ctx, id, ks); err != nil || docs[0] == nil {
			return nil, r.orNotFound(err, id)
		}
		st.read = true
	}
	st.def, st.target = docs[0], docs[len(docs)-1]
	if st.def.doc.Purged {
		if st.read {
			return nil, r.errNotFound(id)
		}
		st.changed = true
		return st, nil
	}
	var others []*jsonld.File
	switch {
	case target == 0 || st.target == nil:
	case belongs(st.def.doc, st.target.doc):
		others = append(others, st.target.doc)
		st.sealed = st.target.doc.Purged
	case !st.read:
		// Files of two records in the cache (a defining file cached before
		// a purge, a file of the record created since): the write would
		// carry the purged record's token. Read both again.
		st.changed = true
		return st, nil
	default:
		// Debris, unless the defining file was read before a purge and
		// the target after a re-create.
		same, err := r.sameIncarnation(ctx, id, files[0].Key, st.def)
		if err != nil {
			return nil, err
		}
		st.changed = !same
		st.debris, st.target = st.target, nil
	}
	var err error
	if st.rec, err = jsonld.Assemble(id, st.def.doc, others...); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", r.cfg.Name, files[0].Key, err)
	}
	return st, nil
}

func (r *Records) orNotFound(err error, id model.ID) error {
	if err != nil {
		return err
	}
	return r.errNotFound(id)
}

// Update implements driver.Driver: it compares with cond.Holds on the
// cached file (read when not cached) and writes the one file holding
// concern c on its tag (IfAbsent when it does not exist yet), recording
// the write's entry; a failed precondition makes it re-read and compare
// again, so a conflict is only ever reported from a fresh read.
func (r *Records) Update(ctx context.Context, id model.ID, c model.Concern, cond driver.Condition, next model.Value) (driver.Outcome, error) {
	if err := r.begin(ctx); err != nil {
		return driver.Outcome{}, err
	}
	if !c.Valid() {
		return driver.Outcome{}, fmt.Errorf("%s: %w: concern %v", r.cfg.Name, model.ErrInvalidArgument, c)
	}
	files, err := r.files(id)
	if err != nil {
		return driver.Outcome{}, err
	}
	w, err := r.writeOf(ctx)
	if err != nil {
		return driver.Outcome{}, err
	}
	// Never -1: c is valid, and every layout puts each concern in a file.
	target := slices.IndexFunc(files, func(f layout.File) bool { return f.Parts&jsonld.PartOf(c) != 0 })
	u := &update{id: id, files: files, target: target, c: c, next: next, entry: driverutil.WriteTag(w.ID, next.V)}
	applied := driver.Outcome{Applied: true, Current: next.Clone()}
	if w.Resend {
		err := r.resent(ctx, id, files[u.target].Key, func(doc *jsonld.File) bool { return hasEntry(doc, u.entry) })
		if err != nil {
			return driver.Outcome{}, err
		}
		return applied, nil
	}
	start := time.Now()
	var sealedAt time.Time // when this call first met a purge under way
	// Every attempt after the first reads afresh.
	for attempt := 0; keepTrying(attempt, start, sealedAt); attempt++ {
		if err := r.backoff(ctx, attempt); err != nil {
			return driver.Outcome{}, err
		}
		st, err := r.state(ctx, id, files, u.target, attempt > 0)
		if err != nil {
			return driver.Outcome{}, err
		}
		if st.changed {
			continue
		}
		cur := st.rec.Value(c)
		if cur == nil {
			return driver.Outcome{}, fmt.Errorf("%s: %w: %s is a %s and has no %s", r.cfg.Name, model.ErrNotFound, id, st.rec.Kind, c)
		}
		if !cond.Holds(*cur, next) {
			if !st.read {
				continue
			}
			return driver.Outcome{Current: cur.Clone()}, nil
		}
		if st.sealed { // a purge is under way: wait for it, up to purgeWait
			if sealedAt.IsZero() {
				sealedAt = time.Now()
			}
			continue
		}
		done, err := r.apply(ctx, u, st)
		if done && u.target != 0 && st.def.doc.Index != nil && st.def.doc.Incarnation == "" && c == model.Index {
			r.foldInline(ctx, id, files[0], st.def)
		}
		if err != nil {
			return driver.Outcome{}, err
		}
		if done {
			return applied, nil
		}
	}
	return driver.Outcome{}, r.contended(id, c)
}

// keepTrying reports whether an update tries again: for at least
// maxAttempts attempts and contendWait, and up to purgeWait after it first
// met a purge under way.
func keepTrying(attempt int, start, sealedAt time.Time) bool {
	if attempt < maxAttempts || time.Since(start) < contendWait {
		return true
	}
	return !sealedAt.IsZero() && time.Since(sealedAt) < purgeWait
}

type update struct {
	id     model.ID
	files  []layout.File
	target int // index in files of the file holding c
	c      model.Concern
	next   model.Value
	entry  string
}

func (r *Records) contended(id model.ID, c model.Concern) error {
	return fmt.Errorf("%s: %w: %s %s: still contended after %d attempts", r.cfg.Name, model.ErrUnavailable, id, c, maxAttempts)
}

// backoff sleeps before a third or later attempt: the first retry follows
// a failed precondition at once, since the re-read usually settles it.
func (r *Records) backoff(ctx context.Context, attempt int) error {
	if attempt < 2 {
		return ctx.Err()
	}
	return driverutil.Sleep(ctx, driverutil.Jitter(5*time.Millisecond, 250*time.Millisecond, attempt-2))
}

// apply writes concern u.c of st.rec as u.next to the file holding it;
// done is false when the file changed since it was read.
func (r *Records) apply(ctx context.Context, u *update, st *state) (bool, error) {
	f := u.files[u.target]
	was := st.rec.Value(u.c).Clone()
	rec := st.rec
	rec.SetValue(u.c, u.next.Clone())
	pc, prev, at := IfAbsent(), (*jsonld.File)(nil), (*jsonld.File)(nil)
	switch {
	case st.target != nil:
		pc, prev, at = IfMatch(st.target.tag), st.target.doc, st.target.doc
	case st.debris != nil:
		pc, at = IfMatch(st.debris.tag), st.debris.doc
	}
	data, err := jsonld.Encode(rec, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Parts: f.Parts, Prev: prev,
		Incarnation: st.def.doc.Incarnation, WriteID: u.entry})
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
	}
	settle := func(ctx context.Context, cause error) (bool, error) {
		return r.settleUpdate(ctx, u, st.def, pc, at, was, cause)
	}
	return r.send(ctx, &sent{id: u.id, key: f.Key, pc: pc, data: data, settle: settle})
}

// settleUpdate reads back the file of an update whose answer was lost: it
// landed when the file holds its entry; it may be sent again while the
// file still meets pc (read as at) and the record is still def's, with
// the concern at was.
func (r *Records) settleUpdate(ctx context.Context, u *update, def *cached, pc Precondition, at *jsonld.File, was model.Value, cause error) (bool, error) {
	key := u.files[u.target].Key
	now, done, err := r.readLanded(ctx, u.id, key, cause, func(d *jsonld.File) bool { return hasEntry(d, u.entry) })
	switch {
	case err != nil || done:
		return done, err
	case !r.holds(now, pc, at):
		return false, r.unknown(key, "the answer was lost (%v), and the file was written since, by another writer or a purge", cause)
	case u.target == 0:
		return false, nil
	}
	// Read after the file, so that a purge and a collector cannot have
	// removed it in between unseen.
	defNow, err := r.readBack(ctx, u.id, u.files[0].Key, cause)
	if err != nil {
		return false, err
	}
	if !r.sameRecord(u, def, defNow, now, was) {
		return false, r.unknown(key, "the answer was lost (%v), and the record has changed since: purged, created again, or the value rewritten", cause)
	}
	return false, nil
}

// sameRecord reports whether the defining file now (target: the file
// holding u.c, as read just before) is of def's record and gives u.c the
// value was. A token proves the record is the same; without one (Fluree's)
// only a defining file unchanged since does.
func (r *Records) sameRecord(u *update, def, now, target *cached, was model.Value) bool {
	switch {
	case now == nil || now.doc == nil || now.doc.Purged || now.doc.Incarnation != def.doc.Incarnation:
		return false
	case def.doc.Incarnation == "" && !r.holds(now, IfMatch(def.tag), def.doc):
		return false
	}
	var others []*jsonld.File
	if target != nil && target.doc != nil && belongs(now.doc, target.doc) {
		others = append(others, target.doc)
	}
	rec, err := jsonld.Assemble(u.id, now.doc, others...)
	if err != nil {
		return false
	}
	v := rec.Value(u.c)
	return v != nil && v.Equal(was)
}

// writeCAS writes data to f under pc and caches it, for the writes that
// record no entry (fences, folds); done is false when the precondition
// failed.
func (r *Records) writeCAS(ctx context.Context, id model.ID, f layout.File, pc Precondition, data []byte) (bool, error) {
	l, err := r.attempt(ctx, id, f.Key, pc, data)
	if l == lost {
		return r.resolve(ctx, id, f.Key, pc, data, err)
	}
	return l == landed, err
}

// resolve reads key after a lost answer of writeCAS: the write landed when
// the object holds exactly data (a token or a fence's time, which no other
// write repeats), and did not when the object still meets pc; anything
// else is an error wrapping model.ErrOutcomeUnknown.
func (r *Records) resolve(ctx context.Context, id model.ID, key string, pc Precondition, data []byte, cause error) (bool, error) {
	obj, err := r.get(ctx, key)
	if err != nil {
		return false, r.unknown(key, "the answer was lost (%v); reading it back failed: %v", cause, err)
	}
	switch {
	case obj != nil && bytes.Equal(obj.data, data):
		r.remember(id, key, obj.tag, data)
		return true, nil
	case obj == nil && pc.Absent, obj != nil && pc.Tag != "" && NormTag(obj.tag) == NormTag(pc.Tag):
		return false, nil // untouched: the write never landed
	}
	return false, r.unknown(key, "the answer was lost (%v), and another writer changed the object before it could be read back", cause)
}

func (r *Records) remember(id model.ID, key, tag string, data []byte) {
	if c, err := r.decodeDoc(id, key, &cached{data: data, tag: tag}); err == nil {
		r.cache.put(key, *c)
	}
}

// foldInline rewrites a layout-B main file written by Fluree without its
// inline index once the sidecar holds it (readers merge the two, the
// sidecar winning at equal or higher t), best effort. A record with a
// token keeps the inline index its create wrote: a reader of the sidecar
// before the push and of the defining file after a fold would see none.
func (r *Records) foldInline(ctx context.Context, id model.ID, f layout.File, def *cached) {
	for range 3 {
		done, err := r.writeWithoutIndex(ctx, id, f, def)
		if done || err != nil {
			return
		}
		if def, err = r.readDoc(ctx, id, f.Key); err != nil || def == nil || def.doc.Index == nil {
			return
		}
	}
}

// writeWithoutIndex rewrites the defining file f, read as def, without its
// inline index, on its tag; done is false when it changed meanwhile.
func (r *Records) writeWithoutIndex(ctx context.Context, id model.ID, f layout.File, def *cached) (bool, error) {
	rec, err := jsonld.Assemble(id, def.doc)
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
	}
	data, err := jsonld.Encode(rec, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Parts: f.Parts, Prev: def.doc.WithoutIndex()})
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
	}
	return r.writeCAS(ctx, id, f, IfMatch(def.tag), data)
}

// Retract implements driver.Driver: one conditional write of the defining
// file (it holds identity and status), recording the write's entry.
func (r *Records) Retract(ctx context.Context, id model.ID, at time.Time) error {
	if err := r.begin(ctx); err != nil {
		return err
	}
	files, err := r.files(id)
	if err != nil {
		return err
	}
	w, err := r.writeOf(ctx)
	if err != nil {
		return err
	}
	f, entry := files[0], w.ID+"@retract"
	// done: the defining file holds the entry, or is a live record
	// retracted (retracting it again would change nothing).
	done := func(def *jsonld.File) bool {
		rec, err := jsonld.Assemble(id, def)
		return hasEntry(def, entry) || err == nil && !def.Purged && rec.Retracted
	}
	if w.Resend {
		return r.resent(ctx, id, f.Key, done)
	}
	for attempt := range maxAttempts {
		if err := r.backoff(ctx, attempt); err != nil {
			return err
		}
		ok, err := r.retractOnce(ctx, id, f, at, entry, done, attempt > 0)
		if err != nil || ok {
			return err
		}
	}
	return r.contended(id, model.Status)
}

func (r *Records) retractOnce(ctx context.Context, id model.ID, f layout.File, at time.Time, entry string,
	done func(*jsonld.File) bool, fresh bool) (bool, error) {
	def, err := r.docFor(ctx, id, f.Key, fresh)
	if err != nil || def == nil || def.doc.Purged && fresh {
		return false, r.orNotFound(err, id)
	}
	if def.doc.Purged {
		return false, nil // cached: read again
	}
	rec, err := jsonld.Assemble(id, def.doc)
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
	}
	if rec.Retracted {
		return fresh, nil // a cached "retracted" may be a purged record's
	}
	rec.Retracted = true
	rec.Status = &model.Value{V: rec.Status.V + 1, Payload: model.RetractedStatus(at)}
	data, err := jsonld.Encode(rec, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Parts: f.Parts, Prev: def.doc, WriteID: entry})
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
	}
	pc := IfMatch(def.tag)
	settle := r.settleOn(id, f.Key, pc, def.doc, done)
	return r.send(ctx, &sent{id: id, key: f.Key, pc: pc, data: data, settle: settle})
}
