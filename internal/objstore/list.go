package objstore

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// DefaultPageSize is the page size of List when none is asked for.
const DefaultPageSize = 100

// DefaultListParallel bounds the objects List reads at once when
// Config.ListParallel is 0.
const DefaultListParallel = 16

// candidate is a defining file found by List and the ID it belongs to; err
// says why one cannot be placed, at the ID its key suggests.
type candidate struct {
	pos     string // where it sorts: its ID, or its key's ID floor when no ID maps to it
	id      model.ID
	key     string
	tag     string // the listing's
	err     error
	present map[string]string // the record's other files listed: key -> tag
}

var errPageFull = errors.New("page full")

// Entry is one key a Store lists, with its tag ("" when the listing does
// not give it) and size, or the error that keeps it from being a record
// file (the filesystem driver's symbolic link to a directory), which List
// puts in Page.Failed.
type Entry struct {
	Key  string
	Tag  string
	Size int64
	Err  error
}

// readListedFunc reads record id whose defining file was listed at key and
// tag, with the other files listed (present: key to tag, nil when
// unknown); nil when it vanished.
type readListedFunc func(ctx context.Context, id model.ID, key, tag string,
	present map[string]string) (*model.Record, error)

// List implements driver.Driver in one pass over the keys from where the
// last page stopped (the token holds the last ID returned and the key to
// list after), so a full listing of N records costs O(N) requests. Key
// order is not ID order (':' becomes '/', a suffix begins with '.', long
// segments are shortened), so candidates wait in a heap ordered by ID until
// the listing has passed every key that could hold a smaller ID (idFloor),
// then are read until the page is full and one more match shows that
// another follows. A defining file whose key fits several IDs is read for
// its @id first. A file of the other layout, a defining file no ID maps
// to, and a record that cannot be read are reported in Page.Failed.
func (r *Records) List(ctx context.Context, opts driver.ListOptions) (*driver.Page, error) {
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	return r.listPage(ctx, opts, r.loadListed)
}

func (r *Records) listPage(ctx context.Context, opts driver.ListOptions, read readListedFunc) (*driver.Page, error) {
	after, resume, err := decodeToken(opts.PageToken)
	if err != nil {
		return nil, err
	}
	l := &lister{r: r, readRec: read, par: driverutil.Positive(r.cfg.ListParallel, DefaultListParallel),
		opts: opts, after: after, size: driverutil.Positive(opts.PageSize, DefaultPageSize),
		page: &driver.Page{}, seen: map[string]string{}}
	defer l.stop()
	prefix := IDKeyPrefix(opts.Prefix)
	if resume < prefix {
		resume = ""
	}
	err = r.store.List(ctx, prefix, resume, func(e Entry) error { return l.visit(ctx, e) })
	if err == nil { // the listing has ended: read what is left
		err = l.resolveNested(ctx)
	}
	if err == nil {
		l.promote("", true)
		err = l.readReady(ctx, true)
	}
	switch {
	case errors.Is(err, errPageFull):
		l.page.NextPageToken = l.nextToken()
	case err != nil:
		return nil, err
	}
	return l.page, nil
}

type lister struct {
	r       *Records
	readRec readListedFunc
	par     int // reads at once
	opts    driver.ListOptions
	after   string
	size    int
	page    *driver.Page
	last    string // the ID of the last entry of the page
	// waiting holds candidates after the token, ordered by ID; ready
	// those whose turn has come, in ID order.
	waiting candHeap
	ready   []*candidate
	// reading holds the reads started, in ID order, not yet taken into
	// the page; jobs feeds the page's workers.
	reading []*pendingRead
	jobs    chan *pendingRead
	workers sync.WaitGroup
	// nested holds the keys of defining files whose @id must be read;
	// floor is the ID floor of the key listed before the first.
	nested []string
	floor  string
	seen   map[string]string // the non-defining record files listed so far -> tag
}

