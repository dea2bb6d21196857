package conformance

import (
	"encoding/json"

	"nameservice.dev/nameservice"
)

var groupPublish = group{name: "Publish", guarantee: "publish: a commit or index pointer only moves forward; a stale or equal t is not applied and reports the current value", cases: []testCase{
	{name: "CommitApplied", run: func(e *env) {
		e.initAt("db", 1)
		e.wantValue("db", nameservice.Head, ref("c1", 1))
	}},
	{name: "CommitSequenceIsMonotonic", quick: true, run: func(e *env) {
		e.init("db")
		for t := int64(1); t <= 20; t++ {
			e.applied(ref("c", t))(e.ns.PublishCommit(e.ctx, e.id("db"), t, "c"))
		}
		e.wantValue("db", nameservice.Head, ref("c", 20))
	}},
	{name: "CommitStaleCarriesCurrent", quick: true, run: func(e *env) {
		e.initAt("db", 5)
		e.rejected(ref("c5", 5))(e.ns.PublishCommit(e.ctx, e.id("db"), 3, "c3"))
		e.wantValue("db", nameservice.Head, ref("c5", 5))
	}},
	{name: "CommitEqualTIsStale", run: func(e *env) {
		e.initAt("db", 5)
		e.rejected(ref("c5", 5))(e.ns.PublishCommit(e.ctx, e.id("db"), 5, "other"))
	}},
	{name: "CommitUnknownIsNotFoundAndCreatesNothing", run: func(e *env) {
		e.wantErr(second(e.ns.PublishCommit(e.ctx, e.id("db"), 1, "c1")), nameservice.ErrNotFound)
		e.wantAbsent("db")
		e.listIDs(nameservice.ListOptions{IncludeRetracted: true})
	}},
	{name: "CommitOnGraphSourceIsWrongKind", run: func(e *env) {
		e.graphSource("gs", nil)
		e.wantErr(second(e.ns.PublishCommit(e.ctx, e.id("gs"), 1, "c1")), nameservice.ErrWrongKind)
		e.wantErr(second(e.ns.Head(e.ctx, e.id("gs"))), nameservice.ErrWrongKind)
	}},
	{name: "CommitInvalidArguments", run: func(e *env) {
		e.init("db")
		for _, c := range []struct {
			t    int64
			addr string
		}{{0, "c0"}, {-1, "c"}, {1, ""}} {
			e.wantErr(second(e.ns.PublishCommit(e.ctx, e.id("db"), c.t, c.addr)), nameservice.ErrInvalidArgument)
		}
		e.wantValue("db", nameservice.Head, unborn)
	}},
	{name: "IndexApplied", run: func(e *env) {
		e.init("db")
		e.applied(ref("i7", 7))(e.ns.PublishIndex(e.ctx, e.id("db"), 7, "i7"))
		e.wantValue("db", nameservice.Index, ref("i7", 7))
	}},
	{name: "IndexStaleAndEqualCarryCurrent", quick: true, run: func(e *env) {
		e.init("db")
		e.applied(ref("i7", 7))(e.ns.PublishIndex(e.ctx, e.id("db"), 7, "i7"))
		e.rejected(ref("i7", 7))(e.ns.PublishIndex(e.ctx, e.id("db"), 6, "i6"))
		e.rejected(ref("i7", 7))(e.ns.PublishIndex(e.ctx, e.id("db"), 7, "again"))
	}},
	{name: "IndexUnknownIsNotFoundAndLeavesNoOrphan", run: func(e *env) {
		e.wantErr(second(e.ns.PublishIndex(e.ctx, e.id("db"), 1, "i1")), nameservice.ErrNotFound)
		e.init("db")
		e.wantValue("db", nameservice.Index, unborn)
	}},
	{name: "AdminIndexAcceptsEqualT", run: func(e *env) {
		e.init("db")
		e.applied(ref("i7", 7))(e.ns.PublishIndex(e.ctx, e.id("db"), 7, "i7"))
		e.applied(ref("i7b", 7))(e.ns.AdminPublishIndex(e.ctx, e.id("db"), 7, "i7b"))
		e.rejected(ref("i7b", 7))(e.ns.AdminPublishIndex(e.ctx, e.id("db"), 6, "i6"))
		e.applied(ref("i8", 8))(e.ns.AdminPublishIndex(e.ctx, e.id("db"), 8, "i8"))
		e.wantValue("db", nameservice.Index, ref("i8", 8))
	}},
	{name: "IndexOnGraphSource", run: func(e *env) {
		e.graphSource("gs", nil)
		e.applied(ref("g42", 42))(e.ns.PublishIndex(e.ctx, e.id("gs"), 42, "g42"))
		e.rejected(ref("g42", 42))(e.ns.PublishIndex(e.ctx, e.id("gs"), 41, "g41"))
		e.wantValue("gs", nameservice.Index, ref("g42", 42))
	}},
	{name: "PublishDoesNotTouchOtherConcerns", run: func(e *env) {
		e.init("db")
		before := e.lookup("db")
		e.publish("db", 1)
		after := e.lookup("db")
		if !after.Index.Equal(*before.Index) || !after.Status.Equal(*before.Status) || !after.Config.Equal(*before.Config) {
			e.t.Fatalf("a head publish changed other concerns: before %+v after %+v", before, after)
		}
	}},
}}

