package conformance

import (
	"fmt"
	"slices"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
)

var groupList = group{name: "List", guarantee: "listing: exactly the records under a prefix, in ID order, whole, across pages", cases: []testCase{
	{name: "EmptyPrefixListsNothing", run: func(e *env) { e.listIDs(nameservice.ListOptions{IncludeRetracted: true}) }},
	{name: "OrderedByID", quick: true, run: func(e *env) {
		e.init("m", "b", "z", "a:dev", "a", "a/x")
		e.listIDs(nameservice.ListOptions{}, "a/x", "a:dev", "a", "b", "m", "z")
	}},
	{name: "Prefix", quick: true, run: func(e *env) {
		e.init("app/one", "app/two", "apple", "other")
		e.listIDs(nameservice.ListOptions{Prefix: "app/"}, "app/one", "app/two")
		e.listIDs(nameservice.ListOptions{Prefix: "app"}, "app/one", "app/two", "apple")
		e.listIDs(nameservice.ListOptions{Prefix: "nothing"})
	}},
	{name: "Kind", run: func(e *env) {
		e.init("l1", "l2")
		e.graphSource("g1", nil)
		e.listIDs(nameservice.ListOptions{Kind: nameservice.Ledger}, "l1", "l2")
		e.listIDs(nameservice.ListOptions{Kind: nameservice.GraphSource}, "g1")
		e.listIDs(nameservice.ListOptions{}, "g1", "l1", "l2")
	}},
	{name: "InvalidKind", run: func(e *env) {
		for _, err := range e.ns.List(e.ctx, nameservice.ListOptions{Kind: "table"}) {
			e.wantErr(err, nameservice.ErrInvalidArgument)
			return
		}
		e.t.Fatal("list with an invalid kind yielded nothing")
	}},
	{name: "RetractedFilter", run: func(e *env) {
		e.init("a", "b", "c")
		e.must(e.ns.Retract(e.ctx, e.id("b")))
		e.listIDs(nameservice.ListOptions{}, "a", "c")
		e.listIDs(nameservice.ListOptions{IncludeRetracted: true}, "a", "b", "c")
	}},
	{name: "PurgedRecordsLeave", run: func(e *env) {
		e.init("a", "b")
		e.must(e.ns.Purge(e.ctx, e.id("a")))
		e.listIDs(nameservice.ListOptions{IncludeRetracted: true}, "b")
	}},
	{name: "ListedRecordsAreWhole", run: func(e *env) {
		e.initAt("db", 3)
		e.applied(ref("i2", 2))(e.ns.PublishIndex(e.ctx, e.id("db"), 2, "i2"))
		cfg := config(1, nameservice.Object{"default_context": "x", "n": 1})
		e.applied(cfg)(e.ns.PushConfig(e.ctx, e.id("db"), unborn, cfg))
		st := status(2, "indexing", nameservice.Object{"q": 1})
		e.applied(st)(e.ns.PushStatus(e.ctx, e.id("db"), ready, st))
		e.must(e.ns.PublishGraphSource(e.ctx, e.id("gs"), "db:HnswIndex", []string{e.id("db")}, map[string]any{"dim": 3}))
		recs := e.listIDs(nameservice.ListOptions{}, "db", "gs")
		for _, r := range recs {
			if want := e.lookup(r.ID.String()[len(e.prefix):]); !sameRecord(r, want) {
				e.t.Fatalf("listed record differs from lookup:\nlist   %s\nlookup %s", js(r), js(want))
			}
		}
	}},
	{name: "PaginatesAcrossPages", quick: true, run: func(e *env) {
		names := numbered("r%02d", 7)
		e.init(names...)
		e.listIDs(nameservice.ListOptions{}, names...) // wait for the listing to settle
		got, pages := e.listPages(driver.ListOptions{PageSize: 2})
		if want := e.ids(names...); !slices.Equal(got, want) {
			e.t.Fatalf("paged listing = %q, want %q", got, want)
		}
		if pages < 3 {
			e.t.Fatalf("7 records in pages of 2 took %d pages, want at least 3", pages)
		}
	}},
	{name: "IteratorPagesUnderneath", run: func(e *env) {
		names := numbered("r%d", 5)
		e.init(names...)
		e.listIDs(nameservice.ListOptions{PageSize: 2}, names...)
	}},
	{name: "BadPageTokenIsInvalid", run: func(e *env) {
		e.init("a")
		_, err := e.ns.ListPage(e.ctx, driver.ListOptions{Prefix: e.prefix, PageToken: "%%not a token%%"})
		e.wantErr(err, nameservice.ErrInvalidArgument)
	}},
}}

// numbered returns the n names format makes of 0 to n-1.
func numbered(format string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}

func sameRecord(a, b *nameservice.Record) bool { return js(a) == js(b) }

func js(r *nameservice.Record) string {
	b, err := r.MarshalJSON()
	if err != nil {
		return "!" + err.Error()
	}
	return string(b)
}
