package fs

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"nameservice.dev/nameservice/model"
)

// tmpSuffix ends every temp file's name, "main.json.<16 hex>.tmp", which
// no record file's does.
const tmpSuffix = ".tmp"

// errCollision marks a create whose path is taken by something that is not
// a record file (a directory of nested names).
var errCollision = errors.New("path taken")

// readNoLinks returns the contents of a record file, nil when it is absent
// (missing, zero-length, or not a file), refusing a symbolic link among
// its path elements below the root with an error wrapping
// model.ErrInternal that names it.
func (d *Driver) readNoLinks(path string) ([]byte, os.FileInfo, error) {
	rel, ok := strings.CutPrefix(path, d.root+string(filepath.Separator))
	if !ok {
		return nil, nil, fmt.Errorf("fs: %w: %s is not below %s", model.ErrInvalidArgument, path, d.root)
	}
	f, ok, err := openNoLinks(d.realRoot(), rel)
	if !ok {
		if err := d.checkLinks(path); err != nil {
			return nil, nil, err
		}
		f, err = os.OpenFile(path, os.O_RDONLY|oNoFollow|oCloexec, 0)
	}
	switch {
	case err == nil:
		return readOpen(f)
	case absentErr(err):
		return nil, nil, nil
	case errors.Is(err, syscall.ELOOP):
		if err := d.checkLinks(path); err != nil {
			return nil, nil, err
		}
		return nil, nil, errLink(path)
	}
	return nil, nil, err
}

// realRoot returns the root with the links in its own path resolved (""
// until it exists), so that openNoLinks refuses only links below it.
func (d *Driver) realRoot() string {
	if p := d.real.Load(); p != nil {
		return *p
	}
	real, err := filepath.EvalSymlinks(d.root)
	if err != nil {
		return ""
	}
	d.real.Store(&real)
	return real
}

// readOpen reads the open file f and closes it; nil when it is empty or
// not a regular file.
func readOpen(f *os.File) ([]byte, os.FileInfo, error) {
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() == 0 {
		return nil, nil, nil
	}
	// Sized from the stat (files are replaced, never written in place).
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, nil, err
	}
	b := buf.Bytes()
	if len(b) == 0 {
		return nil, nil, nil
	}
	return b, fi, nil
}

func absentErr(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR)
}

func writeTemp(path string, data []byte) (string, error) {
	var suffix [8]byte
	for range 8 {
		_, _ = rand.Read(suffix[:])
		name := path + "." + hex.EncodeToString(suffix[:]) + tmpSuffix
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oCloexec, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if err = cmp.Or(err, f.Close()); err != nil {
			_ = os.Remove(name)
			return "", err
		}
		return name, nil
	}
	return "", fmt.Errorf("no free temp file name beside %s", path)
}

// replaceFile atomically replaces path with data: temp file, fsync, rename,
// fsync of the directory.
func replaceFile(path string, data []byte) error {
	tmp, err := writeTemp(path, data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

// createFile atomically creates path holding data, never replacing a
// record file: a hard link of a synced temp file, so the name appears
// complete or not at all; a zero-length file at path (an absent record) is
// replaced. Without hard links it claims the name with O_EXCL and renames
// the temp file onto it. It returns fs.ErrExist when path holds a record
// file, errCollision when it holds something else.
func createFile(path string, data []byte) error {
	tmp, err := writeTemp(path, data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	err = os.Link(tmp, path)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrExist):
		err = replaceEmpty(tmp, path)
	case errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) ||
		errors.Is(err, syscall.EMLINK) || errors.Is(err, syscall.EXDEV): // hard links unsupported
		err = claimAndRename(tmp, path)
	}
	if err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func replaceEmpty(tmp, path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w by a %s", errCollision, fi.Mode().Type())
	}
	if fi.Size() != 0 {
		return fs.ErrExist
	}
	return os.Rename(tmp, path)
}

func claimAndRename(tmp, path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oCloexec, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return replaceEmpty(tmp, path)
	}
	if err != nil {
		return err
	}
	_ = f.Close()
	return os.Rename(tmp, path)
}

// syncDir fsyncs a directory so the renames and links in it are durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	_ = f.Close()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		return nil // file systems that cannot sync directories
	}
	return err
}

// mkdirs creates dir and any missing parents, fsyncing each parent after
// adding an entry to it; a file in the way is a collision.
func mkdirs(dir string) error {
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%w: %s is a file", errCollision, dir)
		}
		return nil
	}
	if errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("%w: a parent of %s is a file", errCollision, dir)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirs(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return syncDir(parent)
}

// ioError classifies an operating-system error as model.ErrUnavailable,
// which also allows a write that landed (a failed directory fsync).
func ioError(op, path string, err error) error {
	if errors.Is(err, model.ErrInternal) {
		return err // already classified and naming the path (a symbolic link)
	}
	return fmt.Errorf("fs: %s %s: %w: %v", op, path, model.ErrUnavailable, err)
}