var groupCompareAndSetRef = group{name: "CompareAndSetRef", guarantee: "compare-and-set: a pointer changes only from the expected value; a stale expected value must not apply", cases: []testCase{
	{name: "HeadFromUnborn", run: func(e *env) {
		e.init("db")
		e.applied(ref("c1", 1))(e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Head, &unborn, nameservice.Ref{Address: "c1", T: 1}))
	}},
	{name: "HeadFromCurrent", quick: true, run: func(e *env) {
		e.initAt("db", 1)
		cur := ref("c1", 1)
		e.applied(ref("c2", 2))(e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Head, &cur, nameservice.Ref{Address: "c2", T: 2}))
		e.wantValue("db", nameservice.Head, ref("c2", 2))
	}},
	{name: "HeadWrongAddressConflicts", quick: true, run: func(e *env) {
		e.initAt("db", 1)
		exp := ref("diverged", 1)
		e.rejected(ref("c1", 1))(e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Head, &exp, nameservice.Ref{Address: "c2", T: 2}))
	}},
	{name: "HeadWrongTConflicts", run: func(e *env) {
		e.initAt("db", 3)
		exp := ref("c3", 2) // same address, other t: the reference's file backend wrongly accepts this
		e.rejected(ref("c3", 3))(e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Head, &exp, nameservice.Ref{Address: "c4", T: 4}))
	}},
	{name: "HeadUnbornExpectedOnBornConflicts", run: func(e *env) {
		e.initAt("db", 1)
		e.rejected(ref("c1", 1))(e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Head, &unborn, nameservice.Ref{Address: "c2", T: 2}))
	}},
	{name: "HeadExpectedNoAddressPositiveTConflicts", run: func(e *env) {
		e.initAt("db", 5)
		exp := nameservice.Value{V: 5} // address none, t > 0: the reference's DynamoDB backend panics here
		e.rejected(ref("c5", 5))(e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Head, &exp, nameservice.Ref{Address: "c6", T: 6}))
	}},
	{name: "HeadNeedsHigherT", run: func(e *env) {
		e.initAt("db", 5)
		cur := ref("c5", 5)
		e.rejected(cur)(e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Head, &cur, nameservice.Ref{Address: "c5b", T: 5}))
		e.rejected(cur)(e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Head, &cur, nameservice.Ref{Address: "c4", T: 4}))
	}},
	{name: "IndexAcceptsEqualT", run: func(e *env) {
		e.init("db")
		e.applied(ref("i5", 5))(e.ns.PublishIndex(e.ctx, e.id("db"), 5, "i5"))
		cur := ref("i5", 5)
		e.applied(ref("i5b", 5))(e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Index, &cur, nameservice.Ref{Address: "i5b", T: 5}))
		cur = ref("i5b", 5)
		e.rejected(cur)(e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Index, &cur, nameservice.Ref{Address: "i4", T: 4}))
	}},
	{name: "BootstrapCreatesLedger", run: func(e *env) {
		e.applied(ref("c3", 3))(e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Head, nil, nameservice.Ref{Address: "c3", T: 3}))
		if r := e.lookup("db"); r.Kind != nameservice.Ledger || r.Retracted {
			e.t.Fatalf("bootstrapped record: %+v", r.Meta)
		}
		e.wantValue("db", nameservice.Head, ref("c3", 3))
		e.wantValue("db", nameservice.Index, unborn)
		e.wantValue("db", nameservice.Status, ready)
		e.wantValue("db", nameservice.Config, unborn)
	}},
	{name: "BootstrapIndex", run: func(e *env) {
		e.applied(ref("i2", 2))(e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Index, nil, nameservice.Ref{Address: "i2", T: 2}))
		e.wantValue("db", nameservice.Head, unborn)
		e.wantValue("db", nameservice.Index, ref("i2", 2))
	}},
	{name: "BootstrapOnExistingConflicts", run: func(e *env) {
		e.init("db")
		e.rejected(unborn)(e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Head, nil, nameservice.Ref{Address: "c1", T: 1}))
		e.wantValue("db", nameservice.Head, unborn)
	}},
	{name: "BootstrapRaceLoserSeesWinner", quick: true, run: func(e *env) {
		const k = 4
		outs := make([]nameservice.Outcome, k)
		runParallel(e, k, func(i int, c *nameservice.NameService) {
			out, err := c.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Head, nil, nameservice.Ref{Address: "c" + string(rune('a'+i)), T: 1})
			e.must(err)
			outs[i] = out
		})
		var winner *nameservice.Value
		for i := range outs {
			if outs[i].Applied {
				if winner != nil {
					e.t.Fatalf("two bootstraps applied: %v and %v", *winner, outs[i].Current)
				}
				winner = &outs[i].Current
			}
		}
		if winner == nil {
			e.t.Fatal("no bootstrap applied")
		}
		for _, o := range outs {
			if !o.Current.Equal(*winner) {
				e.t.Fatalf("loser's current %v differs from the winner %v", o.Current, *winner)
			}
		}
	}},
	{name: "UnknownWithExpectedIsNotFound", run: func(e *env) {
		_, err := e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Head, &unborn, nameservice.Ref{Address: "c1", T: 1})
		e.wantErr(err, nameservice.ErrNotFound)
		e.wantAbsent("db")
	}},
	{name: "HeadOnGraphSourceIsWrongKind", run: func(e *env) {
		e.graphSource("gs", nil)
		_, err := e.ns.CompareAndSetRef(e.ctx, e.id("gs"), nameservice.Head, &unborn, nameservice.Ref{Address: "c1", T: 1})
		e.wantErr(err, nameservice.ErrWrongKind)
	}},
	{name: "StatusIsNotARef", run: func(e *env) {
		e.init("db")
		_, err := e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Status, &ready, nameservice.Ref{Address: "x", T: 2})
		e.wantErr(err, nameservice.ErrInvalidArgument)
	}},
	{name: "FastForwardCommit", run: func(e *env) {
		e.init("db")
		e.applied(ref("c2", 2))(e.ns.FastForwardCommit(e.ctx, e.id("db"), 2, "c2"))
		e.applied(ref("c5", 5))(e.ns.FastForwardCommit(e.ctx, e.id("db"), 5, "c5"))
		e.rejected(ref("c5", 5))(e.ns.FastForwardCommit(e.ctx, e.id("db"), 4, "c4"))
	}},
}}

