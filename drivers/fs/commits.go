package fs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/internal/objstore"
)

// Fluree v4 keeps a commit index beside a ledger's record:
// ns@v2/{name}/{branch}.commits.jsonl, one line {"t":<t>,"cid":"<cid>"} per
// commit head it published (fluree-db-nameservice src/file.rs). It is no
// record file (Classify ignores it: it does not end in ".json"), so lookups,
// listings and watches never read it; a purge removes it, as Fluree's does,
// and Collect removes one a purged record left.

// commitsSuffix ends the name of a commit index file.
const commitsSuffix = ".commits.jsonl"

// commitsPath returns the path of id's commit index.
func (d *Driver) commitsPath(id driver.ID) string {
	return d.path(layout.Root + "/" + layout.Stem(id) + commitsSuffix)
}

// removeCommits removes id's commit index, if any, and the directories it
// leaves empty.
func (d *Driver) removeCommits(id driver.ID) error {
	if err := layout.Check(id); err != nil {
		return err
	}
	path := d.commitsPath(id)
	if err := d.checkLinks(path); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		if absentErr(err) {
			return nil
		}
		return ioError("remove", path, err)
	}
	d.removeEmptyDirs(filepath.Dir(path))
	return nil
}

// Delete implements driver.Driver: it removes the record's commit index,
// then purges the record (objstore.Records.Delete). The index goes first,
// while the record still exists, so that no create of the ID comes between
// the two: a ledger created again never loses the index it starts. A line
// Fluree appends in between outlives the record, and Collect removes it.
// A purge of an ID that has no record still removes its commit index, and
// returns an error wrapping driver.ErrNotFound.
func (d *Driver) Delete(ctx context.Context, id driver.ID) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	if err := d.removeCommits(id); err != nil {
		return err
	}
	return d.records.Delete(ctx, id)
}

// DropBranch implements driver.Brancher: the drop (objstore), then the
// removal of the branch's commit index. The index goes after: a drop the
// branch's own branches refuse must leave it.
func (d *Driver) DropBranch(ctx context.Context, id driver.ID) error {
	if err := d.records.DropBranch(ctx, id); err != nil {
		return err
	}
	return d.removeCommits(id)
}

// collectCommits removes the commit index files under the ID prefix whose
// record does not exist (purged, collected, or never created by this
// driver), when last written opts.OlderThan ago or earlier.
func (d *Driver) collectCommits(ctx context.Context, opts driver.CollectOptions, st *driver.CollectStats) error {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	return d.walkFiles(ctx, objstore.IDKeyPrefix(opts.Prefix), commitsSuffix, func(path, key string) error {
		stem := strings.TrimSuffix(strings.TrimPrefix(key, layout.Root+"/"), commitsSuffix)
		id, ok := layout.PathDefault(stem)
		if !ok {
			return nil
		}
		if _, err := d.records.Get(ctx, id); !errors.Is(err, driver.ErrNotFound) {
			return nil // a record (readable or not) keeps its index
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return nil // removed meanwhile
		}
		report := func(removed bool, reason string) {
			if removed {
				st.Removed++
			} else {
				st.Kept++
			}
			if opts.Report != nil {
				opts.Report(driver.Collected{Object: path, ID: id.String(), Removed: removed, Reason: reason})
			}
		}
		if age := now().Sub(fi.ModTime()); opts.OlderThan > 0 && age < opts.OlderThan {
			report(false, fmt.Sprintf("commit index written %s ago, younger than %s", age.Round(time.Second), opts.OlderThan))
			return nil
		}
		if !opts.DryRun {
			if err := d.removeCommits(id); err != nil {
				return err
			}
		}
		report(true, "commit index of a purged record")
		return nil
	})
}

// walkFiles calls fn with the path and key of every file under ns@v2 whose
// key starts with prefix and whose name ends in suffix.
func (d *Driver) walkFiles(ctx context.Context, prefix, suffix string, fn func(path, key string) error) error {
	root := d.path(layout.Root)
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if absentErr(err) {
				return nil // removed by a delete meanwhile
			}
			return ioError("list", p, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		key := filepath.ToSlash(strings.TrimPrefix(p, d.root+string(filepath.Separator)))
		switch {
		case e.IsDir() && p != root && !strings.HasPrefix(key+"/", prefix) && !strings.HasPrefix(prefix, key+"/"):
			return filepath.SkipDir
		case e.IsDir() || !strings.HasSuffix(p, suffix) || !strings.HasPrefix(key, prefix):
			return nil
		}
		return fn(p, key)
	})
	if absentErr(err) {
		return nil
	}
	return err
}
