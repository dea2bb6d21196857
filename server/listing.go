package server

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/guard"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
	"nameservice.dev/nameservice/server/internal/web"
)

// A scoped principal's listing reads only what its scope covers: the
// sources of the listing are the read prefixes that meet the query's prefix
// (listed with the backend's own paging) and the exact IDs it may read
// (read one by one). Nothing outside the scope is ever read, so neither the
// answer, nor its page tokens, nor its size or its time tells anything
// about the records outside it.

// lister lists what a principal may read (web.Lister), for every route
// family, sealing its page tokens with key.
type lister struct {
	ns  *nameservice.NameService
	key *PageTokenKey
}

// Page implements web.Lister. It checks q (guard.CheckList), though the
// layer checks a listing too: a scope of exact IDs, or one that meets no
// prefix of q, asks the layer for no listing, and a malformed query must
// be refused whatever the caller's scope.
func (l *lister) Page(ctx context.Context, p *auth.Principal, q nameservice.ListOptions, token string, size int) (web.Page, error) {
	if err := guard.CheckList(q); err != nil {
		return web.Page{}, err
	}
	bound := binding(p, q)
	pos, err := l.key.open(token, bound)
	if err != nil {
		return web.Page{}, err
	}
	e, next, err := l.listPage(ctx, p, q, pos, size)
	if err != nil {
		return web.Page{}, err
	}
	page := web.Page{Records: e.records, Failed: e.failed}
	if next != nil {
		page.Next = l.key.seal(*next, bound)
	}
	return page, nil
}

// source is one range of a listing: the IDs starting with key, or when
// exact the ID key alone.
type source struct {
	key   string
	exact bool
}

// sources returns the ranges a listing of the IDs starting with prefix
// reads for p, in ID order: sorted by key, none inside another, they list
// in ID order one after the other (two prefixes neither of which starts
// the other cover disjoint, ordered ranges).
func sources(p *auth.Principal, prefix string) []source {
	if p.ReadsAll() {
		return []source{{key: prefix}}
	}
	var out []source
	for _, rp := range p.Read {
		switch {
		case strings.HasPrefix(prefix, rp):
			out = append(out, source{key: prefix})
		case strings.HasPrefix(rp, prefix):
			out = append(out, source{key: rp})
		}
	}
	for id := range p.Exact {
		if strings.HasPrefix(id, prefix) {
			out = append(out, source{key: id, exact: true})
		}
	}
	slices.SortFunc(out, func(a, b source) int { return strings.Compare(a.key, b.key) })
	out = slices.CompactFunc(out, func(a, b source) bool { return a.key == b.key && a.exact == b.exact })
	var kept []source
	for _, s := range out {
		inside := slices.ContainsFunc(out, func(o source) bool {
			return !o.exact && strings.HasPrefix(s.key, o.key) && (o.key != s.key || s.exact)
		})
		if !inside {
			kept = append(kept, s)
		}
	}
	return kept
}

// entries are what one read of a source gave: records and the records that
// could not be read, in ID order each.
type entries struct {
	records []*model.Record
	failed  []*model.RecordError
}

// step reads up to max entries of the listing srcs of q from pos, and
// returns them with the position after them; the position is past the last
// source when the listing is done.
func (l *lister) step(ctx context.Context, p *auth.Principal, srcs []source, q nameservice.ListOptions, pos position, max int) (entries, position, error) {
	src := srcs[pos.src]
	next := position{src: pos.src + 1}
	if src.exact {
		e, err := l.readExact(ctx, src.key, q)
		return e, next, err
	}
	opts := q
	opts.Prefix, opts.PageSize, opts.PageToken = src.key, max, pos.tok
	page, err := l.ns.ListPage(ctx, opts)
	if err != nil {
		return entries{}, pos, err
	}
	if page.NextPageToken != "" {
		if page.NextPageToken == pos.tok {
			return entries{}, pos, fmt.Errorf("list: %w: the backend gave the same page token twice", model.ErrInternal)
		}
		next = position{src: pos.src, tok: page.NextPageToken}
	}
	var e entries
	for _, rec := range page.Records {
		if p.CanRead(rec.ID.String()) {
			e.records = append(e.records, rec)
		}
	}
	for _, f := range page.Failed {
		if visibleFailure(p, f) {
			e.failed = append(e.failed, f)
		}
	}
	return e, next, nil
}

// readExact reads the one record of an exact source, when the query
// selects it.
func (l *lister) readExact(ctx context.Context, key string, q nameservice.ListOptions) (entries, error) {
	id, err := model.ParseID(key)
	if err != nil {
		return entries{}, nil
	}
	rec, err := l.ns.Get(ctx, id)
	switch {
	case errors.Is(err, model.ErrNotFound):
		return entries{}, nil
	case err != nil && driverutil.PerRecord(err):
		return entries{failed: []*model.RecordError{{ID: id, Object: key, Err: err}}}, nil
	case err != nil:
		return entries{}, err
	case !q.Matches(rec):
		return entries{}, nil
	}
	return entries{records: []*model.Record{rec}}, nil
}

// listPage reads the page of size entries of q for p that starts at pos,
// and returns it with the position of the next page (nil when none).
func (l *lister) listPage(ctx context.Context, p *auth.Principal, q nameservice.ListOptions, pos position, size int) (entries, *position, error) {
	srcs := sources(p, q.Prefix)
	var page entries
	for n := 0; pos.src < len(srcs) && n < size; {
		e, next, err := l.step(ctx, p, srcs, q, pos, size-n)
		if err != nil {
			return entries{}, nil, err
		}
		page.records = append(page.records, e.records...)
		page.failed = append(page.failed, e.failed...)
		n += len(e.records) + len(e.failed)
		pos = next
	}
	if pos.src >= len(srcs) {
		return page, nil, nil
	}
	return page, &pos, nil
}

// scanPageSize is the size of the backend pages a whole listing reads.
const scanPageSize = 500

// Scan implements web.Lister: the records that could not be read come
// after the records of their backend page.
func (l *lister) Scan(ctx context.Context, p *auth.Principal, q nameservice.ListOptions) iter.Seq2[*model.Record, error] {
	return func(yield func(*model.Record, error) bool) {
		srcs := sources(p, q.Prefix)
		for pos := (position{}); pos.src < len(srcs); {
			e, next, err := l.step(ctx, p, srcs, q, pos, scanPageSize)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, rec := range e.records {
				if !yield(rec, nil) {
					return
				}
			}
			for _, f := range e.failed {
				if !yield(nil, f) {
					return
				}
			}
			pos = next
		}
	}
}