var groupPushStatus = group{name: "PushStatus", guarantee: "status push: applies only over the expected status, to a higher watermark", cases: []testCase{
	{name: "Applied", quick: true, run: func(e *env) {
		e.init("db")
		next := status(2, "indexing", nameservice.Object{"queue_depth": 3})
		e.applied(next)(e.ns.PushStatus(e.ctx, e.id("db"), ready, next))
		e.wantValue("db", nameservice.Status, next)
	}},
	{name: "StaleWatermarkConflicts", quick: true, run: func(e *env) {
		e.init("db")
		s2 := status(2, "indexing", nil)
		e.applied(s2)(e.ns.PushStatus(e.ctx, e.id("db"), ready, s2))
		e.rejected(s2)(e.ns.PushStatus(e.ctx, e.id("db"), ready, status(2, "maintenance", nil)))
	}},
	{name: "DifferentExtraFieldsConflict", run: func(e *env) {
		e.init("db")
		s2 := status(2, "ready", nameservice.Object{"queue_depth": 3})
		e.applied(s2)(e.ns.PushStatus(e.ctx, e.id("db"), ready, s2))
		exp := status(2, "ready", nameservice.Object{"queue_depth": 4})
		e.rejected(s2)(e.ns.PushStatus(e.ctx, e.id("db"), exp, status(3, "ready", nil)))
		exp = status(2, "ready", nil)
		e.rejected(s2)(e.ns.PushStatus(e.ctx, e.id("db"), exp, status(3, "ready", nil)))
	}},
	{name: "NumbersCompareByValue", run: func(e *env) {
		e.init("db")
		s2 := status(2, "ready", nameservice.Object{"n": json.Number("2")})
		e.applied(s2)(e.ns.PushStatus(e.ctx, e.id("db"), ready, s2))
		exp := status(2, "ready", nameservice.Object{"n": json.Number("2.0")})
		s3 := status(3, "ready", nil)
		e.applied(s3)(e.ns.PushStatus(e.ctx, e.id("db"), exp, s3))
	}},
	{name: "PayloadRoundTripsExactly", run: func(e *env) {
		e.init("db")
		extra := nameservice.Object{
			"big": json.Number("9007199254740993"), "neg": json.Number("-42"), "frac": json.Number("0.125"),
			"flag": true, "none": nil, "list": []any{"a", json.Number("1"), map[string]any{"x": "y"}},
			"nested": map[string]any{"deep": map[string]any{"k": "v"}}, "unicode": "données ✓", "empty": map[string]any{},
		}
		next := status(2, "indexing", extra)
		e.applied(next)(e.ns.PushStatus(e.ctx, e.id("db"), ready, next))
		got := e.lookup("db").Status
		if !got.Equal(next) {
			e.t.Fatalf("status round trip:\n got %v\nwant %v", *got, next)
		}
		if got.Payload["big"] != json.Number("9007199254740993") {
			e.t.Fatalf("big integer lost precision: %v", got.Payload["big"])
		}
	}},
	{name: "NotAboveIsInvalid", run: func(e *env) {
		e.init("db")
		e.wantErr(second(e.ns.PushStatus(e.ctx, e.id("db"), ready, status(1, "x", nil))), nameservice.ErrInvalidArgument)
		e.wantValue("db", nameservice.Status, ready)
	}},
	{name: "NoStateIsInvalid", run: func(e *env) {
		e.init("db")
		_, err := e.ns.PushStatus(e.ctx, e.id("db"), ready, nameservice.Value{V: 2, Payload: nameservice.Object{"x": 1}})
		e.wantErr(err, nameservice.ErrInvalidArgument)
	}},
	{name: "UnknownIsNotFound", run: func(e *env) {
		e.wantErr(second(e.ns.PushStatus(e.ctx, e.id("db"), ready, status(2, "x", nil))), nameservice.ErrNotFound)
		e.wantAbsent("db")
	}},
}}

