package fs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/model"
)

var _ driver.Watcher = (*Driver)(nil)

// Watch implements driver.Watcher with fsnotify. Every write lands as a
// rename (or link) of a whole file, so each event names a file that is
// complete; the watcher re-reads that file's record and reports the concerns
// whose value changed since it last looked. Changes that follow each other
// faster than it re-reads are reported as one event spanning them (the feed
// is not exact). Directories created later (new names) are watched as they
// appear. Watching works for changes made by any process on this machine's
// local filesystem; network filesystems do not deliver the notifications.
func (d *Driver) Watch(ctx context.Context, opts driver.WatchOptions) (<-chan driver.Event, error) {
	if err := d.begin(ctx); err != nil {
		return nil, err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, ioError("watch", d.root, err)
	}
	root := filepath.Join(d.root, layout.Root)
	if err := os.MkdirAll(root, 0o755); err != nil {
		w.Close()
		return nil, ioError("create", root, err)
	}
	// Watch before reading the first snapshot, so no change falls between.
	if err := addTree(w, root); err != nil {
		w.Close()
		return nil, err
	}
	ws := &watchState{d: d, opts: opts, w: w, snap: map[model.ID]*model.Record{}}
	if err := ws.scan(ctx, root, false); err != nil {
		w.Close()
		return nil, err
	}
	out := make(chan driver.Event, 64)
	go ws.loop(ctx, out)
	return out, nil
}

type watchState struct {
	d    *Driver
	opts driver.WatchOptions
	w    *fsnotify.Watcher
	snap map[model.ID]*model.Record
	out  chan<- driver.Event
	ctx  context.Context
}

func addTree(w *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed while we walked
		}
		if err != nil {
			return ioError("watch", p, err)
		}
		if e.IsDir() {
			if err := w.Add(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return ioError("watch", p, err)
			}
		}
		return nil
	})
}

func (ws *watchState) matches(id model.ID) bool {
	if !ws.opts.ID.IsZero() {
		return id == ws.opts.ID
	}
	return strings.HasPrefix(id.String(), ws.opts.Prefix)
}

func (ws *watchState) loop(ctx context.Context, out chan<- driver.Event) {
	defer close(out)
	defer ws.w.Close()
	ws.out, ws.ctx = out, ctx
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-ws.w.Errors:
			ws.send(driver.Event{Err: ioError("watch", ws.d.root, err)})
			return
		case ev := <-ws.w.Events:
			if err := ws.handle(ctx, ev); err != nil {
				if ctx.Err() == nil {
					ws.send(driver.Event{Err: err})
				}
				return
			}
		}
	}
}

func (ws *watchState) send(ev driver.Event) bool {
	select {
	case ws.out <- ev:
		return true
	case <-ws.ctx.Done():
		return false
	}
}

func (ws *watchState) handle(ctx context.Context, ev fsnotify.Event) error {
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
			if err := addTree(ws.w, ev.Name); err != nil {
				return err
			}
			return ws.scan(ctx, ev.Name, true) // files may have landed before the watch did
		}
	}
	return ws.refreshPath(ctx, ev.Name)
}

// scan reads every record under dir into the snapshot, reporting changes
// when report is set.
func (ws *watchState) scan(ctx context.Context, dir string, report bool) error {
	return filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return ioError("read", p, err)
		}
		if e.IsDir() {
			return nil
		}
		if report {
			return ws.refreshPath(ctx, p)
		}
		id, ok, err := ws.idOf(p)
		if err != nil || !ok || !ws.matches(id) {
			return err
		}
		return ws.refresh(ctx, id, false)
	})
}

// idOf returns the ID a record file belongs to, found through its defining
// file; ok is false for files that are no record's.
func (ws *watchState) idOf(path string) (model.ID, bool, error) {
	rel, err := filepath.Rel(ws.d.root, path)
	if err != nil {
		return model.ID{}, false, nil
	}
	role, st := layout.Classify(ws.d.layout, filepath.ToSlash(rel))
	if role != layout.Defining && role != layout.Secondary {
		return model.ID{}, false, nil
	}
	def, ok := ws.definingPath(st)
	if !ok {
		return model.ID{}, false, nil
	}
	c, err := ws.d.classify(def)
	if c == nil || err != nil {
		return ws.known(st)
	}
	return c.id, true, nil
}

// known finds a watched record with stem st whose defining file is gone.
func (ws *watchState) known(st string) (model.ID, bool, error) {
	for id := range ws.snap {
		if layout.Stem(id) == st {
			return id, true, nil
		}
	}
	return model.ID{}, false, nil
}

func (ws *watchState) definingPath(st string) (string, bool) {
	ids := layout.Candidates(st)
	if len(ids) == 0 {
		return "", false
	}
	files, err := layout.Files(ws.d.layout, ids[0])
	if err != nil {
		return "", false
	}
	suffix := strings.TrimPrefix(files[0].Key, layout.Root+"/"+layout.Stem(ids[0]))
	return ws.d.path(layout.Root + "/" + st + suffix), true
}

func (ws *watchState) refreshPath(ctx context.Context, path string) error {
	id, ok, err := ws.idOf(path)
	if err != nil || !ok || !ws.matches(id) {
		return err
	}
	return ws.refresh(ctx, id, true)
}

// refresh re-reads record id and, when report is set, sends the events that
// take the snapshot to it and the watch's options select. A record that cannot be read keeps its place in
// the snapshot: one bad file neither ends the watch nor reads as a purge.
func (ws *watchState) refresh(ctx context.Context, id model.ID, report bool) error {
	rec, err := ws.d.Get(ctx, id)
	switch {
	case errors.Is(err, model.ErrNotFound):
		rec = nil
	case err != nil && driverutil.PerRecord(err):
		return nil
	case err != nil:
		return err
	}
	if report {
		for _, ev := range driverutil.Selected(ws.opts, ws.snap[id], rec) {
			if !ws.send(ev) {
				return nil
			}
		}
	}
	if rec == nil {
		delete(ws.snap, id)
	} else {
		ws.snap[id] = rec
	}
	return nil
}
