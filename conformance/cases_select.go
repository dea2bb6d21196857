package conformance

import "nameservice.dev/nameservice"

var groupSelect = group{name: "Select", guarantee: "selection: a listing by state or source type holds exactly the records in that state or of that type, never one whose state differs", cases: []testCase{
	{name: "ByState", quick: true, run: func(e *env) {
		e.init("a", "b", "c", "d", "e")
		e.graphSource("g", nil)
		e.setState("b", "indexing")
		e.setState("d", "indexing")
		e.setState("g", "indexing")
		e.setState("c", "error")
		e.must(e.ns.Retract(e.ctx, e.id("a")))
		e.listIDs(nameservice.ListOptions{State: "indexing"}, "b", "d", "g")
		e.listIDs(nameservice.ListOptions{State: "indexing", Kind: nameservice.Ledger}, "b", "d")
		e.listIDs(nameservice.ListOptions{State: "indexing", Kind: nameservice.GraphSource}, "g")
		e.listIDs(nameservice.ListOptions{State: "error"}, "c")
		e.listIDs(nameservice.ListOptions{State: "ready"}, "e")
		e.listIDs(nameservice.ListOptions{State: "retracted"})
		e.listIDs(nameservice.ListOptions{State: "retracted", IncludeRetracted: true}, "a")
		e.listIDs(nameservice.ListOptions{State: "nowhere"})
	}},
	{name: "ByStateFollowsChanges", run: func(e *env) {
		e.init("a", "b")
		e.setState("a", "indexing")
		e.listIDs(nameservice.ListOptions{State: "indexing"}, "a")
		e.setState("a", "ready")
		e.setState("b", "indexing")
		e.listIDs(nameservice.ListOptions{State: "indexing"}, "b")
		e.listIDs(nameservice.ListOptions{State: "ready"}, "a")
	}},
	{name: "ByStateAcrossPages", run: func(e *env) {
		names, want := numbered("r%d", 9), []string(nil)
		for i, n := range names {
			if i%3 != 1 {
				want = append(want, n)
			}
		}
		e.init(names...)
		for _, n := range want {
			e.setState(n, "error")
		}
		e.listIDs(nameservice.ListOptions{State: "error", PageSize: 2}, want...)
		e.listIDs(nameservice.ListOptions{State: "ready", PageSize: 1}, "r1", "r4", "r7")
	}},
	{name: "BySourceType", quick: true, run: func(e *env) {
		e.init("l")
		e.must(e.ns.PublishGraphSource(e.ctx, e.id("g1"), "db:Bm25Index", nil, nil))
		e.must(e.ns.PublishGraphSource(e.ctx, e.id("g2"), "db:HnswIndex", nil, nil))
		e.must(e.ns.PublishGraphSource(e.ctx, e.id("g3"), "db:Bm25Index", nil, nil))
		e.must(e.ns.PublishGraphSource(e.ctx, e.id("g4"), "db:Bm25Index", nil, nil))
		e.must(e.ns.Retract(e.ctx, e.id("g4")))
		e.listIDs(nameservice.ListOptions{SourceType: "db:Bm25Index"}, "g1", "g3")
		e.listIDs(nameservice.ListOptions{SourceType: "db:Bm25Index", IncludeRetracted: true}, "g1", "g3", "g4")
		e.listIDs(nameservice.ListOptions{SourceType: "db:Bm25Index", PageSize: 1}, "g1", "g3")
		e.listIDs(nameservice.ListOptions{SourceType: "db:HnswIndex", Kind: nameservice.GraphSource}, "g2")
		e.listIDs(nameservice.ListOptions{SourceType: "db:HnswIndex", Kind: nameservice.Ledger})
		e.listIDs(nameservice.ListOptions{SourceType: "db:Other"})
		e.setState("g3", "indexing")
		e.listIDs(nameservice.ListOptions{SourceType: "db:Bm25Index", State: "indexing"}, "g3")
	}},
	{name: "MalformedSelectionIsInvalid", run: func(e *env) {
		for _, opts := range []nameservice.ListOptions{{State: "\xff"}, {SourceType: "\xff"}, {SourceType: string(make([]byte, 300))}} {
			var err error
			for _, err = range e.ns.List(e.ctx, opts) {
				break
			}
			e.wantErr(err, nameservice.ErrInvalidArgument)
		}
	}},
}}

// setState pushes the status of name to state at the next status_v.
func (e *env) setState(name, state string) {
	e.t.Helper()
	cur := e.lookup(name).Status
	next := status(cur.V+1, state, nil)
	e.applied(next)(e.ns.PushStatus(e.ctx, e.id(name), *cur, next))
}

var groupHeads = group{name: "Heads", guarantee: "heads: a ledger's head and index read together are the record's", cases: []testCase{
	{name: "HeadsAreTheRecordsPointers", quick: true, run: func(e *env) {
		e.init("db", "new")
		e.publish("db", 3)
		e.applied(ref("i2", 2))(e.ns.PublishIndex(e.ctx, e.id("db"), 2, "i2"))
		e.wantHeads("db", ref("c3", 3), ref("i2", 2))
		e.wantHeads("new", unborn, unborn)
		e.must(e.ns.Retract(e.ctx, e.id("db")))
		e.wantHeads("db", ref("c3", 3), ref("i2", 2)) // retracted or not, as Lookup
	}},
	{name: "HeadsOfNamedGraphs", run: func(e *env) {
		e.init("db")
		graphs := map[string]*nameservice.GraphIndex{nameservice.DefaultGraph: {Address: "i4", T: 4}, "g": {Address: "ig", T: 3, Rev: 1}}
		out, err := e.ns.PublishIndexGraphs(e.ctx, e.id("db"), graphs)
		e.applied(out.Current)(out, err)
		e.wantHeads("db", unborn, out.Current)
	}},
	{name: "HeadsOfAGraphSourceIsWrongKind", run: func(e *env) {
		e.graphSource("gs", nil)
		e.wantErr(second(e.ns.Heads(e.ctx, e.id("gs"))), nameservice.ErrWrongKind)
	}},
	{name: "HeadsOfNothingIsNotFound", run: func(e *env) {
		e.wantErr(second(e.ns.Heads(e.ctx, e.id("none"))), nameservice.ErrNotFound)
		e.init("db")
		e.must(e.ns.Purge(e.ctx, e.id("db")))
		e.wantErr(second(e.ns.Heads(e.ctx, e.id("db"))), nameservice.ErrNotFound)
	}},
}}

// wantHeads fails unless the heads of name are head and index, and equal
// Lookup's.
func (e *env) wantHeads(name string, head, index nameservice.Value) {
	e.t.Helper()
	h, err := e.ns.Heads(e.ctx, e.id(name))
	e.must(err)
	if !h.Head.Equal(head) || !h.Index.Equal(index) {
		e.t.Fatalf("heads of %s = %v, %v; want %v, %v", name, h.Head, h.Index, head, index)
	}
	if r := e.lookup(name); !r.Head.Equal(h.Head) || !r.Index.Equal(h.Index) {
		e.t.Fatalf("heads of %s = %v, %v; lookup has %v, %v", name, h.Head, h.Index, *r.Head, *r.Index)
	}
}
