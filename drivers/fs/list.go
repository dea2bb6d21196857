package fs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/internal/pagetoken"
	"nameservice.dev/nameservice/jsonld"
)

// DefaultPageSize is the page size of List when none is asked for.
const DefaultPageSize = 100

// candidate is a defining file found by List and the ID it belongs to.
// When the file cannot be read or placed, err says why and id is the ID its
// path suggests: the error is reported only by the page that reaches that
// position, so a listing can go on past it with a later page token.
type candidate struct {
	id   driver.ID
	path string
	err  error
}

// List implements driver.Driver. It walks ns@v2 for defining files (temp
// and lock files, and every other file, are ignored), orders their IDs,
// and reads records after the page token until the page is full and one
// more match shows whether another page follows. The page token is the last
// ID returned, so pages stay correct while records come and go. A file of
// the other layout, a defining file at a path no ID maps to, and a record
// that cannot be read are reported in Page.Failed, naming the file.
//
// For a file more than two segments below ns@v2 the path alone does not
// give the ID (ns@v2/a/b/main.json is a/b:main or a:b/main): its @id
// decides, else its name and branch members, else the last segment is the
// branch.
func (d *Driver) List(ctx context.Context, opts driver.ListOptions) (*driver.Page, error) {
	after, err := pagetoken.Decode(opts.PageToken)
	if err != nil {
		return nil, err
	}
	if err := d.begin(ctx); err != nil {
		return nil, err
	}
	cands, err := d.candidates(ctx, opts.Prefix)
	if err != nil {
		return nil, err
	}
	size := opts.PageSize
	if size <= 0 {
		size = DefaultPageSize
	}
	page := &driver.Page{}
	last := ""
	for _, c := range cands {
		if s := c.id.String(); s <= after || !strings.HasPrefix(s, opts.Prefix) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var rec *driver.Record
		err := c.err
		if err == nil {
			rec, err = d.listRecord(ctx, c)
		}
		if err == nil && (rec == nil || !driver.Matches(rec, opts)) {
			continue
		}
		if len(page.Records)+len(page.Failed) == size {
			page.NextPageToken = pagetoken.Encode(last)
			break
		}
		if err != nil {
			if !driver.PerRecord(err) {
				return nil, err
			}
			page.Failed = append(page.Failed, &driver.RecordError{ID: c.id, Object: c.path, Err: err})
		} else {
			page.Records = append(page.Records, rec)
		}
		last = c.id.String()
	}
	return page, nil
}

// listRecord reads one listed record; nil when it vanished meanwhile.
func (d *Driver) listRecord(ctx context.Context, c candidate) (*driver.Record, error) {
	files, err := d.files(c.id)
	if err != nil {
		return nil, fmt.Errorf("fs: %s: %w", c.path, err)
	}
	l, err := d.load(ctx, c.id, files)
	if err != nil || l == nil {
		return nil, err
	}
	return l.rec, nil
}

// candidates returns the defining files under ns@v2 whose IDs could start
// with prefix, ordered by ID.
func (d *Driver) candidates(ctx context.Context, prefix string) ([]candidate, error) {
	top := d.path(layout.Root)
	var out []candidate
	entries, err := os.ReadDir(top)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, ioError("list", top, err)
	}
	for _, e := range entries {
		if !topMatches(e.Name(), prefix) {
			continue
		}
		if err := d.walk(ctx, filepath.Join(top, e.Name()), &out); err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id.String() < out[j].id.String() })
	return out, nil
}

// topMatches reports whether a top-level entry of ns@v2 (the first segment
// of a name) can hold IDs starting with prefix.
func topMatches(entry, prefix string) bool {
	first, _, cut := strings.Cut(prefix, "/")
	if i := strings.IndexByte(first, ':'); i >= 0 {
		first, cut = first[:i], true
	}
	if cut {
		return entry == first
	}
	return strings.HasPrefix(entry, first)
}

func (d *Driver) walk(ctx context.Context, dir string, out *[]candidate) error {
	return filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed by a delete meanwhile
			}
			return ioError("list", path, err)
		}
		if e.IsDir() {
			return ctx.Err()
		}
		c, err := d.classify(path)
		if err != nil {
			c, err = d.misplaced(path, err)
		}
		if err != nil || c == nil {
			return err
		}
		*out = append(*out, *c)
		return nil
	})
}

// misplaced returns a candidate carrying classifyErr for a record file that
// cannot be read or placed, at the ID its path suggests; it returns
// classifyErr itself when the path suggests none.
func (d *Driver) misplaced(path string, classifyErr error) (*candidate, error) {
	rel, err := filepath.Rel(d.root, path)
	if err != nil {
		return nil, classifyErr
	}
	for _, l := range []layout.Layout{d.opts.Layout, otherLayout(d.opts.Layout)} {
		if role, st := l.Classify(filepath.ToSlash(rel)); role == layout.Defining {
			if id, ok := layout.PathDefault(st); ok {
				return &candidate{id: id, path: path, err: classifyErr}, nil
			}
		}
	}
	return nil, classifyErr
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
