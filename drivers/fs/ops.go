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
	"nameservice.dev/nameservice/jsonld"
)

func (d *Driver) encode(rec *driver.Record, f recordFile, prev *jsonld.File) ([]byte, error) {
	b, err := jsonld.Encode(rec, jsonld.EncodeOptions{Dialect: d.opts.Dialect, Parts: f.Parts, Prev: prev})
	if err != nil {
		return nil, fmt.Errorf("fs: %s: %w", f.path, err)
	}
	return b, nil
}

// present reports whether a record file exists and is not empty. It lets
// an operation on an absent record return NotFound without leaving a lock
// file behind.
func present(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Size() > 0
}

// Create implements driver.Driver. It writes the record's other files
// first and its defining file last, by hard link, all under the defining
// file's lock: readers see no record until the defining file appears, and
// a create that finds the defining file present writes nothing. It returns
// an error wrapping ErrAlreadyExists when the record exists, or when its
// path is held by another record (a/b:main and a:b/main share
// ns@v2/a/b/main.json) or by a directory of nested names.
func (d *Driver) Create(ctx context.Context, rec *driver.Record) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	files, err := d.files(rec.ID)
	if err != nil {
		return err
	}
	if err := rec.Validate(); err != nil {
		return fmt.Errorf("fs: create: %w", err)
	}
	lk, err := d.lockForCreate(ctx, rec.ID, files[0].path)
	if err != nil {
		return err
	}
	exists, err := d.create(rec, files)
	lk.unlock(!exists)
	return err
}

func (d *Driver) lockForCreate(ctx context.Context, id driver.ID, path string) (*heldLock, error) {
	for range 8 {
		if err := mkdirs(filepath.Dir(path)); err != nil {
			if errors.Is(err, errCollision) {
				return nil, fmt.Errorf("fs: create %s: %w: %v", id, driver.ErrAlreadyExists, err)
			}
			return nil, ioError("create directory for", path, err)
		}
		lk, err := d.lock(ctx, path)
		if !errors.Is(err, fs.ErrNotExist) {
			return lk, err
		}
		// A delete removed the emptied directory meanwhile: make it again.
	}
	return nil, fmt.Errorf("fs: create %s: %w: its directory keeps disappearing", id, driver.ErrUnavailable)
}

// create writes rec under the defining file's lock. exists reports whether
// a record (this one or another) holds the path afterwards.
func (d *Driver) create(rec *driver.Record, files []recordFile) (exists bool, err error) {
	def := files[0].path
	if err := d.checkFree(rec.ID, def); err != nil {
		return !errors.Is(err, driver.ErrUnavailable), err
	}
	written, err := d.writeOthers(rec, files[1:])
	if err == nil {
		err = d.writeDefining(rec, files[0])
	}
	if err != nil {
		for _, p := range written {
			_ = removeFile(p)
		}
		return errors.Is(err, driver.ErrAlreadyExists) && !errors.Is(err, errCollision), err
	}
	return true, nil
}

// checkFree returns an error wrapping ErrAlreadyExists when the defining
// file holds a record.
func (d *Driver) checkFree(id driver.ID, path string) error {
	data, _, err := readFile(path)
	if err != nil {
		return ioError("read", path, err)
	}
	if data == nil {
		return nil
	}
	doc, err := jsonld.Decode(data)
	if err != nil {
		return fmt.Errorf("fs: create %s: %s: %w", id, path, err)
	}
	if doc.ID != "" && doc.ID != id.String() {
		return fmt.Errorf("fs: create %s: %w: %s holds record %q (their IDs map to one path)",
			id, driver.ErrAlreadyExists, path, doc.ID)
	}
	return fmt.Errorf("fs: create: %w: %s", driver.ErrAlreadyExists, id)
}

// writeOthers writes (replacing any debris of an earlier record) the
// non-defining files; in layout B an unborn index has no file, and a graph
// source has no head file.
func (d *Driver) writeOthers(rec *driver.Record, files []recordFile) ([]string, error) {
	var written []string
	for _, f := range files {
		noFile := d.opts.Layout == layout.B && rec.Index.Unborn() ||
			f.Parts == jsonld.HeadPart && rec.Kind != driver.Ledger
		if noFile {
			if err := removeFile(f.path); err != nil {
				return written, ioError("remove", f.path, err)
			}
			continue
		}
		data, err := d.encode(rec, f, nil)
		if err != nil {
			return written, err
		}
		if err := replaceFile(f.path, data); err != nil {
			return written, ioError("write", f.path, err)
		}
		written = append(written, f.path)
	}
	return written, nil
}

func (d *Driver) writeDefining(rec *driver.Record, f recordFile) error {
	data, err := d.encode(rec, f, nil)
	if err != nil {
		return err
	}
	err = createFile(f.path, data)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("fs: create: %w: %s (written meanwhile by a writer that ignores the lock)", driver.ErrAlreadyExists, rec.ID)
	case errors.Is(err, errCollision):
		return fmt.Errorf("fs: create %s: %w: %s: %w", rec.ID, driver.ErrAlreadyExists, f.path, err)
	}
	return ioError("create", f.path, err)
}

