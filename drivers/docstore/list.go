package docstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gocloud.dev/docstore"
	"gocloud.dev/gcerrors"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

// DefaultPageSize is the page size of List when none is asked for.
const DefaultPageSize = 100

// List modes, learnt from the first List of a driver.
const (
	modeOrdered = 1 // the provider runs queries ordered by pk
	modeScan    = 2 // it cannot: filter everything, sort in memory
)

// List implements driver.Driver. It queries the live meta documents in
// order of ID from after the page token (ordered by the provider where it
// can, else by a filtered scan of the collection above the token, keeping
// the page's first entries in memory),
// then reads the concern documents of the page's records.
func (d *Driver) List(ctx context.Context, opts driver.ListOptions) (*driver.Page, error) {
	if err := d.begin(ctx); err != nil {
		return nil, err
	}
	if opts.Kind != "" && !opts.Kind.Valid() {
		return nil, fmt.Errorf("docstore: %w: kind %q", model.ErrInvalidArgument, opts.Kind)
	}
	after, size, err := driverutil.PageStart(opts, DefaultPageSize)
	if err != nil {
		return nil, err
	}
	metas, more, err := d.listMetas(ctx, opts, after, size)
	if err != nil {
		return nil, err
	}
	page := &driver.Page{}
	if more {
		page.NextPageToken = driverutil.EncodePageToken(metas[len(metas)-1].PK)
	}
	docs, errs := d.records(ctx, metas)
	for i, m := range metas {
		r, err := d.listed(ctx, m, docs[i], errs[4*i:4*i+4])
		switch {
		case err != nil && !driverutil.PerRecord(err):
			return nil, err
		case err != nil:
			page.Failed = append(page.Failed, &model.RecordError{ID: idOf(m), Object: "documents of " + m.PK, Err: err})
		case r != nil && opts.Matches(r):
			page.Records = append(page.Records, r)
		}
	}
	return page, nil
}

// listMetas returns up to size live meta documents matching opts with IDs
// above after, in order, and whether more may follow.
func (d *Driver) listMetas(ctx context.Context, opts driver.ListOptions, after string, size int) ([]*document, bool, error) {
	if d.listMode.Load() != modeScan {
		metas, more, err := d.listOrdered(ctx, opts, after, size)
		if err == nil {
			d.listMode.Store(modeOrdered)
			return metas, more, nil
		}
		// A provider that cannot run the ordered query (awsdynamodb without
		// a fitting index) answers Unimplemented or InvalidArgument.
		if c := gcerrors.Code(err); d.listMode.Load() == modeOrdered ||
			c != gcerrors.Unimplemented && c != gcerrors.InvalidArgument {
			return nil, false, fmt.Errorf("docstore: list: %w", classify(ctx, err))
		}
		d.listMode.Store(modeScan)
	}
	metas, err := d.listScan(ctx, opts, after, size+1)
	if err != nil {
		return nil, false, fmt.Errorf("docstore: list: %w", classify(ctx, err))
	}
	if len(metas) > size {
		return metas[:size], true, nil
	}
	return metas, false, nil
}

// metaQuery returns the query for meta documents matching opts with IDs
// above after.
func (d *Driver) metaQuery(opts driver.ListOptions, after string) *docstore.Query {
	q := d.coll.Query().Where(fieldSK, "=", skMeta)
	if opts.Kind != "" {
		q = q.Where(fieldKind, "=", string(opts.Kind))
	}
	if after >= opts.Prefix && after != "" {
		return q.Where(fieldPK, ">", after)
	}
	if opts.Prefix != "" {
		return q.Where(fieldPK, ">=", opts.Prefix)
	}
	return q
}

func (d *Driver) listOrdered(ctx context.Context, opts driver.ListOptions, after string,
	size int) (metas []*document, more bool, err error) {
	err = eachDoc(ctx, d.metaQuery(opts, after).OrderBy(fieldPK, docstore.Ascending).Get(ctx), func(m *document) bool {
		switch {
		case !strings.HasPrefix(m.PK, opts.Prefix):
			return false // ordered: no later ID has the prefix
		case m.State != stateLive:
			return true
		case len(metas) == size:
			more = true
			return false
		}
		metas = append(metas, m)
		return true
	})
	return metas, more, err
}

// eachDoc hands each document it yields to fn until it ends or fn returns
// false, and stops it.
func eachDoc(ctx context.Context, it *docstore.DocumentIterator, fn func(*document) bool) error {
	defer it.Stop()
	for {
		m := &document{}
		err := it.Next(ctx, m)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !fn(m) {
			return nil
		}
	}
}

// listScan returns the first keep live meta documents matching opts with
// IDs above after, in order, from an unordered query of every meta document
// above after. It holds at most 2×keep documents at once (it sorts and cuts
// whenever it has that many), so memory is bounded by the page, though each
// page still reads every document above the token: see docs/docstore.md.
func (d *Driver) listScan(ctx context.Context, opts driver.ListOptions, after string, keep int) ([]*document, error) {
	byPK := func(a, b *document) int { return strings.Compare(a.PK, b.PK) }
	var metas []*document
	err := eachDoc(ctx, d.metaQuery(opts, after).Get(ctx), func(m *document) bool {
		if m.State == stateLive && strings.HasPrefix(m.PK, opts.Prefix) && m.PK > after {
			metas = append(metas, m)
		}
		if len(metas) >= 2*keep {
			slices.SortFunc(metas, byPK)
			metas = slices.Delete(metas, keep, len(metas))
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(metas, byPK)
	return metas[:min(len(metas), keep)], nil
}

// records reads the documents of the records metas list, in one action
// list: docs[i] are those of metas[i] (meta first), errs[4*i:4*i+4] the
// errors of reading its concern documents.
func (d *Driver) records(ctx context.Context, metas []*document) (docs [][]*document, errs []error) {
	if len(metas) == 0 {
		return nil, nil
	}
	al := d.coll.Actions()
	docs = make([][]*document, len(metas))
	for i, m := range metas {
		docs[i] = []*document{m}
		for _, sk := range allSorts[1:] {
			doc := &document{Key: docKey(idOf(m), sk), PK: m.PK, SK: sk}
			docs[i] = append(docs[i], doc)
			al.Get(doc)
		}
	}
	return docs, actionErrors(al.Do(ctx), 4*len(metas))
}

// listed assembles one listed record from its documents and their read
// errors, falling back to Get when they do not fit together (the record was
// deleted or created again since the query); one deleted meanwhile is nil.
func (d *Driver) listed(ctx context.Context, m *document, docs []*document, errs []error) (*model.Record, error) {
	for j, err := range errs {
		switch gcerrors.Code(err) {
		case gcerrors.OK:
		case gcerrors.NotFound:
			docs[j+1] = nil
		default:
			return nil, fmt.Errorf("docstore: list: read %s %s: %w", m.PK, allSorts[j+1], classify(ctx, err))
		}
	}
	rec, err := assemble(idOf(m), docs)
	if !errors.Is(err, errTorn) {
		return rec, err
	}
	rec, err = d.Get(ctx, idOf(m))
	if errors.Is(err, model.ErrNotFound) {
		return nil, nil
	}
	return rec, err
}

// idOf returns the ID of meta document m.
func idOf(m *document) model.ID { return model.ID{Name: m.Name, Branch: m.Branch} }
