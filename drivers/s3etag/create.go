package s3etag

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
// If-None-Match: *, so readers see no record until the defining file
// appears and a create that finds it present writes nothing. It returns an
// error wrapping ErrAlreadyExists when the record exists or its key is held
// by another record (a/b:main and a:b/main share ns@v2/a/b/main.json).
func (d *Driver) Create(ctx context.Context, rec *driver.Record) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	files, err := d.files(rec.ID)
	if err != nil {
		return err
	}
	if err := rec.Validate(); err != nil {
		return fmt.Errorf("s3: create: %w", err)
	}
	// A taken ID is the common failure, and needs no lock.
	if err := d.checkFree(ctx, rec.ID, files[0].Key); err != nil {
		return err
	}
	lk, err := d.lockID(ctx, rec.ID, files[0].Key)
	if err != nil {
		return err
	}
	defer lk.release()
	if err := d.checkFree(lk.ctx, rec.ID, files[0].Key); err != nil {
		return err
	}
	if err := d.writeOthers(lk.ctx, rec, files[1:]); err != nil {
		return err
	}
	return d.writeDefining(lk.ctx, rec, files[0])
}

// checkFree returns an error wrapping ErrAlreadyExists when the defining
// file holds a record.
func (d *Driver) checkFree(ctx context.Context, id driver.ID, key string) error {
	obj, err := d.get(ctx, key)
	if err != nil || obj == nil {
		return err
	}
	doc, err := jsonld.Decode(obj.data)
	if err != nil {
		return fmt.Errorf("s3: create %s: %s: %w", id, key, err)
	}
	if doc.ID != "" && doc.ID != id.String() {
		return fmt.Errorf("s3: create %s: %w: %s holds record %q (their IDs map to one key)",
			id, driver.ErrAlreadyExists, key, doc.ID)
	}
	return fmt.Errorf("s3: create: %w: %s", driver.ErrAlreadyExists, id)
}

// writeOthers writes the non-defining files unconditionally (no record
// holds them: the defining file is absent and the ID lock is held); in
// layout B an unborn index has no file, and a graph source has no head
// file, so any debris there is removed.
func (d *Driver) writeOthers(ctx context.Context, rec *driver.Record, files []layout.File) error {
	for _, f := range files {
		noFile := d.cfg.Layout == layout.B && rec.Index.Unborn() ||
			f.Parts == jsonld.HeadPart && rec.Kind != driver.Ledger
		if noFile {
			d.cache.drop(f.Key)
			if err := d.del(ctx, f.Key, precond{}); err != nil {
				return err
			}
			continue
		}
		data, err := jsonld.Encode(rec, jsonld.EncodeOptions{Dialect: d.cfg.Dialect, Parts: f.Parts})
		if err != nil {
			return fmt.Errorf("s3: %s: %w", f.Key, err)
		}
		etag, err := d.put(ctx, f.Key, data, precond{})
		if err != nil {
			return err
		}
		d.remember(rec.ID, f.Key, etag, data)
	}
	return nil
}

// writeDefining creates the defining file with If-None-Match. A write
// that did not land (a 412, or a lost answer that reading back shows never
// landed) is tried again while the key is still free: only a defining file
// that is really there makes the create fail with ErrAlreadyExists.
func (d *Driver) writeDefining(ctx context.Context, rec *driver.Record, f layout.File) error {
	data, err := jsonld.Encode(rec, jsonld.EncodeOptions{Dialect: d.cfg.Dialect, Parts: f.Parts})
	if err != nil {
		return fmt.Errorf("s3: %s: %w", f.Key, err)
	}
	for attempt := range maxAttempts {
		if err := d.backoff(ctx, attempt); err != nil {
			return err
		}
		done, err := d.writeCAS(ctx, rec.ID, f, ifAbsent(), data)
		if err != nil || done {
			return err
		}
		if err := d.checkFree(ctx, rec.ID, f.Key); err != nil {
			return err // written meanwhile, by a writer that ignores the lock
		}
	}
	return fmt.Errorf("s3: create %s: %w: %s could not be written in %d attempts", rec.ID, driver.ErrUnavailable, f.Key, maxAttempts)
}

// Delete implements driver.Driver. Under the ID's lock object it removes
// the defining file first, with If-Match (the record is gone from then
// on), then the other files. A defining file holding another record's @id
// is not removed (an error wrapping ErrInternal); one that does not decode
// is, so a corrupt record can be purged.
func (d *Driver) Delete(ctx context.Context, id driver.ID) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	files, err := d.files(id)
	if err != nil {
		return err
	}
	if etag, err := d.head(ctx, files[0].Key); err != nil || etag == "" {
		return orNotFound(err, id)
	}
	lk, err := d.lockID(ctx, id, files[0].Key)
	if err != nil {
		return err
	}
	defer lk.release()
	defer d.cache.drop(keys(files)...)
	for attempt := range maxAttempts {
		if err := d.backoff(lk.ctx, attempt); err != nil {
			return err
		}
		done, err := d.deleteDefining(lk.ctx, id, files[0].Key)
		if err != nil {
			return err
		}
		if done {
			return d.deleteOthers(lk.ctx, files[1:])
		}
	}
	return contended(id, driver.Status)
}

