package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/backoff"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/internal/telemetry"
	"nameservice.dev/nameservice/jsonld"
)

// maxAttempts bounds the read-compare-write loop of one operation under
// contention. Object stores sustain a few conditional writes per second per
// key (GCS about one), so
// a loop that keeps losing reports ErrUnavailable rather than spinning.
const maxAttempts = 16

// state is what an update reads: the defining file, the file holding the
// concern (the same file, or nil when absent or debris of another record
// of the ID) and the record they make.
type state struct {
	def, target *cached
	// debris is the tag of a file at the target's key that belongs to
	// another record of the ID: a write replaces it on that tag.
	debris string
	rec    *driver.Record
	// read is set when the files came from the store in this call, not
	// from the cache: a conflict found on them needs no re-read.
	read bool
	// sealed is set when a purge has sealed the target: it is not
	// written, the purge is waited for.
	sealed bool
	// changed is set when the defining file changed incarnation while
	// being read: read again.
	changed bool
}

// state returns the files of id that concern target (an index into files)
// needs, from the cache unless fresh is set. It returns an error wrapping
// ErrNotFound when the defining file is absent.
func (r *Records) state(ctx context.Context, id driver.ID, files []layout.File, target int, fresh bool) (*state, error) {
	st := &state{}
	if target == 0 {
		c, ok := r.cachedOf(id, files[0].Key)
		if fresh || !ok {
			def, err := r.readDoc(ctx, id, files[0].Key)
			if err != nil || def == nil {
				return nil, r.orNotFound(err, id)
			}
			c, st.read = *def, true
		}
		st.def, st.target = &c, &c
	} else if !r.cachedPair(id, files, target, fresh, st) {
		// An absent target is created with IfAbsent, which does not
		// show that the record still exists: read the defining file too.
		docs, err := r.readAll(ctx, id, []string{files[0].Key, files[target].Key})
		if err != nil || docs[0] == nil {
			return nil, r.orNotFound(err, id)
		}
		st.def, st.target, st.read = docs[0], docs[1], true
	}
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
	default:
		// Debris, unless the defining file was read before a purge and
		// the target after a re-create: check before replacing it.
		if st.read {
			same, err := r.sameIncarnation(ctx, id, files[0].Key, st.def)
			if err != nil {
				return nil, err
			}
			st.changed = !same
		}
		st.debris, st.target = st.target.tag, nil
	}
	rec, err := jsonld.Assemble(id, st.def.doc, others...)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", r.cfg.Name, files[0].Key, err)
	}
	st.rec = rec
	return st, nil
}

// cachedPair fills st from the cache when it holds both the defining file
// and the target file.
func (r *Records) cachedPair(id driver.ID, files []layout.File, target int, fresh bool, st *state) bool {
	if fresh {
		return false
	}
	def, ok1 := r.cachedOf(id, files[0].Key)
	tgt, ok2 := r.cachedOf(id, files[target].Key)
	if !ok1 || !ok2 {
		return false
	}
	st.def, st.target = &def, &tgt
	return true
}

func (r *Records) orNotFound(err error, id driver.ID) error {
	if err != nil {
		return err
	}
	return r.errNotFound(id)
}

