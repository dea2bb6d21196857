package fs

import (
	"context"
	"strings"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/objstore"
)

// lockProbe is how long Collect waits for a lock file's lock: one held
// longer belongs to a writer at work, and stays.
const lockProbe = 10 * time.Millisecond

// Collect implements driver.Collector: what purges left, as the object
// stores collect it (with the removed files' lock and temp files and the
// directories left empty), then the commit index files of records that no
// longer exist, then the idle lock files of the files that stay, each
// removed under its own lock (a writer that then locks the removed file
// starts over, see heldLock.unlock).
func (d *Driver) Collect(ctx context.Context, opts driver.CollectOptions) (driver.CollectStats, error) {
	st, err := d.records.Collect(ctx, opts)
	if err != nil {
		return st, err
	}
	if err := d.collectCommits(ctx, opts, &st); err != nil || opts.DryRun {
		return st, err
	}
	// The lock files of what stays, when idle.
	err = d.walkFiles(ctx, objstore.IDKeyPrefix(opts.Prefix), lockSuffix, func(p, _ string) error {
		if d.removeIdleLock(ctx, strings.TrimSuffix(p, lockSuffix)) {
			driverutil.Report(opts, &st, driver.Collected{Object: p, Removed: true, Reason: "idle lock file"})
		}
		return nil
	})
	return st, err
}

// removeIdleLock removes the lock file of path, and its temp files, when
// its lock can be taken at once; it reports whether it did.
func (d *Driver) removeIdleLock(ctx context.Context, path string) bool {
	lctx, cancel := context.WithTimeout(ctx, lockProbe)
	defer cancel()
	lk, err := d.lock(lctx, path)
	if err != nil {
		return false
	}
	removeTemps(path)
	lk.unlock(true)
	return true
}

var _ driver.Collector = (*Driver)(nil)
