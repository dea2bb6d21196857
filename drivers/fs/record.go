package fs

import (
	"context"
	"fmt"
	"os"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/jsonld"
)

// loaded is a record as read from its files.
type loaded struct {
	rec   *driver.Record
	files []*jsonld.File // per file of the layout, nil when absent
	def   os.FileInfo    // the defining file read
}

// readDoc reads and decodes one record file of id; nil when absent. A file
// that does not decode, or that carries another record's @id, is an error
// wrapping driver.ErrInternal that names the file.
func (d *Driver) readDoc(id driver.ID, path string) (*jsonld.File, os.FileInfo, error) {
	data, fi, err := readFile(path)
	if err != nil {
		return nil, nil, ioError("read", path, err)
	}
	if data == nil {
		return nil, nil, nil
	}
	doc, err := jsonld.Decode(data)
	if err != nil {
		return nil, nil, fmt.Errorf("fs: %s: %w", path, err)
	}
	if doc.ID != "" && doc.ID != id.String() {
		return nil, nil, fmt.Errorf("fs: %s: %w: the file holds record %q, not %s (their IDs map to one path)",
			path, driver.ErrInternal, doc.ID, id)
	}
	return doc, fi, nil
}

// load reads record id, or returns nil when it does not exist. It reads the
// defining file first and the others after it; when one of those is
// missing it checks the defining file is still the one it read (a delete
// removes it first) and otherwise starts over. Every push replaces the
// defining file, so a record under a stream of pushes can keep changing:
// after a few tries load reads it under the defining file's lock, which
// every writer of that file (create and delete included) holds.
func (d *Driver) load(ctx context.Context, id driver.ID, files []recordFile) (*loaded, error) {
	for range 3 {
		l, stable, err := d.loadOnce(id, files)
		if err != nil || stable {
			return l, err
		}
	}
	lk, err := d.lock(ctx, files[0].path)
	if err != nil {
		return nil, lockErr(id, err)
	}
	l, _, err := d.loadOnce(id, files)
	lk.unlock(l == nil && err == nil)
	return l, err
}

func (d *Driver) loadOnce(id driver.ID, files []recordFile) (*loaded, bool, error) {
	def, fi, err := d.readDoc(id, files[0].path)
	if err != nil || def == nil {
		return nil, true, err
	}
	l := &loaded{files: make([]*jsonld.File, len(files)), def: fi}
	l.files[0] = def
	missing := false
	for i, f := range files[1:] {
		if l.files[i+1], _, err = d.readDoc(id, f.path); err != nil {
			return nil, true, err
		}
		missing = missing || l.files[i+1] == nil
	}
	if missing && !stillSame(files[0].path, fi) {
		return nil, false, nil
	}
	if l.rec, err = jsonld.Assemble(id, def, l.files[1:]...); err != nil {
		return nil, true, fmt.Errorf("fs: %s: %w", files[0].path, err)
	}
	return l, true, nil
}

func stillSame(path string, fi os.FileInfo) bool {
	now, err := os.Stat(path)
	return err == nil && os.SameFile(fi, now)
}

// Get implements driver.Driver. It returns an error wrapping ErrNotFound
// when the record's defining file is absent (missing or empty), and one
// wrapping ErrInternal, naming the file, when a file of the record does not
// decode or holds another record's @id.
func (d *Driver) Get(ctx context.Context, id driver.ID) (*driver.Record, error) {
	if err := d.begin(ctx); err != nil {
		return nil, err
	}
	files, err := d.files(id)
	if err != nil {
		return nil, err
	}
	l, err := d.load(ctx, id, files)
	if err != nil {
		return nil, err
	}
	if l == nil {
		return nil, notFound(id)
	}
	return l.rec, nil
}

func notFound(id driver.ID) error {
	return fmt.Errorf("fs: %w: %s", driver.ErrNotFound, id)
}
