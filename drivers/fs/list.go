package fs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/jsonld"
)

// DefaultPageSize is the page size of List when none is asked for.
const DefaultPageSize = 100

// candidate is a defining file and the ID it belongs to (see classify).
type candidate struct {
	id   driver.ID
	path string
}

// List implements driver.Driver with the listing the object stores share
// (objstore.ListPage): one walk in key order from where the last page
// stopped, skipping the subtrees that sort before it, and the records of a
// page read in parallel (ListParallel at a time). A file of the other
// layout, a defining file at a path no ID maps to, a record that cannot be
// read and a symbolic link are reported in Page.Failed, naming the file.
//
// For a file more than two segments below ns@v2 the path alone does not
// give the ID (ns@v2/a/b/main.json is a/b:main or a:b/main): its @id
// decides, else its name and branch members, else the last segment is the
// branch.
func (d *Driver) List(ctx context.Context, opts driver.ListOptions) (*driver.Page, error) {
	if err := d.begin(ctx); err != nil {
		return nil, err
	}
	cfg := objstore.ListConfig{Name: "fs", Layout: d.opts.Layout, Parallel: d.opts.ListParallel}
	return objstore.ListPage(ctx, source{d}, cfg, opts)
}

// source is the objstore.Source of a Driver: the files under its root.
type source struct{ d *Driver }

func (s source) Object(key string) string { return s.d.path(key) }

func (s source) ReadFile(_ context.Context, key string) ([]byte, string, error) {
	path := s.d.path(key)
	if err := s.d.checkLinks(path); err != nil {
		return nil, "", err
	}
	data, _, err := readFile(path)
	if err != nil {
		return nil, "", ioError("read", path, err)
	}
	return data, "", nil
}

// ReadListed reads the defining file and the other files the walk showed
// (all of them, as Get does, when it does not know them). The walk has
// seen the record's directories as directories, not links, so only the
// files are checked (opened with O_NOFOLLOW). As on the object stores, a
// listing is not a snapshot: a record written while it runs may be seen
// as it was or as it became, file by file.
func (s source) ReadListed(ctx context.Context, id driver.ID, key, _ string, present map[string]string) (*driver.Record, error) {
	files, err := s.d.filePaths(id)
	if err != nil {
		return nil, fmt.Errorf("fs: %s: %w", s.d.path(key), err)
	}
	if present != nil {
		return s.d.readListed(id, files, present)
	}
	l, err := s.d.load(ctx, id, files)
	if err != nil || l == nil {
		return nil, err
	}
	return l.rec, nil
}

// ListKeys walks ns@v2 in key order: a directory's entries sorted with
// each subdirectory as its name and '/', so "a-b" < "a.json" < "a/x".
// Subtrees outside prefix or wholly before startAfter are not read. A
// symbolic link to a directory is an entry carrying the error; a link to a
// file is listed, and reading it fails.
func (s source) ListKeys(ctx context.Context, prefix, startAfter string, fn func(objstore.Entry) error) error {
	return s.walk(ctx, layout.Root, prefix, startAfter, fn)
}

func (s source) walk(ctx context.Context, dirKey, prefix, startAfter string, fn func(objstore.Entry) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ents, err := s.d.dirs.read(s.d.path(dirKey))
	if err != nil {
		if absentErr(err) {
			return nil // removed by a delete meanwhile
		}
		return ioError("list", s.d.path(dirKey), err)
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
				sub := key + "/"
				if inRange(sub, prefix, startAfter) {
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
		if strings.HasPrefix(key, prefix) && key > startAfter {
			if err := fn(objstore.Entry{Key: key, Size: 1}); err != nil {
				return err
			}
		}
	}
	return nil
}

// inRange reports whether key is under prefix and after startAfter.
func inRange(key, prefix, startAfter string) bool {
	return strings.HasPrefix(key, prefix) && key > startAfter
}

// classify returns the candidate for a defining file, nil for any other
// file, and an error naming a file of the other layout or a defining file
// no ID maps to.
func (d *Driver) classify(path string) (*candidate, error) {
	rel, err := filepath.Rel(d.root, path)
	if err != nil {
		return nil, nil
	}
	role, st := d.opts.Layout.Classify(filepath.ToSlash(rel))
	switch role {
	case layout.NotRecord, layout.Secondary:
		return nil, nil
	case layout.OtherLayout:
		return nil, fmt.Errorf("fs: %s: %w: a file of the other layout in a layout %s store (open it with ?layout=%s)",
			path, driver.ErrInternal, d.opts.Layout, otherLayout(d.opts.Layout))
	}
	if ids := layout.Candidates(st); len(ids) == 1 && !layout.Shortened(st) {
		return &candidate{id: ids[0], path: path}, nil
	}
	return d.nestedID(path, st)
}

func otherLayout(l layout.Layout) layout.Layout {
	if l == layout.B {
		return layout.C
	}
	return layout.B
}

// nestedID reads the ID of a defining file whose path fits several IDs, or
// has a shortened segment, and checks the ID's path is this one.
func (d *Driver) nestedID(path, st string) (*candidate, error) {
	data, _, err := readFile(path)
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
			return nil, fmt.Errorf("fs: %s: %w: no valid record ID maps to this path", path, driver.ErrInternal)
		}
	}
	if layout.Stem(id) != st {
		return nil, fmt.Errorf("fs: %s: %w: the file holds record %s, whose path is another", path, driver.ErrInternal, id)
	}
	return &candidate{id: id, path: path}, nil
}

// readListed reads the defining file and the files in present; nil when
// the defining file is gone.
func (d *Driver) readListed(id driver.ID, files []recordFile, present map[string]string) (*driver.Record, error) {
	def, _, err := d.readDoc(id, files[0].path)
	if err != nil || def == nil {
		return nil, err
	}
	others := make([]*jsonld.File, len(files)-1)
	for i, f := range files[1:] {
		if _, ok := present[f.Key]; !ok {
			continue
		}
		if others[i], _, err = d.readDoc(id, f.path); err != nil {
			return nil, err
		}
	}
	rec, err := jsonld.Assemble(id, def, others...)
	if err != nil {
		return nil, fmt.Errorf("fs: %s: %w", files[0].path, err)
	}
	return rec, nil
}
