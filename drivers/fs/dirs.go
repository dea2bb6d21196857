package fs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"nameservice.dev/nameservice/model"
)

type dirEnt struct {
	name string
	dir  bool // a directory (not a link to one)
	link bool // a symbolic link
}

// dirCache keeps the sorted entries of large directories between pages of
// a listing, used while the directory's inode, mtime and ctime are still
// the ones read, and kept only when they were racyWindow old when read (so
// no change goes unseen, as git does for its index).
type dirCache struct{ *lru.Cache[string, dirSnap] }

func newDirCache() dirCache {
	c, _ := lru.New[string, dirSnap](maxCachedDirs) // fails only for a size below 1
	return dirCache{c}
}

type dirSnap struct {
	ino          uint64
	mtime, ctime int64
	ents         []dirEnt
}

const (
	// minCachedDir is the smallest directory worth caching.
	minCachedDir = 256
	// maxCachedDirs bounds the cache; the least recently used go first.
	maxCachedDirs = 256
	racyWindow    = 2 * time.Second
)

// read returns the entries of dir in key order (a directory as its name
// and '/'). A large directory is statted after its read, and kept when it
// last changed at least racyWindow before the read began.
func (c dirCache) read(dir string) ([]dirEnt, error) {
	if s, known := c.Get(dir); known {
		fi, err := os.Lstat(dir)
		if err != nil {
			return nil, err
		}
		if _, ino, ctime, ok := statOf(fi); ok && s.ino == ino && s.mtime == fi.ModTime().UnixNano() && s.ctime == ctime {
			return s.ents, nil
		}
	}
	start := time.Now()
	list, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	ents := make([]dirEnt, len(list))
	for i, e := range list {
		ents[i] = dirEnt{name: e.Name(), dir: e.IsDir(), link: e.Type()&fs.ModeSymlink != 0}
	}
	sort.Slice(ents, func(i, j int) bool { return sortName(ents[i]) < sortName(ents[j]) })
	if len(ents) < minCachedDir {
		return ents, nil
	}
	if fi, err := os.Lstat(dir); err == nil {
		_, ino, ctime, ok := statOf(fi)
		if mtime := fi.ModTime().UnixNano(); ok && max(mtime, ctime) < start.Add(-racyWindow).UnixNano() {
			c.Add(dir, dirSnap{ino: ino, mtime: mtime, ctime: ctime, ents: ents})
		}
	}
	return ents, nil
}

func sortName(e dirEnt) string {
	if e.dir {
		return e.name + "/"
	}
	return e.name
}

// checkLinks returns an error naming the first symbolic link among the
// elements of path below the root (its directories, then the file). A
// missing element ends the check.
func (d *Driver) checkLinks(path string) error {
	rel, err := filepath.Rel(d.root, path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return nil
	}
	p := d.root
	for _, seg := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, seg)
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			return nil
		case fi.Mode()&fs.ModeSymlink != 0:
			return errLink(p)
		}
	}
	return nil
}

func errLink(p string) error {
	return fmt.Errorf("fs: %s: %w: a symbolic link; the nameservice does not follow links, which could lead outside its directory",
		p, model.ErrInternal)
}
