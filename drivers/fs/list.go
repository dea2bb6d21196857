package fs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// DefaultPageSize is the page size of List when none is asked for.
const DefaultPageSize = objstore.DefaultPageSize

// List implements objstore.Store: the files under prefix after
// startAfter, in key order, without tags (see entry).
func (s store) List(ctx context.Context, prefix, startAfter string, fn func(key, tag string, size int64) error) error {
	return s.ListEntries(ctx, prefix, startAfter, func(e objstore.Entry) error {
		if e.Err != nil {
			return e.Err
		}
		return fn(e.Key, e.Tag, e.Size)
	})
}

// ListEntries implements objstore.EntryLister, for the listing the object
// stores share (objstore.Records.List): it walks ns@v2 in key order, a
// directory's entries sorted with each subdirectory as its name and '/',
// so "a-b" < "a.json" < "a/x". Subtrees outside prefix or wholly before
// startAfter are not read. Lock and temp files are left out. A symbolic link to a directory is an entry carrying the error;
// a link to a file is listed, and reading it fails.
func (s store) ListEntries(ctx context.Context, prefix, startAfter string, fn func(objstore.Entry) error) error {
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
	// Entries that sort before the token's name in this directory are all
	// skipped below: find the first one left by binary search, so that a
	// page of a directory of n entries costs O(log n) here, not O(n).
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
		if ent, ok := s.entry(key, e); ok && inRange(ent.Key, prefix, startAfter) {
			if err := fn(ent); err != nil {
				return err
			}
		}
	}
	return nil
}

// entry returns the listing entry of the file at key: the key it stores
// (see keyPath). ok is false for lock and temp files. The entry has no
// tag and a nominal size: on a local disk a stat costs about what the read
// it could save does, so List reads every file (a zero-length one reads
// as absent) and keeps none in the cache (objstore.Config.LocalReads).
func (s store) entry(key string, e dirEnt) (objstore.Entry, bool) {
	if strings.HasSuffix(e.name, lockSuffix) || strings.HasSuffix(e.name, tmpSuffix) {
		return objstore.Entry{}, false
	}
	return objstore.Entry{Key: strings.TrimSuffix(key, "~"), Size: 1}, true
}

// inRange reports whether key is under prefix and after startAfter.
func inRange(key, prefix, startAfter string) bool {
	return strings.HasPrefix(key, prefix) && key > startAfter
}

// candidate is a defining file and the ID it belongs to (see classify).
type candidate struct {
	id   model.ID
	path string
}

// classify returns the candidate for a defining file, nil for any other
// file, and an error naming a file of the other layout or a defining file
// no ID maps to. Watch uses it to map a changed file to its record.
func (d *Driver) classify(path string) (*candidate, error) {
	rel, err := filepath.Rel(d.root, path)
	if err != nil {
		return nil, nil
	}
	role, st := layout.Classify(d.layout, filepath.ToSlash(rel))
	switch role {
	case layout.NotRecord, layout.Secondary:
		return nil, nil
	case layout.OtherLayout:
		return nil, fmt.Errorf("fs: %s: %w: a file of the other layout in a layout %s store (open it with ?layout=%s)",
			path, model.ErrInternal, d.layout, layout.Other(d.layout))
	}
	if ids := layout.Candidates(st); len(ids) == 1 && !layout.Shortened(st) {
		return &candidate{id: ids[0], path: path}, nil
	}
	return d.nestedID(path, st)
}

// nestedID reads the ID of a defining file whose path fits several IDs, or
// has a shortened segment, and checks the ID's path is this one.
func (d *Driver) nestedID(path, st string) (*candidate, error) {
	data, _, err := d.readNoLinks(path)
	if err != nil {
		return nil, ioError("read", path, err)
	}
	if data == nil {
		return nil, nil
	}
	doc, err := jsonld.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("fs: %s: %w", path, err)
	}
	id, ok, err := doc.RecordID()
	if err != nil {
		return nil, fmt.Errorf("fs: %s: %w", path, err)
	}
	if !ok {
		if id, ok = layout.PathDefault(st); !ok {
			return nil, fmt.Errorf("fs: %s: %w: no valid record ID maps to this path", path, model.ErrInternal)
		}
	}
	if layout.Stem(id) != st {
		return nil, fmt.Errorf("fs: %s: %w: the file holds record %s, whose path is another", path, model.ErrInternal, id)
	}
	return &candidate{id: id, path: path}, nil
}
