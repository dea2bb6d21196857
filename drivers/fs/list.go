package fs

import (
	"context"
	"os"
	"sort"
	"strings"

	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/internal/objstore"
)

// List implements objstore.Store, without tags: it walks ns@v2 in key
// order, a subdirectory sorting as its name and '/' ("a-b" < "a.json" <
// "a/x"), skipping subtrees outside prefix or before startAfter, and lock
// and temp files. A symbolic link to a directory is an entry carrying the
// error; a link to a file is listed, and reading it fails.
func (s store) List(ctx context.Context, prefix, startAfter string, fn func(objstore.Entry) error) error {
	return s.walk(ctx, layout.Root, prefix, startAfter, fn)
}

func (s store) walk(ctx context.Context, dirKey, prefix, startAfter string, fn func(objstore.Entry) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := s.d.path(dirKey)
	ents, err := s.d.dirs.read(dir)
	if err != nil {
		if absentErr(err) {
			return nil // removed by a delete meanwhile
		}
		return ioError("list", dir, err)
	}
	// Skip the entries before the token's name here by binary search,
	// so a page costs O(log n) here, not O(n).
	if rest, ok := strings.CutPrefix(startAfter, dirKey+"/"); ok {
		name, _, _ := strings.Cut(rest, "/")
		ents = ents[sort.Search(len(ents), func(i int) bool { return sortName(ents[i]) >= name }):]
	}
	for _, e := range ents {
		key := dirKey + "/" + e.name
		if e.link {
			if fi, err := os.Stat(s.d.path(key)); err == nil && fi.IsDir() {
				if inRange(key+"/", prefix, startAfter) {
					if err := fn(objstore.Entry{Key: key, Size: 1, Err: errLink(s.d.path(key))}); err != nil {
						return err
					}
				}
				continue
			}
		}
		if e.dir {
			sub := key + "/"
			if !(strings.HasPrefix(sub, prefix) || strings.HasPrefix(prefix, sub)) ||
				startAfter > sub && !strings.HasPrefix(startAfter, sub) {
				continue
			}
			if err := s.walk(ctx, key, prefix, startAfter, fn); err != nil {
				return err
			}
			continue
		}
		// A file's entry has the key it stores (see keyPath), no tag and a
		// nominal size: on a local disk a stat costs about the read it
		// could save, so List reads every file (objstore.Config.LocalReads).
		if strings.HasSuffix(e.name, lockSuffix) || strings.HasSuffix(e.name, tmpSuffix) {
			continue
		}
		if k := strings.TrimSuffix(key, "~"); inRange(k, prefix, startAfter) {
			if err := fn(objstore.Entry{Key: k, Size: 1}); err != nil {
				return err
			}
		}
	}
	return nil
}

func inRange(key, prefix, startAfter string) bool {
	return strings.HasPrefix(key, prefix) && key > startAfter
}
