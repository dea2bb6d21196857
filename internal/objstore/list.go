package objstore

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/internal/pagetoken"
	"nameservice.dev/nameservice/jsonld"
)

// DefaultPageSize is the page size of List when none is asked for.
const DefaultPageSize = 100

// listParallel bounds the records List reads at once.
const listParallel = 16

// candidate is a defining file found by List and the ID it belongs to.
// When the file cannot be placed, err says why and id is the ID its key
// suggests, so the failure is reported in its place in the order.
type candidate struct {
	id  driver.ID
	key string
	err error
}

// List implements driver.Driver. It lists the keys under the prefix's
// directory with the store's List (every page), keeps the defining files,
// orders their IDs (key order is not ID order: ':' and '/' sort
// differently), and reads the records after the page token, listParallel
// at a time, until the page is full and one more match shows whether
// another follows. The page token is the last ID returned. A file of the
// other layout, a defining file no ID maps to, and a record that cannot be
// read are reported in Page.Failed, naming the key.
func (r *Records) List(ctx context.Context, opts driver.ListOptions) (*driver.Page, error) {
	after, err := pagetoken.Decode(opts.PageToken)
	if err != nil {
		return nil, err
	}
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	cands, err := r.candidates(ctx, opts.Prefix)
	if err != nil {
		return nil, err
	}
	var todo []candidate
	for _, c := range cands {
		if s := c.id.String(); s > after && strings.HasPrefix(s, opts.Prefix) {
			todo = append(todo, c)
		}
	}
	size := opts.PageSize
	if size <= 0 {
		size = DefaultPageSize
	}
	return r.fillPage(ctx, todo, size, opts)
}

// fillPage reads candidates in batches until size+1 entries match; a
// record that cannot be read is an entry of Page.Failed.
func (r *Records) fillPage(ctx context.Context, todo []candidate, size int, opts driver.ListOptions) (*driver.Page, error) {
	page := &driver.Page{}
	last := ""
	for len(todo) > 0 {
		n := min(len(todo), max(size+1-len(page.Records)-len(page.Failed), listParallel))
		recs, errs := r.readBatch(ctx, todo[:n])
		for i, rec := range recs {
			err := errs[i]
			if err == nil && (rec == nil || !driver.Matches(rec, opts)) {
				continue
			}
			if err != nil && !driver.PerRecord(err) {
				return nil, err
			}
			if len(page.Records)+len(page.Failed) == size {
				page.NextPageToken = pagetoken.Encode(last)
				return page, nil
			}
			c := todo[i]
			if err != nil {
				page.Failed = append(page.Failed, &driver.RecordError{ID: c.id, Object: c.key, Err: err})
			} else {
				page.Records = append(page.Records, rec)
			}
			last = c.id.String()
		}
		todo = todo[n:]
	}
	return page, nil
}

// readBatch reads the records of cands in parallel, listParallel at a time;
// a record is nil when it vanished meanwhile, and errs[i] says why cands[i]
// could not be read.
func (r *Records) readBatch(ctx context.Context, cands []candidate) ([]*driver.Record, []error) {
	out := make([]*driver.Record, len(cands))
	errs := make([]error, len(cands))
	sem := make(chan struct{}, listParallel)
	var wg sync.WaitGroup
	for i, c := range cands {
		if c.err != nil {
			errs[i] = c.err
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			files, err := r.files(c.id)
			if err != nil {
				errs[i] = fmt.Errorf("%s: %s: %w", r.cfg.Name, c.key, err)
				return
			}
			out[i], errs[i] = r.load(ctx, c.id, files)
		}()
	}
	wg.Wait()
	return out, errs
}

// keyPrefix returns the longest key prefix every file of an ID starting
// with prefix has: the name part as it is, its ':' as '/', cut before a
// segment long enough to be stored shortened.
func keyPrefix(prefix string) string {
	p := strings.Replace(prefix, ":", "/", 1)
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if len(s) > 140 {
			return layout.Root + "/" + strings.Join(segs[:i], "/")
		}
	}
	return layout.Root + "/" + p
}