func (l *lister) visit(ctx context.Context, e Entry) error {
	key, tag, size := e.Key, e.Tag, e.Size
	if err := ctx.Err(); err != nil {
		return err
	}
	floor := idFloor(key)
	if len(l.nested) > 0 {
		floor = l.floor
	}
	c, amb, err := l.r.classify(key)
	if e.Err != nil {
		c, amb, err = nil, false, e.Err
	}
	switch {
	case err != nil:
		m, ok := misplaced(key, err)
		switch {
		case ok:
		case e.Err != nil: // no ID to give it: it sorts where its key does
			m = candidate{pos: idFloor(key), key: key, err: err}
		default: // a store of the other layout
			return err
		}
		l.add(&m)
	case amb:
		if id, ok := l.r.knownID(key, tag); ok {
			l.add(&candidate{id: id, key: key, tag: NormTag(tag)})
			break
		}
		if len(l.nested) == 0 {
			l.floor = floor
		}
		l.nested = append(l.nested, key)
		if len(l.nested) >= l.par {
			if err := l.resolveNested(ctx); err != nil {
				return err
			}
		}
	case c != nil && size > 0:
		c.tag = NormTag(tag)
		l.add(c)
	case c == nil && size > 0 && strings.HasSuffix(key, ".json"):
		l.seen[key] = NormTag(tag)
	}
	if len(l.nested) > 0 {
		floor = min(floor, l.floor)
	}
	l.promote(floor, false)
	return l.readReady(ctx, false)
}

// add puts c, with its record's other files listed so far, in the heap
// when it comes after the token and matches the prefix.
func (l *lister) add(c *candidate) {
	if c.pos == "" {
		c.pos = c.id.String()
	}
	if files, err := layout.Files(l.r.cfg.Layout, c.id); err == nil && c.err == nil {
		c.present = map[string]string{}
		for _, f := range files[1:] {
			if t, ok := l.seen[f.Key]; ok {
				c.present[f.Key] = t
				delete(l.seen, f.Key)
			}
		}
	}
	if c.pos <= l.after || !strings.HasPrefix(c.pos, l.opts.Prefix) {
		return
	}
	heap.Push(&l.waiting, c)
}

// promote moves the waiting candidates whose IDs sort before floor (all
// when all is set) to ready.
func (l *lister) promote(floor string, all bool) {
	for l.waiting.Len() > 0 && (all || l.waiting[0].pos < floor) {
		l.ready = append(l.ready, heap.Pop(&l.waiting).(*candidate))
	}
}

// readReady starts reads of ready candidates, in ID order, on the page's
// workers, and takes their records into the page in that order:
// errPageFull when the page is full and one more match is known. Only the
// records the page still needs (and the one more) are read at once, so a
// page reads no record it does not return but that one. Unless all is set
// it waits for a read only when a ready candidate waits for room, so the
// listing goes on meanwhile.
func (l *lister) readReady(ctx context.Context, all bool) error {
	for {
		need := l.size + 1 - len(l.page.Records) - len(l.page.Failed)
		for len(l.ready) > 0 && len(l.reading) < max(need, 1) {
			l.reading = append(l.reading, l.read(ctx, l.ready[0]))
			l.ready = l.ready[1:]
		}
		if len(l.reading) == 0 {
			return nil
		}
		head := l.reading[0]
		if !all && len(l.ready) == 0 {
			select {
			case <-head.done:
			default:
				return nil
			}
		}
		<-head.done
		l.reading = l.reading[1:]
		if err := l.take(head); err != nil {
			return err
		}
	}
}

// take puts a read record or its failure in the page; errPageFull, with
// the candidates not taken back in ready, when this is one more match.
func (l *lister) take(r *pendingRead) error {
	rec, err := r.rec, r.err
	if err == nil && (rec == nil || !l.opts.Matches(rec)) {
		return nil
	}
	if err != nil && !driverutil.PerRecord(err) {
		return err
	}
	c := r.c
	if len(l.page.Records)+len(l.page.Failed) == l.size {
		back := []*candidate{c}
		for _, p := range l.reading {
			back = append(back, p.c)
		}
		l.ready = append(back, l.ready...)
		l.reading = nil
		return errPageFull
	}
	if err != nil {
		l.page.Failed = append(l.page.Failed, &model.RecordError{ID: c.id, Object: l.r.object(c.key), Err: err})
	} else {
		l.page.Records = append(l.page.Records, rec)
	}
	l.last = c.pos
	return nil
}

// pendingRead is the read of one candidate's record, set once done closes.
type pendingRead struct {
	c    *candidate
	rec  *model.Record
	err  error
	done chan struct{}
}

// read starts the read of c on the page's workers, started on first use:
// par goroutines for the whole page, not one (and a new stack) per record.
func (l *lister) read(ctx context.Context, c *candidate) *pendingRead {
	r := &pendingRead{c: c, err: c.err, done: make(chan struct{})}
	if c.err != nil {
		close(r.done)
		return r
	}
	if l.jobs == nil {
		// Room for every read the page can have started at once.
		l.jobs = make(chan *pendingRead, l.size+1)
		for range l.par {
			l.workers.Go(func() {
				for r := range l.jobs {
					r.rec, r.err = l.readRec(ctx, r.c.id, r.c.key, r.c.tag, r.c.present)
					close(r.done)
				}
			})
		}
	}
	l.jobs <- r
	return r
}