// Update implements driver.Driver. It compares with cond.Holds on the
// cached file (read when not cached) and writes the one file holding
// concern c conditional on its tag (IfAbsent when the file does not exist
// yet). A failed precondition makes it re-read and compare again; a conflict is only ever
// reported from a fresh read.
func (r *Records) Update(ctx context.Context, id driver.ID, c driver.Concern, cond driver.Condition, next driver.Value) (driver.Outcome, error) {
	if err := r.begin(ctx); err != nil {
		return driver.Outcome{}, err
	}
	if !c.Valid() {
		return driver.Outcome{}, fmt.Errorf("%s: %w: concern %v", r.cfg.Name, driver.ErrInvalidArgument, c)
	}
	files, err := r.files(id)
	if err != nil {
		return driver.Outcome{}, err
	}
	target := fileOf(files, c)
	fresh := false
	for attempt := range maxAttempts {
		if err := r.backoff(ctx, attempt); err != nil {
			return driver.Outcome{}, err
		}
		st, err := r.state(ctx, id, files, target, fresh)
		if err != nil {
			return driver.Outcome{}, err
		}
		if st.changed {
			fresh = true
			continue
		}
		cur := st.rec.Value(c)
		if cur == nil {
			return driver.Outcome{}, fmt.Errorf("%s: %w: %s is a %s and has no %s", r.cfg.Name, driver.ErrNotFound, id, st.rec.Kind, c)
		}
		if !cond.Holds(*cur, next) {
			if !st.read {
				fresh = true
				continue
			}
			return driver.Outcome{Current: cur.Clone()}, nil
		}
		if st.sealed {
			fresh = true // a purge is under way: wait for it
			continue
		}
		done, err := r.apply(ctx, id, files[target], st, c, next)
		if err != nil || done {
			if done && target != 0 && st.def.doc.Index != nil && st.def.doc.Incarnation == "" && c == driver.Index {
				r.foldInline(ctx, id, files[0], st.def)
			}
			return driver.Outcome{Applied: done, Current: next.Clone()}, err
		}
		fresh = true
	}
	return driver.Outcome{}, r.contended(id, c)
}

func (r *Records) contended(id driver.ID, c driver.Concern) error {
	return fmt.Errorf("%s: %w: %s %s: still contended after %d attempts", r.cfg.Name, driver.ErrUnavailable, id, c, maxAttempts)
}

// backoff sleeps before a third or later attempt: the first retry follows
// a failed precondition at once, since the re-read usually settles it.
func (r *Records) backoff(ctx context.Context, attempt int) error {
	if attempt < 2 {
		return ctx.Err()
	}
	return backoff.Sleep(ctx, backoff.Jitter(5*time.Millisecond, 250*time.Millisecond, attempt-2))
}

// fileOf returns the index of the file holding concern c.
func fileOf(files []layout.File, c driver.Concern) int {
	for i, f := range files {
		if f.Parts&jsonld.PartOf(c) != 0 {
			return i
		}
	}
	return 0
}

// apply writes concern c of st.rec as next to file f. done is false when
// the file changed since it was read (try again).
func (r *Records) apply(ctx context.Context, id driver.ID, f layout.File, st *state, c driver.Concern, next driver.Value) (bool, error) {
	rec := st.rec
	rec.SetValue(c, next.Clone())
	pc, prev := ifAbsent(), (*jsonld.File)(nil)
	switch {
	case st.target != nil:
		pc, prev = ifMatch(st.target.tag), st.target.doc
	case st.debris != "":
		pc = ifMatch(st.debris)
	}
	data, err := jsonld.Encode(rec, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Parts: f.Parts, Prev: prev,
		Incarnation: st.def.doc.Incarnation})
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
	}
	return r.writeCAS(ctx, id, f, pc, data)
}

// writeCAS writes data to f under pc and caches it. done is false when the
// precondition failed (the caller re-reads and decides again). A write
// whose outcome is unknown (timeout, 5xx) is resolved by reading (see
// resolve).
func (r *Records) writeCAS(ctx context.Context, id driver.ID, f layout.File, pc Precondition, data []byte) (bool, error) {
	tag, err := r.put(ctx, f.Key, data, pc)
	switch {
	case err == nil:
		r.remember(id, f.Key, tag, data)
		return true, nil
	case errors.Is(err, ErrPrecondition):
		telemetry.PreconditionFailed(ctx, r.preconditionCode())
		telemetry.Retry(ctx, "precondition failed")
		return false, nil
	case r.cfg.RetryThrottled && errors.Is(err, driver.ErrThrottled):
		telemetry.Retry(ctx, "throttled")
		return false, nil // the caller backs off, re-reads and tries again
	case errors.Is(err, ErrMissing):
		// Removed since it was read (a collector, after a purge): the
		// caller's fresh read decides (not found, or free to create).
		r.cache.drop(f.Key)
		telemetry.Retry(ctx, "object removed")
		return false, nil
	case r.maybeApplied(err) && ctx.Err() == nil:
		return r.resolve(ctx, id, f.Key, pc, data, err)
	}
	return false, err
}

