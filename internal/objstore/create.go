package objstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/backoff"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/jsonld"
)

// Create implements driver.Driver, as the filesystem driver does: under the
// ID's lock object it writes the record's other files first (replacing any
// debris of an earlier record) and its defining file last, with
// IfAbsent, so readers see no record until the defining file
// appears and a create that finds it present writes nothing. It returns an
// error wrapping ErrAlreadyExists when the record exists or its key is held
// by another record (a/b:main and a:b/main share ns@v2/a/b/main.json).
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
	// A taken ID is the common failure, and needs no lock.
	if err := r.checkFree(ctx, rec.ID, files[0].Key); err != nil {
		return err
	}
	lk, err := r.lockID(ctx, rec.ID, files[0].Key)
	if err != nil {
		return err
	}
	defer lk.release()
	if err := r.checkFree(lk.ctx, rec.ID, files[0].Key); err != nil {
		return err
	}
	if err := r.writeOthers(lk.ctx, rec, files[1:]); err != nil {
		return err
	}
	return r.writeDefining(lk.ctx, rec, files[0])
}

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

// writeOthers writes the non-defining files unconditionally (no record
// holds them: the defining file is absent and the ID lock is held); in
// layout B an unborn index has no file, and a graph source has no head
// file, so any debris there is removed.
func (r *Records) writeOthers(ctx context.Context, rec *driver.Record, files []layout.File) error {
	for _, f := range files {
		noFile := r.cfg.Layout == layout.B && rec.Index.Unborn() ||
			f.Parts == jsonld.HeadPart && rec.Kind != driver.Ledger
		if noFile {
			r.cache.drop(f.Key)
			if err := r.del(ctx, f.Key, Precondition{}); err != nil {
				return err
			}
			continue
		}
		data, err := jsonld.Encode(rec, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Parts: f.Parts})
		if err != nil {
			return fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
		}
		tag, err := r.put(ctx, f.Key, data, Precondition{})
		if err != nil {
			return err
		}
		r.remember(rec.ID, f.Key, tag, data)
	}
	return nil
}

// writeDefining creates the defining file with IfAbsent. A write that did
// not land (a failed precondition, or a lost answer that reading back shows
// never landed) is tried again while the key is still free: only a
// defining file that is really there makes the create fail with
// ErrAlreadyExists.
func (r *Records) writeDefining(ctx context.Context, rec *driver.Record, f layout.File) error {
	data, err := jsonld.Encode(rec, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Parts: f.Parts})
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
			return err // written meanwhile, by a writer that ignores the lock
		}
	}
	return fmt.Errorf("%s: create %s: %w: %s could not be written in %d attempts", r.cfg.Name, rec.ID, driver.ErrUnavailable, f.Key, maxAttempts)
}

// Delete implements driver.Driver. Under the ID's lock object it removes
// the defining file first, conditional on its tag (the record is gone from then
// on), then the other files. A defining file holding another record's @id
// is not removed (an error wrapping ErrInternal); one that does not decode
// is, so a corrupt record can be purged.
func (r *Records) Delete(ctx context.Context, id driver.ID) error {
	if err := r.begin(ctx); err != nil {
		return err
	}
	files, err := r.files(id)
	if err != nil {
		return err
	}
	if tag, err := r.head(ctx, files[0].Key); err != nil || tag == "" {
		return r.orNotFound(err, id)
	}
	lk, err := r.lockID(ctx, id, files[0].Key)
	if err != nil {
		return err
	}
	defer lk.release()
	defer r.cache.drop(keys(files)...)
	for attempt := range maxAttempts {
		if err := r.backoff(lk.ctx, attempt); err != nil {
			return err
		}
		done, err := r.deleteDefining(lk.ctx, id, files[0].Key)
		if err != nil {
			return err
		}
		if done {
			return r.deleteOthers(lk.ctx, files[1:])
		}
	}
	return r.contended(id, driver.Status)
}