// Update implements driver.Driver. It holds the lock of the one file that
// stores concern c (plus, once, the defining file's, to fold an inline
// index of a Fluree-written layout-B file into the index file), reads,
// compares with cond.Holds and writes that file.
func (d *Driver) Update(ctx context.Context, id driver.ID, c driver.Concern, cond driver.Condition, next driver.Value) (driver.Outcome, error) {
	if err := d.begin(ctx); err != nil {
		return driver.Outcome{}, err
	}
	if !c.Valid() {
		return driver.Outcome{}, fmt.Errorf("fs: %w: concern %v", driver.ErrInvalidArgument, c)
	}
	files, err := d.files(id)
	if err != nil {
		return driver.Outcome{}, err
	}
	if !present(files[0].path) {
		return driver.Outcome{}, notFound(id)
	}
	if d.opts.Layout == layout.B && c == driver.Index {
		return d.updateIndexB(ctx, id, files, cond, next)
	}
	target := fileOf(files, c)
	lk, err := d.lock(ctx, files[target].path)
	if err != nil {
		return driver.Outcome{}, lockErr(id, err)
	}
	out, gone, err := d.update(id, files, target, c, cond, next)
	lk.unlock(gone)
	return out, err
}

func lockErr(id driver.ID, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return notFound(id)
	}
	return err
}

// fileOf returns the index of the file holding concern c.
func fileOf(files []recordFile, c driver.Concern) int {
	for i, f := range files {
		if f.Parts&jsonld.PartOf(c) != 0 {
			return i
		}
	}
	return 0
}

// update runs under the lock of files[target]. gone reports that the
// record does not exist (so the lock file should go too).
func (d *Driver) update(id driver.ID, files []recordFile, target int, c driver.Concern, cond driver.Condition, next driver.Value) (out driver.Outcome, gone bool, err error) {
	def, _, err := d.readDoc(id, files[0].path)
	if err != nil || def == nil {
		return out, def == nil && err == nil, orNotFound(err, id)
	}
	prev := def
	var others []*jsonld.File
	if target != 0 {
		if prev, _, err = d.readDoc(id, files[target].path); err != nil {
			return out, false, err
		}
		others = append(others, prev)
	}
	rec, err := jsonld.Assemble(id, def, others...)
	if err != nil {
		return out, false, fmt.Errorf("fs: %s: %w", files[0].path, err)
	}
	return d.apply(rec, files[target], prev, c, cond, next)
}

func orNotFound(err error, id driver.ID) error {
	if err != nil {
		return err
	}
	return notFound(id)
}

// apply compares and, when cond holds, writes concern c of rec to f.
func (d *Driver) apply(rec *driver.Record, f recordFile, prev *jsonld.File, c driver.Concern, cond driver.Condition, next driver.Value) (driver.Outcome, bool, error) {
	cur := rec.Value(c)
	if cur == nil {
		// No such concern: its lock file (if its own) has no use either.
		return driver.Outcome{}, f.Parts == jsonld.PartOf(c), fmt.Errorf("fs: %w: %s is a %s and has no %s", driver.ErrNotFound, rec.ID, rec.Kind, c)
	}
	if !cond.Holds(*cur, next) {
		return driver.Outcome{Current: cur.Clone()}, false, nil
	}
	rec.SetValue(c, next.Clone())
	data, err := d.encode(rec, f, prev)
	if err != nil {
		return driver.Outcome{}, false, err
	}
	if err := replaceFile(f.path, data); err != nil {
		return driver.Outcome{}, false, ioError("write", f.path, err)
	}
	return driver.Outcome{Applied: true, Current: next.Clone()}, false, nil
}

// updateIndexB updates the index sidecar of layout B. A main file written
// by Fluree may hold an inline index too (the merge rule lets the sidecar
// win at equal or higher t); the first update folds it away, under both
// locks, so the sidecar alone holds the index from then on.
func (d *Driver) updateIndexB(ctx context.Context, id driver.ID, files []recordFile, cond driver.Condition, next driver.Value) (driver.Outcome, error) {
	held, err := d.lockAll(ctx, []string{files[1].path})
	if err != nil {
		return driver.Outcome{}, lockErr(id, err)
	}
	def, _, err := d.readDoc(id, files[0].path)
	if err == nil && def != nil && def.Index != nil {
		unlockAll(held, false)
		if held, err = d.lockAll(ctx, paths(files)); err != nil {
			return driver.Outcome{}, lockErr(id, err)
		}
		def, _, err = d.readDoc(id, files[0].path)
	}
	if err != nil || def == nil {
		unlockAll(held, def == nil && err == nil)
		return driver.Outcome{}, orNotFound(err, id)
	}
	defer unlockAll(held, false)
	idx, _, err := d.readDoc(id, files[1].path)
	if err != nil {
		return driver.Outcome{}, err
	}
	rec, err := jsonld.Assemble(id, def, idx)
	if err != nil {
		return driver.Outcome{}, fmt.Errorf("fs: %s: %w", files[0].path, err)
	}
	out, _, err := d.apply(rec, files[1], idx, driver.Index, cond, next)
	if err != nil || !out.Applied || def.Index == nil {
		return out, err
	}
	return out, d.foldInline(rec, files[0], def)
}