// preconditionCode names a failed precondition in telemetry: HTTP's 412
// on an object store, a changed file on the local file system.
func (r *Records) preconditionCode() string {
	if r.cfg.LocalReads {
		return "file changed"
	}
	return "412"
}

// resolve reads key after a write of data under pc whose outcome is
// unknown. The write landed when the object holds exactly data, and did not
// when the object is still what pc required (absent, or at pc's tag), so
// the caller may decide again. Anything else means another writer changed
// the object meanwhile, maybe after our write landed: the store keeps no
// history to tell, so resolve returns an error wrapping
// driver.ErrUnavailable rather than report a conflict for a write that may
// have landed.
func (r *Records) resolve(ctx context.Context, id driver.ID, key string, pc Precondition, data []byte, cause error) (bool, error) {
	obj, err := r.get(ctx, key)
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w: outcome unknown: %w (and reading it back failed: %v)", r.cfg.Name, key, driver.ErrUnavailable, cause, err)
	}
	switch {
	case obj != nil && bytes.Equal(obj.data, data):
		r.remember(id, key, obj.tag, data)
		return true, nil
	case obj == nil && pc.Absent, obj != nil && pc.Tag != "" && normTag(obj.tag) == normTag(pc.Tag):
		return false, nil // untouched: the write never landed
	}
	r.cache.drop(key)
	return false, fmt.Errorf("%s: %s: %w: outcome unknown: the write's answer was lost (%v) and another writer changed the object before it could be read back", r.cfg.Name, key, driver.ErrUnavailable, cause)
}

// remember caches what the driver just wrote to key.
func (r *Records) remember(id driver.ID, key, tag string, data []byte) {
	if c, err := r.decodeDoc(id, key, &object{data: data, tag: tag}); err == nil {
		r.cache.put(key, *c)
	}
}

// foldInline rewrites a layout-B main file written by Fluree without its
// inline index, once the sidecar holds the index; until then readers merge
// the two (the sidecar wins at equal or higher t). It is best effort: the
// update already succeeded, and the next one tries again. A record with an
// incarnation token keeps the inline index its create wrote: a reader that
// read the sidecar before the push and the defining file after a fold
// would see no index at all.
func (r *Records) foldInline(ctx context.Context, id driver.ID, f layout.File, def *cached) {
	for range 3 {
		rec, err := jsonld.Assemble(id, def.doc)
		if err != nil {
			return
		}
		data, err := jsonld.Encode(rec, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Parts: f.Parts, Prev: def.doc.WithoutIndex()})
		if err != nil {
			return
		}
		if done, err := r.writeCAS(ctx, id, f, ifMatch(def.tag), data); done || err != nil {
			return
		}
		if def, err = r.readDoc(ctx, id, f.Key); err != nil || def == nil || def.doc.Index == nil {
			return
		}
	}
}

// Retract implements driver.Driver: one conditional write of the file
// holding identity and status (the main file of layout B, the status file
// of layout C).
func (r *Records) Retract(ctx context.Context, id driver.ID, at time.Time) error {
	if err := r.begin(ctx); err != nil {
		return err
	}
	files, err := r.files(id)
	if err != nil {
		return err
	}
	fresh := false
	for attempt := range maxAttempts {
		if err := r.backoff(ctx, attempt); err != nil {
			return err
		}
		done, err := r.retractOnce(ctx, id, files[0], at, fresh)
		if err != nil || done {
			return err
		}
		fresh = true
	}
	return r.contended(id, driver.Status)
}

func (r *Records) retractOnce(ctx context.Context, id driver.ID, f layout.File, at time.Time, fresh bool) (bool, error) {
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
	rec.Status = &driver.Value{V: rec.Status.V + 1, Payload: driver.RetractedStatus(at)}
	data, err := jsonld.Encode(rec, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Parts: f.Parts, Prev: def.doc})
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
	}
	return r.writeCAS(ctx, id, f, ifMatch(def.tag), data)
}