// candidates returns the defining files whose IDs could start with prefix,
// ordered by ID.
func (r *Records) candidates(ctx context.Context, prefix string) ([]candidate, error) {
	var out []candidate
	var ambiguous []string
	err := r.store.List(ctx, keyPrefix(prefix), func(key, tag string, size int64) error {
		c, amb, err := r.classify(key)
		if err != nil {
			if c, ok := misplaced(key, err); ok {
				out = append(out, c)
				return nil
			}
			return err
		}
		if amb {
			if c, ok := r.knownNestedID(key, tag); ok {
				out = append(out, c)
			} else {
				ambiguous = append(ambiguous, key)
			}
		} else if c != nil && size > 0 {
			out = append(out, *c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	more, err := r.nestedIDs(ctx, ambiguous)
	if err != nil {
		return nil, err
	}
	out = append(out, more...)
	sort.Slice(out, func(i, j int) bool { return out[i].id.String() < out[j].id.String() })
	return out, nil
}

// classify returns the candidate for a defining file whose key gives its
// ID, ambiguous for one whose key fits several IDs (or has a shortened
// segment), nothing for other files, and an error for a file of the other
// layout.
func (r *Records) classify(key string) (*candidate, bool, error) {
	role, st := r.cfg.Layout.Classify(key)
	switch role {
	case layout.NotRecord, layout.Secondary:
		return nil, false, nil
	case layout.OtherLayout:
		other := layout.B
		if r.cfg.Layout == layout.B {
			other = layout.C
		}
		return nil, false, fmt.Errorf("%s: %s: %w: a file of the other layout in a layout %s store (open it with layout=%s)", r.cfg.Name,
			key, driver.ErrInternal, r.cfg.Layout, other)
	}
	if ids := layout.Candidates(st); len(ids) == 1 && !layout.Shortened(st) {
		return &candidate{id: ids[0], key: key}, false, nil
	}
	return nil, true, nil
}

// nestedIDs reads the IDs of defining files whose keys fit several IDs.
func (r *Records) nestedIDs(ctx context.Context, keys []string) ([]candidate, error) {
	out := make([]*candidate, len(keys))
	errs := make([]error, len(keys))
	sem := make(chan struct{}, listParallel)
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = r.nestedID(ctx, k)
		}()
	}
	wg.Wait()
	var cands []candidate
	for i, err := range errs {
		if err != nil {
			if !driver.PerRecord(err) {
				return nil, err
			}
			c, ok := misplaced(keys[i], err)
			if !ok {
				return nil, err
			}
			cands = append(cands, c)
			continue
		}
		if out[i] != nil {
			cands = append(cands, *out[i])
		}
	}
	return cands, nil
}

// nestedID reads the ID a defining file states, and checks the ID's key is
// this one.
func (r *Records) nestedID(ctx context.Context, key string) (*candidate, error) {
	obj, err := r.get(ctx, key)
	if err != nil || obj == nil {
		return nil, err
	}
	doc, err := jsonld.Decode(obj.data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", r.cfg.Name, key, err)
	}
	id, ok, err := doc.RecordID()
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", r.cfg.Name, key, err)
	}
	_, st := r.cfg.Layout.Classify(key)
	if !ok {
		if id, ok = layout.PathDefault(st); !ok {
			return nil, fmt.Errorf("%s: %s: %w: no valid record ID maps to this key", r.cfg.Name, key, driver.ErrInternal)
		}
	}
	if layout.Stem(id) != st {
		return nil, fmt.Errorf("%s: %s: %w: the object holds record %s, whose key is another", r.cfg.Name, key, driver.ErrInternal, id)
	}
	r.idOfKey.Store(key, nestedIDEntry{tag: normTag(obj.tag), id: id})
	return &candidate{id: id, key: key}, nil
}

// nestedIDEntry is the ID a nested defining file held at a tag.
type nestedIDEntry struct {
	tag string
	id  driver.ID
}

// knownNestedID returns the candidate for a nested defining file whose ID
// was read at this tag before: the same tag means the same bytes, so the
// same @id. Without it every page of a listing would read every nested file.
func (r *Records) knownNestedID(key, tag string) (candidate, bool) {
	v, ok := r.idOfKey.Load(key)
	if !ok || tag == "" {
		return candidate{}, false
	}
	e := v.(nestedIDEntry)
	if e.tag != normTag(tag) {
		return candidate{}, false
	}
	return candidate{id: e.id, key: key}, true
}

// misplaced returns a candidate carrying err for a defining file that cannot
// be read or placed, at the ID its key suggests in either layout; false when
// the key suggests none.
func misplaced(key string, err error) (candidate, bool) {
	for _, l := range []layout.Layout{layout.B, layout.C} {
		if role, st := l.Classify(key); role == layout.Defining {
			if id, ok := layout.PathDefault(st); ok {
				return candidate{id: id, key: key, err: err}, true
			}
		}
	}
	return candidate{}, false
}
