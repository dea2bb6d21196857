package conformance

import (
	"fmt"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/model"
)

// graphs returns a named-graph index at t: the default graph, a metadata
// graph at revision rev, and an audit graph not indexed yet.
func graphs(t, rev int64) map[string]*nameservice.GraphIndex {
	return map[string]*nameservice.GraphIndex{
		nameservice.DefaultGraph: {Address: fmt.Sprint("default-t", t), T: t},
		"txn-metadata":           {Address: fmt.Sprintf("meta-t%d-r%d", t, rev), T: t, Rev: rev},
		"audit-log":              nil,
	}
}

var groupNamedGraphs = group{name: "NamedGraphs", guarantee: "named graphs: an index's graph map is stored and read exactly, under the index_t watermark rules", cases: []testCase{
	{name: "StoredAndReadExactly", quick: true, run: func(e *env) {
		e.init("db")
		want := model.GraphsValue(graphs(5, 0))
		e.applied(want)(e.ns.PublishIndexGraphs(e.ctx, e.id("db"), graphs(5, 0)))
		e.wantValue("db", nameservice.Index, want)
		ref, ok := e.lookup("db").Index.Ref()
		if !ok || ref.Address != "default-t5" || ref.T != 5 || len(ref.Graphs) != 3 || ref.Graphs["audit-log"] != nil {
			e.t.Fatalf("index ref = %+v (ok %v), want the default graph's pointer and three graphs", ref, ok)
		}
		for _, r := range e.listIDs(nameservice.ListOptions{}, "db") {
			if !r.Index.Equal(want) {
				e.t.Fatalf("listed index %v, want %v", *r.Index, want)
			}
		}
	}},
	{name: "WatermarkRulesApplyToIndexT", run: func(e *env) {
		e.init("db")
		cur := model.GraphsValue(graphs(5, 0))
		e.applied(cur)(e.ns.PublishIndexGraphs(e.ctx, e.id("db"), graphs(5, 0)))
		e.rejected(cur)(e.ns.PublishIndexGraphs(e.ctx, e.id("db"), graphs(5, 1)))
		e.rejected(cur)(e.ns.PublishIndex(e.ctx, e.id("db"), 4, "older"))
		rebuilt := model.GraphsValue(graphs(5, 1))
		e.applied(rebuilt)(e.ns.AdminPublishIndexGraphs(e.ctx, e.id("db"), graphs(5, 1)))
		e.applied(ref("plain", 6))(e.ns.PublishIndex(e.ctx, e.id("db"), 6, "plain"))
		e.wantValue("db", nameservice.Index, ref("plain", 6))
	}},
	{name: "CompareAndSetCarriesGraphs", run: func(e *env) {
		e.init("db")
		first := model.GraphsValue(graphs(3, 0))
		e.applied(first)(e.ns.PublishIndexGraphs(e.ctx, e.id("db"), graphs(3, 0)))
		next, _ := model.GraphsValue(graphs(4, 2)).Ref()
		stale := model.GraphsValue(graphs(3, 1)) // same t and default, other revision
		e.rejected(first)(e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Index, &stale, next))
		e.applied(next.Value())(e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Index, &first, next))
	}},
	{name: "InvalidGraphsWriteNothing", run: func(e *env) {
		e.init("db")
		noDefault := graphs(5, 0)
		delete(noDefault, nameservice.DefaultGraph)
		e.wantErr(second(e.ns.PublishIndexGraphs(e.ctx, e.id("db"), noDefault)), nameservice.ErrInvalidArgument)
		mismatch := nameservice.Ref{Address: "elsewhere", T: 5, Graphs: graphs(5, 0)}
		_, err := e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Index, &unborn, mismatch)
		e.wantErr(err, nameservice.ErrInvalidArgument)
		headGraphs, _ := model.GraphsValue(graphs(5, 0)).Ref()
		_, err = e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Head, &unborn, headGraphs)
		e.wantErr(err, nameservice.ErrInvalidArgument)
		e.wantValue("db", nameservice.Index, unborn)
		e.wantValue("db", nameservice.Head, unborn)
	}},
}}
