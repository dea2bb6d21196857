package conformance

import (
	"errors"
	"slices"
	"strings"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// These cases need a harness that can corrupt records (Corrupter).
var groupUnreadable = group{name: "Unreadable", needsCorrupter: true, guarantee: "unreadable records: listing and watch go past a corrupt record and name it", cases: []testCase{
	{name: "ListGoesPastCorruptRecords", run: func(e *env) {
		want := e.corruptSome()
		for _, size := range []int{0, 1, 2, 3, 4} {
			e.wantListing(nameservice.ListOptions{PageSize: size}, want)
		}
	}},
	{name: "PagesCountFailures", run: func(e *env) {
		want := e.corruptSome()
		e.wantListing(nameservice.ListOptions{}, want)
		if got, _ := e.listPages(driver.ListOptions{PageSize: 3}); !slices.Equal(got, want) {
			e.t.Fatalf("pages of 3 = %q, want %q", got, want)
		}
	}},
	{name: "WatchGoesPastCorruptRecord", run: func(e *env) {
		e.needCorrupter()
		e.init("a", "b")
		evs := e.watch(nameservice.WatchOptions{Prefix: e.prefix}, func(w *nameservice.NameService) {
			e.corruptRecord("a")
			e.applied(ref("c1", 1))(w.PublishCommit(e.ctx, e.id("b"), 1, "c1"))
		}, func(ev nameservice.Event) bool { return ev.Concern == nameservice.Head && ev.New.V == 1 })
		for _, ev := range evs {
			if ev.ID.String() != e.ids("b")[0] {
				e.t.Fatalf("event for %s after corrupting it: %+v", ev.ID, ev)
			}
		}
	}},
	{name: "LookupFailsPurgeFrees", run: func(e *env) {
		e.init("a")
		e.corruptRecord("a")
		_, err := e.ns.Lookup(e.ctx, e.id("a"))
		if err == nil || nameservice.ErrorCodeOf(err) == model.NotFound {
			e.t.Fatalf("lookup of a corrupt record = %v, want an error other than not found", err)
		}
		e.must(e.ns.Purge(e.ctx, e.id("a")))
		e.init("a")
		e.lookup("a")
	}},
}}

// corruptSome creates nine ledgers and corrupts the fourth and the seventh,
// so that pages of every small size start, end and straddle a bad record,
// and returns the entries a listing of them must hold: the ID of each
// record, "!" and the ID for each bad one.
func (e *env) corruptSome() (want []string) {
	names := numbered("r%02d", 9)
	e.init(names...)
	for i, id := range e.ids(names...) {
		if i == 3 || i == 6 {
			e.corruptRecord(names[i])
			id = "!" + id
		}
		want = append(want, id)
	}
	return want
}

// needCorrupter skips the case when the harness cannot corrupt records.
func (e *env) needCorrupter() {
	e.t.Helper()
	if e.corrupt == nil {
		e.t.Skip("the harness cannot corrupt records (it is no conformance.Corrupter)")
	}
}

func (e *env) corruptRecord(name string) {
	e.t.Helper()
	e.needCorrupter()
	id := e.parseID(name)
	if err := e.corrupt(e.ctx, id); err != nil {
		e.t.Fatalf("harness: corrupt %s: %v", id, err)
	}
}

// listPages lists page by page under the test's prefix (at most 21 pages),
// failing on a page over opts.PageSize entries, and returns the entries of
// the pages and how many pages it took.
func (e *env) listPages(opts driver.ListOptions) (got []string, pages int) {
	e.t.Helper()
	opts.Prefix = e.prefix
	for pages = 1; ; pages++ {
		page, err := e.ns.ListPage(e.ctx, opts)
		e.must(err)
		if n := len(page.Records) + len(page.Failed); n > opts.PageSize {
			e.t.Fatalf("page %d holds %d entries, page size %d", pages, n, opts.PageSize)
		}
		got = append(got, pageEntries(page)...)
		if page.NextPageToken == "" || pages > 20 {
			return got, pages
		}
		opts.PageToken = page.NextPageToken
	}
}

// pageEntries returns the entries of page: its records in the order given,
// with its failures ("!" and the ID) sorted among them when it has any.
func pageEntries(page *driver.Page) []string {
	var out []string
	for _, r := range page.Records {
		out = append(out, r.ID.String())
	}
	if len(page.Failed) == 0 {
		return out
	}
	for _, f := range page.Failed {
		out = append(out, "!"+f.ID.String())
	}
	slices.SortFunc(out, func(a, b string) int {
		return strings.Compare(strings.TrimPrefix(a, "!"), strings.TrimPrefix(b, "!"))
	})
	return out
}

// wantListing lists under the test's prefix until the entries equal want,
// checking that each failure names its record.
func (e *env) wantListing(opts nameservice.ListOptions, want []string) {
	e.t.Helper()
	e.listUntil(opts, want, func(opts nameservice.ListOptions, r *nameservice.Record, err error) string {
		if err == nil {
			return r.ID.String()
		}
		re, ok := errors.AsType[*nameservice.RecordError](err)
		if !ok {
			e.t.Fatalf("list %+v: %v, want records and RecordErrors only", opts, err)
		}
		if re.Object == "" {
			e.t.Fatalf("list %+v: %v names no object", opts, err)
		}
		return "!" + re.ID.String()
	})
}