func (l *lister) stop() {
	if l.jobs != nil {
		close(l.jobs)
		l.workers.Wait()
	}
}

// resolveNested reads the IDs of the pending nested defining files (at
// most par) at once, and adds them.
func (l *lister) resolveNested(ctx context.Context) error {
	out, errs := parallel(l.nested, func(_ int, key string) (*candidate, error) { return l.nestedID(ctx, key) })
	for i, c := range out {
		if err := errs[i]; err != nil {
			m, ok := misplaced(l.nested[i], err)
			if !ok || !driverutil.PerRecord(err) {
				return err
			}
			c = &m
		}
		if c != nil {
			l.add(c)
		}
	}
	l.nested = nil
	return nil
}

// nextToken resumes after the last ID returned, listing after the stem of
// the first candidate not returned (take put one back in ready).
func (l *lister) nextToken() string {
	var stems []string
	for _, c := range slices.Concat(l.ready, l.waiting) {
		stems = append(stems, stemKey(c.key))
	}
	for _, k := range l.nested {
		stems = append(stems, stemKey(k))
	}
	return encodeToken(l.last, slices.Min(stems))
}

// stemKey returns key less its file name's suffix (from its first '.'):
// every file of the record has a key after it.
func stemKey(key string) string {
	dir := strings.LastIndexByte(key, '/')
	if i := strings.IndexByte(key[dir+1:], '.'); i >= 0 {
		return key[:dir+1+i]
	}
	return key
}

// idFloor returns a string no greater than the ID of any record file whose
// key sorts after key: the key less Root, cut at its first '.' (where a
// suffix may begin) and before its first segment long enough to be a
// shortened one, past which a later key may map to a smaller ID.
func idFloor(key string) string {
	rest, ok := strings.CutPrefix(key, layout.Root+"/")
	if !ok {
		if key < layout.Root+"/" {
			return ""
		}
		return "\U0010FFFF"
	}
	cut := len(rest)
	if i := strings.IndexByte(rest, '.'); i >= 0 {
		cut = i
	}
	start := 0
	for _, seg := range strings.Split(rest, "/") {
		if start >= cut {
			break
		}
		if len(seg) > layout.KeptPrefix {
			cut = start
			break
		}
		start += len(seg) + 1
	}
	return rest[:cut]
}

// encodeToken and decodeToken carry the last ID returned and the key to
// list after (an older version's token, an ID alone, lists it all again).
func encodeToken(after, resume string) string {
	return driverutil.EncodePageToken(after + "\x00" + resume)
}

func decodeToken(tok string) (after, resume string, err error) {
	s, err := driverutil.DecodePageToken(tok)
	if err != nil {
		return "", "", err
	}
	after, resume, _ = strings.Cut(s, "\x00")
	return after, resume, nil
}

type candHeap []*candidate

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return h[i].pos < h[j].pos }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(*candidate)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// MaxListParallel is the largest ListParallel accepted.
const MaxListParallel = 256

// ParseListParallel parses the list_parallel URL parameter: "" for the
// default (0), else an integer from 1 to MaxListParallel; an error
// wrapping model.ErrInvalidArgument otherwise.
func ParseListParallel(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxListParallel {
		return 0, fmt.Errorf("%w: list_parallel %q is not an integer from 1 to %d", model.ErrInvalidArgument, s, MaxListParallel)
	}
	return n, nil
}

// loadListed reads a listed record: the defining file and the other files
// the listing showed, each from the cache when the listing's tag is the
// cached one; one not shown is absent (a listing is not a snapshot). It
// reads all files when present is nil.
func (r *Records) loadListed(ctx context.Context, id model.ID, key, tag string, present map[string]string) (*model.Record, error) {
	files, err := r.files(id)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", r.cfg.Name, key, err)
	}
	if present == nil {
		return r.load(ctx, id, files)
	}
	docs := make([]*cached, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, f := range files {
		tag, ok := tag, true
		if i > 0 {
			tag, ok = present[f.Key]
		}
		if !ok {
			continue
		}
		if e, hit := r.cache.get(f.Key); hit && tag != "" && e.tag == tag {
			docs[i] = &e
			continue
		}
		read := func() { docs[i], errs[i] = r.readListed(ctx, id, f.Key) }
		if r.cfg.LocalReads {
			read()
		} else {
			wg.Go(read)
		}
	}
	wg.Wait()
	if err := cmp.Or(errs...); err != nil {
		return nil, err
	}
	if docs[0] == nil {
		return nil, nil
	}
	return r.assemble(id, files[0].Key, docs)
}