// foldInline rewrites the main file without its inline index, after the
// sidecar got the index: until then readers merge the two as before.
func (d *Driver) foldInline(rec *driver.Record, f recordFile, def *jsonld.File) error {
	data, err := d.encode(rec, f, def.WithoutIndex())
	if err != nil {
		return err
	}
	if err := replaceFile(f.path, data); err != nil {
		return ioError("write", f.path, err)
	}
	return nil
}

// Retract implements driver.Driver: one write of the file holding the
// identity and the status (the main file of layout B, the status file of
// layout C), under its lock.
func (d *Driver) Retract(ctx context.Context, id driver.ID, at time.Time) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	files, err := d.files(id)
	if err != nil {
		return err
	}
	if !present(files[0].path) {
		return notFound(id)
	}
	lk, err := d.lock(ctx, files[0].path)
	if err != nil {
		return lockErr(id, err)
	}
	gone, err := d.retract(id, files[0], at)
	lk.unlock(gone)
	return err
}

func (d *Driver) retract(id driver.ID, f recordFile, at time.Time) (gone bool, err error) {
	def, _, err := d.readDoc(id, f.path)
	if err != nil || def == nil {
		return def == nil && err == nil, orNotFound(err, id)
	}
	rec, err := jsonld.Assemble(id, def)
	if err != nil {
		return false, fmt.Errorf("fs: %s: %w", f.path, err)
	}
	if rec.Retracted {
		return false, nil
	}
	rec.Retracted = true
	rec.Status = &driver.Value{V: rec.Status.V + 1, Payload: driver.RetractedStatus(at)}
	data, err := d.encode(rec, f, def)
	if err != nil {
		return false, err
	}
	if err := replaceFile(f.path, data); err != nil {
		return false, ioError("write", f.path, err)
	}
	return false, nil
}

// Delete implements driver.Driver. Under every lock of the record it
// removes the defining file first (the record is gone from then on), then
// the other files, the record's temp-file debris and its lock files, and
// finally directories left empty. A defining file holding another record's
// @id is not removed (an error wrapping ErrInternal); one that does not
// decode is, so a corrupt record can be purged.
func (d *Driver) Delete(ctx context.Context, id driver.ID) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	files, err := d.files(id)
	if err != nil {
		return err
	}
	if !present(files[0].path) {
		return notFound(id)
	}
	held, err := d.lockAll(ctx, paths(files))
	if err != nil {
		return lockErr(id, err)
	}
	gone, err := d.delete(id, files)
	unlockAll(held, gone)
	if gone && err == nil {
		d.removeEmptyDirs(filepath.Dir(files[0].path))
	}
	return err
}

func (d *Driver) delete(id driver.ID, files []recordFile) (gone bool, err error) {
	def := files[0].path
	if _, _, err := d.readDoc(id, def); err != nil && !errors.Is(err, jsonld.ErrMalformed) {
		return false, err
	}
	if !present(def) {
		return true, notFound(id)
	}
	if err := removeFile(def); err != nil {
		return false, ioError("remove", def, err)
	}
	if err := syncDir(filepath.Dir(def)); err != nil {
		return true, ioError("sync directory of", def, err)
	}
	for _, f := range files[1:] {
		if err := removeFile(f.path); err != nil {
			return true, ioError("remove", f.path, err)
		}
	}
	removeTemps(paths(files))
	return true, nil
}

// removeTemps removes temp files left beside paths by writers that
// crashed. Under all of a record's locks no writer of it is running.
func removeTemps(paths []string) {
	if len(paths) == 0 {
		return
	}
	dir := filepath.Dir(paths[0])
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		for _, p := range paths {
			if isTempOf(e.Name(), filepath.Base(p)) {
				_ = os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
}

// isTempOf reports whether name is a temp file of base ("base.<16 hex>.tmp").
func isTempOf(name, base string) bool {
	mid, ok := strings.CutPrefix(name, base+".")
	if !ok {
		return false
	}
	hexPart, ok := strings.CutSuffix(mid, tmpSuffix)
	if !ok || len(hexPart) != 16 {
		return false
	}
	return strings.Trim(hexPart, "0123456789abcdef") == ""
}

// removeEmptyDirs removes dir and its parents while they are empty, up to
// (not including) ns@v2. A create racing with it re-makes what it needs.
func (d *Driver) removeEmptyDirs(dir string) {
	top := d.path(layout.Root)
	for dir != top && strings.HasPrefix(dir, top+string(filepath.Separator)) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}