// deleteDefining removes the defining file as read; done is false when it
// changed meanwhile.
func (d *Driver) deleteDefining(ctx context.Context, id driver.ID, key string) (bool, error) {
	obj, err := d.get(ctx, key)
	if err != nil || obj == nil {
		return false, orNotFound(err, id)
	}
	if _, err := decodeDoc(id, key, obj); err != nil && !errors.Is(err, jsonld.ErrMalformed) {
		return false, err
	}
	err = d.del(ctx, key, ifMatch(obj.etag))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, errPrecondition):
		return false, nil
	case errors.Is(err, errMissing):
		return false, errNotFound(id)
	case maybeApplied(err) && ctx.Err() == nil:
		etag, herr := d.head(ctx, key)
		if herr != nil {
			return false, err
		}
		return etag == "", nil
	}
	return false, err
}

func (d *Driver) deleteOthers(ctx context.Context, files []layout.File) error {
	for _, f := range files {
		if err := d.del(ctx, f.Key, precond{}); err != nil {
			return err
		}
	}
	return nil
}

// The ID lock: an object beside the defining file ("main.json.lock"; no
// record file ends in .lock), created with If-None-Match: * and removed
// with If-Match by its holder. It holds its expiry time, after which another
// writer takes it over (If-Match on its ETag). Creates and deletes of one ID
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
	d      *Driver
	key    string
	etag   string
}

type lockBody struct {
	Owner     string `json:"owner"`
	ExpiresMS int64  `json:"expires_ms"`
}

// lockID acquires the lock of the record whose defining file is defKey. Its
// owner token stays the same across attempts, so when the answer to a lock
// write is lost, the next look finds the lock and knows it is its own
// instead of waiting out its own lease.
func (d *Driver) lockID(ctx context.Context, id driver.ID, defKey string) (*idLock, error) {
	key := defKey + lockSuffix
	owner := token()
	deadline := time.Now().Add(idLockWait)
	for attempt := 0; ; attempt++ {
		st, err := d.lockState(ctx, key, owner)
		if err != nil {
			return nil, err
		}
		if st.mine != "" {
			return d.heldLock(ctx, key, st.mine, st.expires), nil
		}
		if st.pc.conditional() {
			expires := time.Now().Add(idLockLease)
			data, _ := json.Marshal(lockBody{Owner: owner, ExpiresMS: expires.UnixMilli()})
			etag, err := d.put(ctx, key, data, st.pc)
			switch {
			case err == nil:
				return d.heldLock(ctx, key, etag, expires), nil
			case maybeApplied(err) && ctx.Err() == nil:
				continue // the next look tells whether it landed
			case !errors.Is(err, errPrecondition) && !errors.Is(err, errMissing):
				return nil, err
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("s3: %w: %s: lock %s held by another writer for over %v", driver.ErrUnavailable, id, key, idLockWait)
		}
		if err := backoff.Sleep(ctx, backoff.Jitter(10*time.Millisecond, 200*time.Millisecond, attempt)); err != nil {
			return nil, err
		}
	}
}

func (d *Driver) heldLock(ctx context.Context, key, etag string, expires time.Time) *idLock {
	lctx, cancel := context.WithDeadline(ctx, expires.Add(-time.Second))
	return &idLock{ctx: lctx, cancel: cancel, d: d, key: key, etag: etag}
}

// lockView is what lockState saw of the lock at a key.
type lockView struct {
	pc      precond   // how to take it: If-None-Match when free, If-Match on an expired holder's ETag, none while held
	mine    string    // the ETag, when the lock is already this owner's
	expires time.Time // its expiry, when mine
}

// lockState reads the lock at key and says how owner may take it.
func (d *Driver) lockState(ctx context.Context, key, owner string) (lockView, error) {
	obj, err := d.get(ctx, key)
	if err != nil || obj == nil {
		return lockView{pc: ifAbsent()}, err
	}
	var b lockBody
	if json.Unmarshal(obj.data, &b) != nil {
		return lockView{pc: ifMatch(obj.etag)}, nil
	}
	switch {
	case b.Owner == owner:
		return lockView{mine: obj.etag, expires: time.UnixMilli(b.ExpiresMS)}, nil
	case time.Now().UnixMilli() > b.ExpiresMS:
		return lockView{pc: ifMatch(obj.etag)}, nil
	}
	return lockView{}, nil
}

// release removes the lock if it is still this holder's.
func (l *idLock) release() {
	l.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = l.d.del(ctx, l.key, ifMatch(l.etag))
}