// readListed is readDoc, without caching when Config.LocalReads says so.
func (r *Records) readListed(ctx context.Context, id model.ID, key string) (*cached, error) {
	if !r.cfg.LocalReads {
		return r.readDoc(ctx, id, key)
	}
	obj, err := r.get(ctx, key)
	if err != nil || obj == nil {
		return nil, err
	}
	return r.decodeDoc(id, key, obj)
}

// IDKeyPrefix returns the longest key prefix every file of an ID starting
// with prefix has: its ':' as '/', cut before a segment long enough to be
// stored shortened.
func IDKeyPrefix(prefix string) string {
	p := strings.Replace(prefix, ":", "/", 1)
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if len(s) > layout.KeptPrefix {
			return layout.Root + "/" + strings.Join(segs[:i], "/")
		}
	}
	return layout.Root + "/" + p
}

// classify returns the candidate for a defining file whose key gives its
// ID, ambiguous for one whose key fits several IDs or has a shortened
// segment, nothing for other files, and an error for the other layout's.
func (r *Records) classify(key string) (*candidate, bool, error) {
	role, st := layout.Classify(r.cfg.Layout, key)
	switch role {
	case layout.NotRecord, layout.Secondary:
		return nil, false, nil
	case layout.OtherLayout:
		return nil, false, fmt.Errorf("%s: %s: %w: a file of the other layout in a layout %s store (open it with layout=%s)", r.cfg.Name,
			r.object(key), model.ErrInternal, r.cfg.Layout, layout.Other(r.cfg.Layout))
	}
	if ids := layout.Candidates(st); len(ids) == 1 && !layout.Shortened(st) {
		return &candidate{id: ids[0], key: key}, false, nil
	}
	return nil, true, nil
}

// nestedID reads the ID a defining file states (see StatedID).
func (l *lister) nestedID(ctx context.Context, key string) (*candidate, error) {
	o, err := l.r.get(ctx, key)
	if err != nil || o == nil {
		return nil, err
	}
	_, st := layout.Classify(l.r.cfg.Layout, key)
	id, err := StatedID(l.r.cfg.Name, l.r.object(key), o.data, st)
	if err != nil {
		return nil, err
	}
	if o.tag != "" {
		l.r.idOfKey.Store(key, nestedIDEntry{tag: NormTag(o.tag), id: id})
	}
	return &candidate{id: id, key: key, tag: NormTag(o.tag)}, nil
}

// StatedID returns the ID that data, the defining file of stem st, states
// (its @id, else the stem's PathDefault), checked to be one of st; its
// errors name the driver and obj.
func StatedID(name, obj string, data []byte, st string) (model.ID, error) {
	doc, err := jsonld.Decode(data)
	if err != nil {
		return model.ID{}, fmt.Errorf("%s: %s: %w", name, obj, err)
	}
	id, ok, err := doc.RecordID()
	if err != nil {
		return model.ID{}, fmt.Errorf("%s: %s: %w", name, obj, err)
	}
	if !ok {
		if id, ok = layout.PathDefault(st); !ok {
			return model.ID{}, fmt.Errorf("%s: %s: %w: no valid record ID maps to this key", name, obj, model.ErrInternal)
		}
	}
	if layout.Stem(id) != st {
		return model.ID{}, errMisplaced(name, obj, id)
	}
	return id, nil
}

// knownID returns the ID the nested defining file at key held at tag (the
// same tag, the same bytes), so listings do not read it twice.
func (r *Records) knownID(key, tag string) (model.ID, bool) {
	v, ok := r.idOfKey.Load(key)
	if !ok || tag == "" {
		return model.ID{}, false
	}
	e := v.(nestedIDEntry)
	return e.id, e.tag == NormTag(tag)
}

type nestedIDEntry struct {
	tag string
	id  model.ID
}

// misplaced returns a candidate carrying err for a defining file that
// cannot be read or placed, at the ID its key suggests in either layout.
func misplaced(key string, err error) (candidate, bool) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		if role, st := layout.Classify(l, key); role == layout.Defining {
			if id, ok := layout.PathDefault(st); ok {
				return candidate{id: id, key: key, err: err}, true
			}
		}
	}
	return candidate{}, false
}