// deleteDefining removes the defining file as read; done is false when it
// changed meanwhile.
func (r *Records) deleteDefining(ctx context.Context, id driver.ID, key string) (bool, error) {
	obj, err := r.get(ctx, key)
	if err != nil || obj == nil {
		return false, r.orNotFound(err, id)
	}
	if _, err := r.decodeDoc(id, key, obj); err != nil && !errors.Is(err, jsonld.ErrMalformed) {
		return false, err
	}
	err = r.del(ctx, key, ifMatch(obj.tag))
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

func (r *Records) deleteOthers(ctx context.Context, files []layout.File) error {
	for _, f := range files {
		if err := r.del(ctx, f.Key, Precondition{}); err != nil {
			return err
		}
	}
	return nil
}

// The ID lock: an object beside the defining file ("main.json.lock"; no
// record file ends in .lock), created with IfAbsent and removed on its
// tag by its holder. It holds its expiry time, after which another writer
// takes it over (a write conditional on its tag). Creates and deletes of one ID
// hold it, so they never interleave; updates do not need it.
const (
	lockSuffix = ".lock"
	// idLockLease is how long a holder may take; a holder that crashed
	// blocks the ID this long.
	idLockLease = 30 * time.Second
	// idLockWait bounds the wait for a live holder.
	idLockWait = 20 * time.Second
)

type idLock struct {
	ctx    context.Context // bounded by the lease
	cancel context.CancelFunc
	r      *Records
	key    string
	tag    string
}

type lockBody struct {
	Owner     string `json:"owner"`
	ExpiresMS int64  `json:"expires_ms"`
}

// lockID acquires the lock of the record whose defining file is defKey. Its
// owner token stays the same across attempts, so when the answer to a lock
// write is lost, the next look finds the lock and knows it is its own
// instead of waiting out its own lease.
func (r *Records) lockID(ctx context.Context, id driver.ID, defKey string) (*idLock, error) {
	key := defKey + lockSuffix
	owner := token()
	deadline := time.Now().Add(idLockWait)
	for attempt := 0; ; attempt++ {
		st, err := r.lockState(ctx, key, owner)
		if err != nil {
			return nil, err
		}
		if st.mine != "" {
			return r.heldLock(ctx, key, st.mine, st.expires), nil
		}
		if st.pc.Conditional() {
			expires := time.Now().Add(idLockLease)
			data, _ := json.Marshal(lockBody{Owner: owner, ExpiresMS: expires.UnixMilli()})
			tag, err := r.put(ctx, key, data, st.pc)
			switch {
			case err == nil:
				return r.heldLock(ctx, key, tag, expires), nil
			case r.maybeApplied(err) && ctx.Err() == nil:
				continue // the next look tells whether it landed
			case !errors.Is(err, ErrPrecondition) && !errors.Is(err, ErrMissing):
				return nil, err
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: %w: %s: lock %s held by another writer for over %v", r.cfg.Name, driver.ErrUnavailable, id, key, idLockWait)
		}
		if err := backoff.Sleep(ctx, backoff.Jitter(10*time.Millisecond, 200*time.Millisecond, attempt)); err != nil {
			return nil, err
		}
	}
}

func (r *Records) heldLock(ctx context.Context, key, tag string, expires time.Time) *idLock {
	lctx, cancel := context.WithDeadline(ctx, expires.Add(-time.Second))
	return &idLock{ctx: lctx, cancel: cancel, r: r, key: key, tag: tag}
}

// lockView is what lockState saw of the lock at a key.
type lockView struct {
	pc      Precondition // how to take it: IfAbsent when free, IfMatch on an expired holder's tag, none while held
	mine    string       // the tag, when the lock is already this owner's
	expires time.Time    // its expiry, when mine
}

// lockState reads the lock at key and says how owner may take it.
func (r *Records) lockState(ctx context.Context, key, owner string) (lockView, error) {
	obj, err := r.get(ctx, key)
	if err != nil || obj == nil {
		return lockView{pc: ifAbsent()}, err
	}
	var b lockBody
	if json.Unmarshal(obj.data, &b) != nil {
		return lockView{pc: ifMatch(obj.tag)}, nil
	}
	switch {
	case b.Owner == owner:
		return lockView{mine: obj.tag, expires: time.UnixMilli(b.ExpiresMS)}, nil
	case time.Now().UnixMilli() > b.ExpiresMS:
		return lockView{pc: ifMatch(obj.tag)}, nil
	}
	return lockView{}, nil
}

// release removes the lock if it is still this holder's.
func (l *idLock) release() {
	l.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = l.r.del(ctx, l.key, ifMatch(l.tag))
}
