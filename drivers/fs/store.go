package fs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/model"
)

// records is embedded in Driver, under an unexported name.
type records = objstore.Records

// store is the objstore.Store of a Driver: a key is a file under the root,
// written by a synced temp file renamed or hard-linked into place under
// the flock of its sidecar lock file; a tag names the file (see tagOf).
type store struct{ d *Driver }

// keyPath returns the path of key; a key ending in ".lock", ".tmp" or '~'
// gets '~' appended, so that no object is another's lock or temp file.
func (s store) keyPath(key string) string {
	if strings.HasSuffix(key, lockSuffix) || strings.HasSuffix(key, tmpSuffix) || strings.HasSuffix(key, "~") {
		key += "~"
	}
	return s.d.path(key)
}

// Get implements objstore.Store: one open (refusing symbolic links),
// fstat and read.
func (s store) Get(_ context.Context, key string) ([]byte, string, error) {
	path := s.keyPath(key)
	data, fi, err := s.d.readNoLinks(path)
	if err != nil {
		return nil, "", ioError("read", path, err)
	}
	if data == nil {
		return nil, "", nil
	}
	return data, tagOf(fi, data), nil
}

// Head implements objstore.Store; its tag has no content part, so it only
// says whether key is present.
func (s store) Head(_ context.Context, key string) (string, error) {
	path := s.keyPath(key)
	if err := s.d.checkLinks(path); err != nil {
		return "", err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		if absentErr(err) {
			return "", nil
		}
		return "", ioError("stat", path, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() == 0 {
		return "", nil
	}
	return statTag(fi), nil
}

// MaybeApplied implements objstore.Store: a local system call has no lost
// answers (a failed fsync after a write wraps model.ErrUnavailable).
func (store) MaybeApplied(error) bool { return false }

// Put implements objstore.Store under the key's lock: with IfAbsent it
// hard-links a synced temp file into place (never replacing a file but a
// zero-length one); with a tag it compares the file's tag, then renames a
// synced temp file over it, as an unconditional write does; then it
// fsyncs the directory. A name taken by a directory is an error wrapping
// model.ErrAlreadyExists.
func (s store) Put(ctx context.Context, key string, data []byte, pc objstore.Precondition) (string, error) {
	path := s.keyPath(key)
	if err := s.d.checkLinks(path); err != nil {
		return "", err
	}
	lk, err := s.lockPut(ctx, path, pc)
	if err != nil {
		return "", err
	}
	gone := false
	defer func() { lk.unlock(gone) }()
	switch {
	case pc.Absent:
		err = createFile(path, data)
		if errors.Is(err, fs.ErrExist) {
			return "", objstore.Sentinel(fmt.Sprintf("fs: create %s: the file exists", path), objstore.ErrPrecondition)
		}
	case pc.Tag != "":
		if gone, err = s.compare(path, pc.Tag); err != nil {
			return "", err
		}
		err = replaceFile(path, data)
	default:
		err = replaceFile(path, data)
	}
	if errors.Is(err, errCollision) {
		return "", fmt.Errorf("fs: write %s: %w: %w", path, model.ErrAlreadyExists, err)
	}
	if err != nil {
		return "", ioError("write", path, err)
	}
	// Under the lock nothing replaces the file: this stat is every
	// later read's until the next write.
	fi, err := os.Lstat(path)
	if err != nil {
		return "", ioError("stat", path, err)
	}
	return tagOf(fi, data), nil
}

// lockPut takes the lock of path for a write under pc. A create makes the
// directories it needs (again, when a delete removes them meanwhile); a
// write on a tag makes none, and finds the file missing with them.
func (s store) lockPut(ctx context.Context, path string, pc objstore.Precondition) (*heldLock, error) {
	if pc.Tag != "" {
		lk, err := s.d.lock(ctx, path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errMissing(path)
		}
		return lk, err
	}
	for range 8 {
		err := mkdirs(filepath.Dir(path))
		switch {
		case errors.Is(err, errCollision):
			return nil, fmt.Errorf("fs: write %s: %w: %w", path, model.ErrAlreadyExists, err)
		case errors.Is(err, fs.ErrNotExist):
			continue // a delete removed a parent just made: make it again
		case err != nil:
			return nil, ioError("create directory for", path, err)
		}
		lk, err := s.d.lock(ctx, path)
		if !errors.Is(err, fs.ErrNotExist) {
			return lk, err
		}
		// A delete removed the emptied directory meanwhile: make it again.
	}
	return nil, fmt.Errorf("fs: write %s: %w: its directory keeps disappearing", path, model.ErrUnavailable)
}

// compare checks, under path's lock, that path holds the file tag names:
// an error wrapping objstore.ErrMissing when it is absent (gone: its lock
// file goes too), objstore.ErrPrecondition when it holds another.
func (s store) compare(path, tag string) (gone bool, err error) {
	data, fi, err := s.d.readNoLinks(path)
	switch {
	case err != nil:
		return false, ioError("read", path, err)
	case data == nil:
		return true, errMissing(path)
	case !tagMatches(tag, fi, data):
		return false, objstore.Sentinel(fmt.Sprintf("fs: %s changed since it was read", path), objstore.ErrPrecondition)
	}
	return false, nil
}

func errMissing(path string) error {
	return objstore.Sentinel(fmt.Sprintf("fs: %s: no such file", path), objstore.ErrMissing)
}

// Delete implements objstore.Store: under the key's lock it compares (as
// Put does), unlinks the file, fsyncs the directory, and removes the lock
// file, crashed writers' temp files and the directories left empty.
func (s store) Delete(ctx context.Context, key string, pc objstore.Precondition) error {
	path := s.keyPath(key)
	if err := s.d.checkLinks(path); err != nil {
		return err
	}
	lk, err := s.d.lock(ctx, path)
	if errors.Is(err, fs.ErrNotExist) { // no directory, no file
		if pc.Tag != "" {
			return errMissing(path)
		}
		return nil
	}
	if err != nil {
		return err
	}
	gone := false
	if pc.Tag != "" {
		gone, err = s.compare(path, pc.Tag)
	}
	if err == nil {
		if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = ioError("remove", path, rerr)
		}
		gone = err == nil
	}
	if gone {
		removeTemps(path)
	}
	lk.unlock(gone)
	if err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return ioError("sync directory of", path, err)
	}
	s.d.removeEmptyDirs(filepath.Dir(path))
	return nil
}

