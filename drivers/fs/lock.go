package fs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

// lockSuffix names the sidecar lock file of a record file (main.json has
// main.json.lock); no record file ends in it.
const lockSuffix = ".lock"

// heldLock is an flock on a sidecar lock file, and this process's slot
// for it.
type heldLock struct {
	path    string
	file    *os.File
	release func()
}

// unlock releases the lock, first deleting the lock file when remove is
// set, which is safe under the lock: a waiter that then acquires the
// deleted inode sees that the path no longer names it and starts over.
func (l *heldLock) unlock(remove bool) {
	if remove {
		_ = os.Remove(l.path)
	}
	unlock(l.file)
	_ = l.file.Close()
	l.release()
}

// procLocks serialises the goroutines of this process per lock path, so
// they queue on a channel instead of polling flock.
var procLocks = keyedMutex{m: map[string]*keyedEntry{}}

type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*keyedEntry
}

type keyedEntry struct {
	ch   chan struct{}
	refs int
}

func (k *keyedMutex) acquire(ctx context.Context, key string) (func(), error) {
	k.mu.Lock()
	e := k.m[key]
	if e == nil {
		e = &keyedEntry{ch: make(chan struct{}, 1)}
		k.m[key] = e
	}
	e.refs++
	k.mu.Unlock()
	select {
	case e.ch <- struct{}{}:
		return func() { <-e.ch; k.drop(key, e) }, nil
	case <-ctx.Done():
		k.drop(key, e)
		return nil, ctx.Err()
	}
}

func (k *keyedMutex) drop(key string, e *keyedEntry) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if e.refs--; e.refs == 0 {
		delete(k.m, key)
	}
}

// Poll interval bounds while another process holds a lock.
const (
	minPoll = 500 * time.Microsecond
	maxPoll = 20 * time.Millisecond
)

// lock takes the lock of record file path, waiting at most d.lockTimeout:
// an error wrapping ErrUnavailable when the wait times out, ctx's error
// when ctx ends, and fs.ErrNotExist when the file's directory is missing.
func (d *Driver) lock(ctx context.Context, path string) (*heldLock, error) {
	lp := path + lockSuffix
	wctx, cancel := context.WithTimeout(ctx, d.lockTimeout)
	defer cancel()
	release, err := procLocks.acquire(wctx, lp)
	if err != nil {
		return nil, d.lockWaitError(ctx, lp, err)
	}
	f, err := flockWait(wctx, lp)
	if err != nil {
		release()
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, d.lockWaitError(ctx, lp, err)
	}
	return &heldLock{path: lp, file: f, release: release}, nil
}

func (d *Driver) lockWaitError(ctx context.Context, lp string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("fs: waiting for lock %s: %w", lp, ctx.Err())
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("fs: %w: lock %s still held by another writer after %s", model.ErrUnavailable, lp, d.lockTimeout)
	}
	return fmt.Errorf("fs: %w: lock %s: %v", model.ErrUnavailable, lp, err)
}

// flockWait opens (creating) the lock file and takes an exclusive flock,
// polling until ctx ends, and starts over when the path no longer names
// the locked file (a delete removed it).
func flockWait(ctx context.Context, lp string) (*os.File, error) {
	for {
		f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE|oCloexec, 0o644)
		if err != nil {
			return nil, err
		}
		if err := pollFlock(ctx, f); err != nil {
			_ = f.Close()
			return nil, err
		}
		a, errA := f.Stat()
		b, errB := os.Stat(lp)
		if errA == nil && errB == nil && os.SameFile(a, b) {
			return f, nil
		}
		unlock(f)
		_ = f.Close()
	}
}

func pollFlock(ctx context.Context, f *os.File) error {
	delay := minPoll
	for {
		busy, err := tryLock(f)
		if err == nil {
			return nil
		}
		if !busy {
			return err
		}
		if err := driverutil.Sleep(ctx, delay); err != nil {
			return err
		}
		delay = min(2*delay, maxPoll)
	}
}