var groupPushConfig = group{name: "PushConfig", guarantee: "config push: applies only over the expected config, to a higher watermark", cases: []testCase{
	{name: "FromUnborn", quick: true, run: func(e *env) {
		e.init("db")
		next := config(1, nameservice.Object{"default_context": "ctx1", "index_threshold": 1000})
		e.applied(next)(e.ns.PushConfig(e.ctx, e.id("db"), unborn, next))
		e.wantValue("db", nameservice.Config, next)
	}},
	{name: "Conflict", quick: true, run: func(e *env) {
		e.init("db")
		c1 := config(1, nameservice.Object{"default_context": "ctx1"})
		e.applied(c1)(e.ns.PushConfig(e.ctx, e.id("db"), unborn, c1))
		e.rejected(c1)(e.ns.PushConfig(e.ctx, e.id("db"), unborn, config(1, nameservice.Object{"default_context": "ctx2"})))
		e.rejected(c1)(e.ns.PushConfig(e.ctx, e.id("db"), config(1, nameservice.Object{"default_context": "other"}), config(2, nameservice.Object{})))
	}},
	{name: "ExtraKeysRoundTrip", run: func(e *env) {
		e.init("db")
		next := config(3, nameservice.Object{"index_threshold": 500, "replication": map[string]any{"factor": 3, "regions": []any{"a", "b"}}})
		e.applied(next)(e.ns.PushConfig(e.ctx, e.id("db"), unborn, next))
		e.wantValue("db", nameservice.Config, next)
	}},
	{name: "NilPayloadIsInvalid", run: func(e *env) {
		e.init("db")
		_, err := e.ns.PushConfig(e.ctx, e.id("db"), unborn, nameservice.Value{V: 1})
		e.wantErr(err, nameservice.ErrInvalidArgument)
	}},
	{name: "GraphSource", run: func(e *env) {
		e.graphSource("gs", map[string]any{"k1": 1.2})
		cur := config(1, nameservice.Object{"k1": 1.2})
		next := config(2, nameservice.Object{"k1": 1.5, "fields": []any{"title"}})
		e.applied(next)(e.ns.PushConfig(e.ctx, e.id("gs"), cur, next))
		e.wantValue("gs", nameservice.Config, next)
	}},
}}