// removeTemps removes temp files crashed writers left beside path (under
// path's lock no writer of it runs).
func removeTemps(path string) {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if isTempOf(e.Name(), base) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
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
// (not including) ns@v2; a racing create makes them again (see lockPut).
func (d *Driver) removeEmptyDirs(dir string) {
	top := d.path(layout.Root)
	for dir != top && strings.HasPrefix(dir, top+string(filepath.Separator)) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// The tag of a file names the file a path holds, from its stat: device,
// inode, size, mtime and ctime; every write makes a new file, so a new
// inode. A freed inode may be reused at once, though, so a tag observed
// within racyWindow of the file's mtime or ctime (as git treats its index)
// also carries a hash of the contents, which a conditional write compares
// too; a tag observed later cannot recur (a later write has a later ctime).
func tagOf(fi os.FileInfo, data []byte) string {
	t := statTag(fi)
	if racy(fi) {
		sum := sha256.Sum256(data)
		t += "+" + hex.EncodeToString(sum[:12])
	}
	return t
}

func statTag(fi os.FileInfo) string {
	t := fmt.Sprintf("%x-%x", fi.Size(), fi.ModTime().UnixNano())
	if dev, ino, ctime, ok := statOf(fi); ok {
		t = fmt.Sprintf("%x-%x-%x-", dev, ino, ctime) + t
	}
	return t
}

func racy(fi os.FileInfo) bool {
	changed := fi.ModTime()
	if _, _, ctime, ok := statOf(fi); ok {
		if c := time.Unix(0, ctime); c.After(changed) {
			changed = c
		}
	}
	return time.Since(changed) < racyWindow
}

// tagMatches reports whether tag names the file of stat fi and contents data.
func tagMatches(tag string, fi os.FileInfo, data []byte) bool {
	st, sum, hashed := strings.Cut(tag, "+")
	if st != statTag(fi) {
		return false
	}
	if !hashed {
		return true
	}
	got := sha256.Sum256(data)
	return hex.EncodeToString(got[:12]) == sum
}
