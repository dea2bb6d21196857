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
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/model"
)

var _ driver.Watcher = (*Driver)(nil)

// Watch implements driver.Watcher with fsnotify. Every write lands as a
// rename (or link) of a whole file, so each event names a complete file;
// the watcher re-reads its record and reports the concerns whose value
// changed since it last looked (changes faster than it re-reads come as
// one event). New directories are watched as they appear. Network
// filesystems do not deliver the notifications.
func (d *Driver) Watch(ctx context.Context, opts driver.WatchOptions) (<-chan driver.Event, error) {
	if err := objstore.Begin(ctx, d.records); err != nil {
		return nil, err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, ioError("watch", d.root, err)
	}
	root := filepath.Join(d.root, layout.Root)
	ws := &watchState{d: d, opts: opts, w: w, snap: map[model.ID]*model.Record{}, out: make(chan driver.Event, 64)}
	if err = os.MkdirAll(root, 0o755); err != nil {
		err = ioError("create", root, err)
	} else {
		err = ws.watchTree(ctx, root, false)
	}
	if err != nil {
		w.Close()
		return nil, err
	}
	go ws.loop(ctx)
	return ws.out, nil
}

type watchState struct {
	d    *Driver
	opts driver.WatchOptions
	w    *fsnotify.Watcher
	snap map[model.ID]*model.Record
	out  chan driver.Event
}

// watchTree watches dir and the directories below it, and reads every
// record under it into the snapshot, reporting changes when report is set.
// A directory is watched before its files are read, so that no change
// falls between.
func (ws *watchState) watchTree(ctx context.Context, dir string, report bool) error {
	return filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil // removed while we walked
		case err != nil:
			return ioError("watch", p, err)
		case !e.IsDir():
			return ws.refreshPath(ctx, p, report)
		}
		if err := ws.w.Add(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return ioError("watch", p, err)
		}
		return nil
	})
}

func (ws *watchState) loop(ctx context.Context) {
	defer close(ws.out)
	defer ws.w.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-ws.w.Errors:
			driverutil.Send(ctx, ws.out, driver.Event{Err: ioError("watch", ws.d.root, err)})
			return
		case ev := <-ws.w.Events:
			if err := ws.handle(ctx, ev); err != nil {
				if ctx.Err() == nil {
					driverutil.Send(ctx, ws.out, driver.Event{Err: err})
				}
				return
			}
		}
	}
}

func (ws *watchState) handle(ctx context.Context, ev fsnotify.Event) error {
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
			return ws.watchTree(ctx, ev.Name, true) // files may have landed before the watch did
		}
	}
	return ws.refreshPath(ctx, ev.Name, true)
}

// idOf returns the ID a record file belongs to; ok is false for files that
// are no record's.
func (ws *watchState) idOf(path string) (model.ID, bool) {
	rel, err := filepath.Rel(ws.d.root, path)
	if err != nil {
		return model.ID{}, false
	}
	role, st := layout.Classify(ws.d.layout, filepath.ToSlash(rel))
	ids := layout.Candidates(st)
	if role != layout.Defining && role != layout.Secondary || len(ids) == 0 {
		return model.ID{}, false
	}
	if len(ids) == 1 && !layout.Shortened(st) {
		return ids[0], true
	}
	// The key fits several IDs, or has a shortened segment: the defining
	// file's @id tells.
	data, _, err := ws.d.readNoLinks(ws.d.path(layout.StemFiles(ws.d.layout, st)[0].Key))
	if err == nil && data != nil {
		if id, err := objstore.StatedID("fs", "", data, st); err == nil {
			return id, true
		}
	}
	// Gone, or unreadable: a watched record of that stem.
	for id := range ws.snap {
		if layout.Stem(id) == st {
			return id, true
		}
	}
	return model.ID{}, false
}

// refreshPath refreshes the record of the file at path when the watch
// selects it.
func (ws *watchState) refreshPath(ctx context.Context, path string, report bool) error {
	id, ok := ws.idOf(path)
	if ok && (id == ws.opts.ID || ws.opts.ID.IsZero() && strings.HasPrefix(id.String(), ws.opts.Prefix)) {
		return ws.refresh(ctx, id, report)
	}
	return nil
}

// refresh re-reads record id and, when report is set, sends the events that
// take the snapshot to it and the watch selects. A record that cannot be
// read keeps its place: one bad file neither ends the watch nor reads as a
// purge.
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
			if !driverutil.Send(ctx, ws.out, ev) {
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
