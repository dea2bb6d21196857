package fs

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/cid"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/model"
)

// Fluree v4 keeps a commit index beside a ledger's record:
// ns@v2/{name}/{branch}.commits.jsonl, one line {"t":<t>,"cid":"<cid>"} per
// commit head it published (fluree-db-nameservice src/file.rs). It is no
// record file (it does not end in ".json"); a purge removes it, as
// Fluree's does, and Collect removes one a purged record left.

const commitsSuffix = ".commits.jsonl"

func (d *Driver) commitsPath(id model.ID) string {
	return d.path(layout.Root + "/" + layout.Stem(id) + commitsSuffix)
}

// removeCommits removes id's commit index, if any, and the directories it
// leaves empty.
func (d *Driver) removeCommits(id model.ID) error {
	if err := id.Validate(); err != nil {
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

var _ driver.CommitIndexer = (*Driver)(nil)

// Update implements driver.Driver (objstore.Records.Update); a head update
// applied with a content ID then appends its line to the commit index, as
// Fluree's append_commit_index_entry does, best effort (logged at debug).
func (d *Driver) Update(ctx context.Context, id model.ID, c model.Concern, cond driver.Condition, next model.Value) (driver.Outcome, error) {
	out, err := d.records.Update(ctx, id, c, cond, next)
	if err == nil && out.Applied && c == model.Head {
		if err := d.appendCommit(id, next); err != nil {
			slog.Debug("fs: commit index line not written", "id", id.String(), "err", err)
		}
	}
	return out, err
}

// appendCommit appends head v's line to id's commit index when v's address
// is a content ID, in one write to a file opened for appending, so that
// several writers' lines (Fluree's among them) never interleave.
func (d *Driver) appendCommit(id model.ID, v model.Value) error {
	ref, ok := v.Ref()
	if !ok || cid.Parse(ref.Address) != nil {
		return nil
	}
	line, err := json.Marshal(driver.CommitEntry{T: ref.T, CID: ref.Address})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(d.commitsPath(id), os.O_WRONLY|os.O_APPEND|os.O_CREATE|oNoFollow|oCloexec, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	return errors.Join(err, f.Close())
}

// PendingCommitCIDs implements driver.CommitIndexer as Fluree's file
// nameservice does: no file, or a line that is not a JSON entry (a torn
// append) or content ID, means no usable index (ok false); otherwise the
// entries above sinceT, each (t, cid) once, ascending by t.
func (d *Driver) PendingCommitCIDs(ctx context.Context, id model.ID, sinceT int64) ([]driver.CommitEntry, bool, error) {
	lines, err := d.readCommits(ctx, id)
	if lines == nil || err != nil {
		return nil, false, err
	}
	seen := map[driver.CommitEntry]bool{}
	out := []driver.CommitEntry{}
	for _, l := range lines {
		var e driver.CommitEntry
		if json.Unmarshal(l, &e) != nil || cid.Parse(e.CID) != nil {
			return nil, false, nil
		}
		if e.T > sinceT && !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b driver.CommitEntry) int { return cmp.Compare(a.T, b.T) })
	return out, true, nil
}

// PruneCommitIndex implements driver.CommitIndexer as Fluree's file
// nameservice does: the entries with t above upToT are kept, written to a
// temp file renamed over the index. An append racing it may be lost, as
// with Fluree's prune; the index is an accelerator its reader checks.
func (d *Driver) PruneCommitIndex(ctx context.Context, id model.ID, upToT int64) error {
	lines, err := d.readCommits(ctx, id)
	if lines == nil || err != nil {
		return err
	}
	var kept []byte
	for _, l := range lines {
		var e driver.CommitEntry
		if json.Unmarshal(l, &e) == nil && e.T > upToT {
			kept = append(append(kept, l...), '\n')
		}
	}
	path := d.commitsPath(id)
	if err := replaceFile(path, kept); err != nil {
		return ioError("write", path, err)
	}
	return nil
}

// readCommits returns the non-empty lines of id's commit index, trimmed;
// nil when there is no index, none (not nil) when it is empty.
func (d *Driver) readCommits(ctx context.Context, id model.ID) ([][]byte, error) {
	if err := objstore.Begin(ctx, d.records); err != nil {
		return nil, err
	}
	if err := id.Validate(); err != nil {
		return nil, err
	}
	path := d.commitsPath(id)
	data, _, err := d.readNoLinks(path)
	if err != nil {
		return nil, ioError("read", path, err)
	}
	lines := [][]byte{}
	if data == nil {
		if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
			return nil, nil // no index (an empty one reads as absent to readNoLinks)
		}
	}
	for l := range bytes.Lines(data) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// Delete implements driver.Driver: it removes the record's commit index,
// then purges the record (objstore.Records.Delete). The index goes first,
// while the record exists, so that no create of the ID comes between: a
// ledger created again never loses its index. A line Fluree appends in
// between outlives the record, and Collect removes it. An ID without a
// record still loses its commit index (and gets model.ErrNotFound).
func (d *Driver) Delete(ctx context.Context, id model.ID) error {
	if err := objstore.Begin(ctx, d.records); err != nil {
		return err
	}
	if err := d.removeCommits(id); err != nil {
		return err
	}
	return d.records.Delete(ctx, id)
}

// DropBranch implements driver.Brancher: the drop (objstore), then the
// removal of the branch's commit index, which a refused drop must leave.
func (d *Driver) DropBranch(ctx context.Context, id model.ID) error {
	if err := d.records.DropBranch(ctx, id); err != nil {
		return err
	}
	return d.removeCommits(id)
}

// collectCommits removes the commit index files under the ID prefix whose
// record does not exist, once last written opts.OlderThan ago.
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
		if _, err := d.records.Get(ctx, id); !errors.Is(err, model.ErrNotFound) {
			return nil // a record (readable or not) keeps its index
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return nil // removed meanwhile
		}
		report := func(removed bool, reason string) {
			driverutil.Report(opts, st, driver.Collected{Object: path, ID: id.String(), Removed: removed, Reason: reason})
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