var groupGraphSource = group{name: "GraphSource", guarantee: "graph sources: created and republished with kind, dependencies and config intact", cases: []testCase{
	{name: "Create", quick: true, run: func(e *env) {
		e.must(e.ns.PublishGraphSource(e.ctx, e.id("gs"), "db:Bm25Index", []string{e.id("db"), e.id("other:dev")}, map[string]any{"k1": 1.2, "b": 0.75}))
		r := e.lookup("gs")
		if r.Kind != nameservice.GraphSource || r.SourceType != "db:Bm25Index" || r.Head != nil {
			e.t.Fatalf("graph source = %+v head %v", r.Meta, r.Head)
		}
		if want := e.ids("db", "other:dev"); len(r.Dependencies) != 2 || r.Dependencies[0] != want[0] || r.Dependencies[1] != want[1] {
			e.t.Fatalf("dependencies = %q, want %q", r.Dependencies, want)
		}
		e.wantValue("gs", nameservice.Index, unborn)
		e.wantValue("gs", nameservice.Status, ready)
		e.wantValue("gs", nameservice.Config, config(1, nameservice.Object{"k1": 1.2, "b": 0.75}))
	}},
	{name: "EmptyAndAbsentDependenciesStayApart", run: func(e *env) {
		e.must(e.ns.PublishGraphSource(e.ctx, e.id("absent"), "db:X", nil, nil))
		e.must(e.ns.PublishGraphSource(e.ctx, e.id("empty"), "db:X", []string{}, nil))
		i, c := unborn, unborn
		rec := &nameservice.Record{ID: e.parseID("imported"), Meta: nameservice.Meta{Kind: nameservice.GraphSource, SourceType: "db:X", Dependencies: []string{}},
			Index: &i, Status: &ready, Config: &c}
		e.must(e.ns.Import(e.ctx, rec))
		want := map[string]bool{e.ids("absent")[0]: false, e.ids("empty")[0]: true, e.ids("imported")[0]: true}
		check := func(how string, r *nameservice.Record) {
			if present := r.Dependencies != nil; present != want[r.ID.String()] || len(r.Dependencies) != 0 {
				e.t.Fatalf("%s %s: dependencies %#v, want present=%v and empty", how, r.ID, r.Dependencies, want[r.ID.String()])
			}
		}
		for _, n := range []string{"absent", "empty", "imported"} {
			check("lookup", e.lookup(n))
		}
		for _, r := range e.listIDs(nameservice.ListOptions{}, "absent", "empty", "imported") {
			check("list", r)
		}
	}},
	{name: "CreateWithoutConfig", run: func(e *env) {
		e.graphSource("gs", nil)
		e.wantValue("gs", nameservice.Config, unborn)
	}},
	{name: "RepublishUpdatesConfigKeepsIndex", quick: true, run: func(e *env) {
		e.graphSource("gs", map[string]any{"k1": 1})
		e.applied(ref("g9", 9))(e.ns.PublishIndex(e.ctx, e.id("gs"), 9, "g9"))
		e.graphSource("gs", map[string]any{"k1": 2})
		e.wantValue("gs", nameservice.Config, config(2, nameservice.Object{"k1": 2}))
		e.wantValue("gs", nameservice.Index, ref("g9", 9))
	}},
	{name: "RepublishSameConfigChangesNothing", run: func(e *env) {
		e.graphSource("gs", map[string]any{"k1": 1})
		e.graphSource("gs", map[string]any{"k1": 1.0})
		e.graphSource("gs", nil)
		e.wantValue("gs", nameservice.Config, config(1, nameservice.Object{"k1": 1}))
	}},
	{name: "OnLedgerIsWrongKind", run: func(e *env) {
		e.init("db")
		err := e.ns.PublishGraphSource(e.ctx, e.id("db"), "db:Bm25Index", nil, map[string]any{"k": 1})
		e.wantErr(err, nameservice.ErrWrongKind)
		if r := e.lookup("db"); r.Kind != nameservice.Ledger || !r.Config.Equal(unborn) {
			e.t.Fatalf("ledger changed by a graph-source publish: %+v config %v", r.Meta, *r.Config)
		}
	}},
	{name: "InitOnGraphSourceIsAlreadyExists", run: func(e *env) {
		e.graphSource("gs", nil)
		e.wantErr(e.ns.Init(e.ctx, e.id("gs")), nameservice.ErrAlreadyExists)
	}},
	{name: "InvalidArguments", run: func(e *env) {
		e.wantErr(e.ns.PublishGraphSource(e.ctx, e.id("gs"), "", nil, nil), nameservice.ErrInvalidArgument)
		e.wantErr(e.ns.PublishGraphSource(e.ctx, e.id("gs"), "db:X", []string{"bad:dep:x"}, nil), nameservice.ErrInvalidID)
		e.wantErr(e.ns.PublishGraphSource(e.ctx, e.id("gs"), "db:X", nil, []int{1}), nameservice.ErrInvalidArgument)
		e.wantErr(e.ns.PublishGraphSource(e.ctx, e.id("gs"), "db:X", nil, json.RawMessage(`"str"`)), nameservice.ErrInvalidArgument)
		e.wantAbsent("gs")
	}},
}}
