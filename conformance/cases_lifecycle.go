package conformance

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"nameservice.dev/nameservice"
)

var groupLifecycle = group{name: "Lifecycle", guarantee: "lifecycle: init creates a record exactly once; retract and purge act once and leave nothing behind", cases: []testCase{
	{name: "InitCreatesUnbornLedger", quick: true, run: func(e *env) {
		e.init("db")
		r := e.lookup("db")
		if r.Kind != nameservice.Ledger || r.Retracted || r.ID.Name != e.id("db") || r.ID.Branch != "main" {
			e.t.Fatalf("record meta = %+v %+v, want an unretracted ledger %s:main", r.ID, r.Meta, e.id("db"))
		}
		for c, want := range map[nameservice.Concern]nameservice.Value{
			nameservice.Head: unborn, nameservice.Index: unborn, nameservice.Status: ready, nameservice.Config: unborn,
		} {
			e.wantValue("db", c, want)
		}
	}},
	{name: "InitRecordsCreatedAt", run: func(e *env) {
		e.init("db")
		if got := e.lookup("db").CreatedAt; got != clock.Unix() {
			e.t.Fatalf("created_at = %d, want %d", got, clock.Unix())
		}
	}},
	{name: "InitDefaultsBranchToMain", run: func(e *env) {
		e.init("db")
		if _, err := e.ns.Lookup(e.ctx, e.id("db")+":main"); err != nil {
			e.t.Fatalf("lookup with explicit main branch: %v", err)
		}
		e.wantErr(e.ns.Init(e.ctx, e.id("db")+":main"), nameservice.ErrAlreadyExists)
	}},
	{name: "InitBranchesAreSeparateRecords", run: func(e *env) {
		e.init("db", "db:dev")
		e.publish("db:dev", 3)
		e.wantValue("db", nameservice.Head, unborn)
		e.wantValue("db:dev", nameservice.Head, ref("c3", 3))
	}},
	{name: "InitNestedNamesAndBranches", run: func(e *env) {
		id := "tenant/customers:release/v1.0"
		e.init(id)
		e.applied(ref("c1", 1))(e.ns.PublishCommit(e.ctx, e.id(id), 1, "c1"))
		if r := e.lookup(id); r.ID.Name != e.id("tenant/customers") || r.ID.Branch != "release/v1.0" {
			e.t.Fatalf("id = %+v", r.ID)
		}
		e.listIDs(nameservice.ListOptions{}, id)
	}},
	{name: "InitTwiceIsAlreadyExists", quick: true, run: func(e *env) {
		e.initAt("db", 4)
		e.wantErr(e.ns.Init(e.ctx, e.id("db")), nameservice.ErrAlreadyExists)
		e.wantValue("db", nameservice.Head, ref("c4", 4))
	}},
	{name: "InitOverRetractedIsAlreadyExists", run: func(e *env) {
		e.init("db")
		e.must(e.ns.Retract(e.ctx, e.id("db")))
		e.wantErr(e.ns.Init(e.ctx, e.id("db")), nameservice.ErrAlreadyExists)
		if !e.lookup("db").Retracted {
			e.t.Fatal("init over a retracted record un-retracted it")
		}
	}},
	{name: "InitRaceHasOneWinner", quick: true, run: func(e *env) {
		create := func(c *nameservice.NameService) error { return c.Init(e.ctx, e.id("db")) }
		if wins := raceWins(e, 4, nameservice.ErrAlreadyExists, create); wins != 1 {
			e.t.Fatalf("%d inits succeeded, want exactly 1", wins)
		}
		e.wantValue("db", nameservice.Status, ready)
	}},
	{name: "LookupUnknownIsNotFound", run: func(e *env) { e.wantAbsent("nothing") }},
	{name: "TwoClientsSeeEachOthersWrites", run: func(e *env) {
		a, b := e.ns, e.client()
		e.must(a.Init(e.ctx, e.id("db")))
		e.applied(ref("c1", 1))(b.PublishCommit(e.ctx, e.id("db"), 1, "c1"))
		got, err := a.Head(e.ctx, e.id("db"))
		e.must(err)
		if !got.Equal(ref("c1", 1)) {
			e.t.Fatalf("client A reads head %v right after client B wrote c1", got)
		}
	}},
	{name: "RetractSetsFlagAndBumpsStatus", quick: true, run: func(e *env) {
		e.initAt("db", 2)
		e.must(e.ns.Retract(e.ctx, e.id("db")))
		if r := e.lookup("db"); !r.Retracted {
			e.t.Fatal("retracted flag not set")
		}
		e.wantValue("db", nameservice.Status, status(2, "retracted", nameservice.Object{"retracted_at": json.Number(strconv.FormatInt(clock.Unix(), 10))}))
		e.wantValue("db", nameservice.Head, ref("c2", 2))
	}},
	{name: "RetractAfterStatusPushesBumpsFromCurrent", run: func(e *env) {
		e.init("db")
		cur := ready
		for v := int64(2); v <= 4; v++ {
			next := status(v, "indexing", nameservice.Object{"n": v})
			e.applied(next)(e.ns.PushStatus(e.ctx, e.id("db"), cur, next))
			cur = next
		}
		e.must(e.ns.Retract(e.ctx, e.id("db")))
		if got := e.lookup("db").Status; got.V != 5 || got.State() != "retracted" {
			e.t.Fatalf("status after retract = %v, want v5 retracted", *got)
		}
	}},
	{name: "RetractTwiceIsNoOp", run: func(e *env) {
		e.init("db")
		e.must(e.ns.Retract(e.ctx, e.id("db")))
		e.must(e.ns.Retract(e.ctx, e.id("db")))
		if v := e.lookup("db").Status.V; v != 2 {
			e.t.Fatalf("status_v after two retracts = %d, want 2", v)
		}
	}},
	{name: "RetractRaceBumpsOnce", run: func(e *env) {
		e.init("db")
		runParallel(e, 4, func(_ int, c *nameservice.NameService) { e.must(c.Retract(e.ctx, e.id("db"))) })
		if v := e.lookup("db").Status.V; v != 2 {
			e.t.Fatalf("status_v after concurrent retracts = %d, want 2", v)
		}
	}},
	{name: "RetractUnknownIsNotFoundAndLeavesNothing", run: func(e *env) {
		e.wantErr(e.ns.Retract(e.ctx, e.id("db")), nameservice.ErrNotFound)
		e.wantAbsent("db")
		e.init("db")
		if e.lookup("db").Retracted {
			e.t.Fatal("init after a failed retract came back retracted")
		}
	}},
	{name: "RetractGraphSource", run: func(e *env) {
		e.graphSource("gs", nil)
		e.must(e.ns.Retract(e.ctx, e.id("gs")))
		if r := e.lookup("gs"); !r.Retracted || r.Status.V != 2 {
			e.t.Fatalf("graph source after retract: retracted=%v status=%v", r.Retracted, *r.Status)
		}
	}},
	{name: "PurgeFreesTheName", quick: true, run: func(e *env) {
		e.initAt("db", 9)
		e.must(e.ns.Retract(e.ctx, e.id("db")))
		e.must(e.ns.Purge(e.ctx, e.id("db")))
		e.wantAbsent("db")
		e.init("db")
		e.wantValue("db", nameservice.Head, unborn)
		e.wantValue("db", nameservice.Status, ready)
		if e.lookup("db").Retracted {
			e.t.Fatal("re-initialised record is retracted")
		}
	}},
	{name: "PurgeGraphSourceThenInitLedger", run: func(e *env) {
		e.graphSource("x", map[string]any{"k": 1})
		e.must(e.ns.Purge(e.ctx, e.id("x")))
		e.init("x")
		if r := e.lookup("x"); r.Kind != nameservice.Ledger || r.Head == nil {
			e.t.Fatalf("after purge and init: kind %s head %v", r.Kind, r.Head)
		}
	}},
	{name: "PurgeUnknownIsNotFound", run: func(e *env) {
		e.wantErr(e.ns.Purge(e.ctx, e.id("db")), nameservice.ErrNotFound)
	}},
}}

var groupIDs = group{name: "IDs", guarantee: "IDs: an invalid ID is refused by every operation and creates nothing; a valid one round-trips; an error names its ID once",
	cases: append(append(invalidIDCases(), validIDCases()...), testCase{name: "ErrorsNameTheIDOnce", run: errorsNameTheIDOnce},
		testCase{name: "AtSignOnlyInExistingRecords", run: atSignOnlyInExistingRecords})}

// errorsNameTheIDOnce checks that the errors of operations on one record
// name its ID exactly once, however many layers wrap them, and still match
// their sentinel.
func errorsNameTheIDOnce(e *env) {
	e.init("db")
	e.graphSource("gs", nil)
	ctx, db, gs, none := e.ctx, e.id("db"), e.id("gs"), e.id("none")
	type result struct {
		name string // the ID's name, as the message must show it
		err  error
		want error
	}
	r := map[string]result{
		"init existing":           {db, e.ns.Init(ctx, db), nameservice.ErrAlreadyExists},
		"init over graph source":  {gs, e.ns.Init(ctx, gs), nameservice.ErrAlreadyExists},
		"retract unknown":         {none, e.ns.Retract(ctx, none), nameservice.ErrNotFound},
		"purge unknown":           {none, e.ns.Purge(ctx, none), nameservice.ErrNotFound},
		"graph source on ledger":  {db, e.ns.PublishGraphSource(ctx, db, "db:Bm25Index", nil, nil), nameservice.ErrWrongKind},
		"push config unknown":     {none, second(e.ns.PushConfig(ctx, none, unborn, config(1, nameservice.Object{}))), nameservice.ErrNotFound},
		"push status unknown":     {none, second(e.ns.PushStatus(ctx, none, ready, status(2, "x", nil))), nameservice.ErrNotFound},
		"lookup unknown":          {none, second(e.ns.Lookup(ctx, none)), nameservice.ErrNotFound},
		"head unknown":            {none, second(e.ns.Head(ctx, none)), nameservice.ErrNotFound},
		"head of graph source":    {gs, second(e.ns.Head(ctx, gs)), nameservice.ErrWrongKind},
		"publish commit unknown":  {none, second(e.ns.PublishCommit(ctx, none, 1, "c1")), nameservice.ErrNotFound},
		"publish index unknown":   {none, second(e.ns.PublishIndex(ctx, none, 1, "i1")), nameservice.ErrNotFound},
		"commit on graph source":  {gs, second(e.ns.PublishCommit(ctx, gs, 1, "c1")), nameservice.ErrWrongKind},
		"publish commit at t 0":   {db, second(e.ns.PublishCommit(ctx, db, 0, "c0")), nameservice.ErrInvalidArgument},
		"cas from unborn unknown": {none, second(e.ns.CompareAndSetRef(ctx, none, nameservice.Head, &ready, nameservice.Ref{Address: "c1", T: 1})), nameservice.ErrNotFound},
	}
	for op, res := range r {
		if !errors.Is(res.err, res.want) {
			e.t.Errorf("%s: error = %v, want one wrapping %q", op, res.err, res.want)
			continue
		}
		if n := strings.Count(res.err.Error(), res.name); n != 1 {
			e.t.Errorf("%s: the error names %s %d times, want once: %v", op, res.name, n, res.err)
		}
	}
}

// invalidIDCases checks each rejected form of an ID on every operation that
// takes one, and that nothing was created.
func invalidIDCases() []testCase {
	forms := map[string]string{
		"EmptyName":          ":main",
		"EmptyBranch":        "x:",
		"SecondColon":        "x:a:b",
		"NUL":                "x\x00y",
		"Newline":            "x\ny",
		"Tab":                "x:a\tb",
		"Delete":             "x\x7f",
		"LeadingSlash":       "/x",
		"TrailingSlash":      "x/",
		"EmptySegment":       "x//y",
		"DotSegment":         "x/./y",
		"DotDotSegment":      "x/../y",
		"DotDotBranch":       "x:..",
		"ReservedIndex":      "x.index",
		"ReservedHead":       "x:b.head",
		"ReservedStatus":     "x/y.status:main",
		"ReservedConfig":     "x.config",
		"ReservedLock":       "x:main.lock",
		"ReservedTmp":        "x.tmp",
		"TooLong":            strings.Repeat("n", 508) + ":main",
		"InvalidUTF8":        "x\xff",
		"C1ControlCharacter": "x\u0085",
	}
	var cases []testCase
	for name, form := range forms {
		cases = append(cases, testCase{name: "Reject" + name, quick: name == "DotDotSegment" || name == "TooLong", run: func(e *env) { e.rejectID(form) }})
	}
	return cases
}

func (e *env) rejectID(suffix string) {
	e.t.Helper()
	id := e.prefix + suffix
	if strings.HasPrefix(suffix, "/") || strings.HasPrefix(suffix, ":") {
		id = suffix // the prefix would make these valid
	}
	ctx := e.ctx
	errs := map[string]error{"init": e.ns.Init(ctx, id), "retract": e.ns.Retract(ctx, id), "purge": e.ns.Purge(ctx, id),
		"graph source": e.ns.PublishGraphSource(ctx, id, "db:Bm25Index", nil, nil), "lookup": second(e.ns.Lookup(ctx, id)),
		"publish commit": second(e.ns.PublishCommit(ctx, id, 1, "c1")), "publish index": second(e.ns.PublishIndex(ctx, id, 1, "i1")),
		"cas ref":     second(e.ns.CompareAndSetRef(ctx, id, nameservice.Head, nil, nameservice.Ref{Address: "c1", T: 1})),
		"push status": second(e.ns.PushStatus(ctx, id, ready, status(2, "x", nil)))}
	for op, err := range errs {
		if !errors.Is(err, nameservice.ErrInvalidID) {
			e.t.Errorf("%s %q: error = %v, want ErrInvalidID", op, id, err)
		}
	}
	e.listIDs(nameservice.ListOptions{IncludeRetracted: true})
}

// atSignOnlyInExistingRecords: no new record may take an ID with '@'
// (Fluree reads it as time travel), but one that exists (here imported) is
// read and written as any other.
func atSignOnlyInExistingRecords(e *env) {
	for _, form := range []string{"db:feat@1", "db@1"} {
		e.wantErr(e.ns.Init(e.ctx, e.id(form)), nameservice.ErrInvalidID)
		e.wantErr(e.ns.PublishGraphSource(e.ctx, e.id(form), "db:Bm25Index", nil, nil), nameservice.ErrInvalidID)
		_, err := e.ns.CompareAndSetRef(e.ctx, e.id(form), nameservice.Head, nil, nameservice.Ref{Address: "c1", T: 1})
		e.wantErr(err, nameservice.ErrInvalidID)
	}
	id := e.parseID("old:feat@1")
	h, i, s, c := ref("c1", 1), nameservice.Value{}, status(1, "ready", nil), nameservice.Value{}
	e.must(e.ns.Import(e.ctx, &nameservice.Record{ID: id, Meta: nameservice.Meta{Kind: nameservice.Ledger, CreatedAt: 1}, Head: &h, Index: &i, Status: &s, Config: &c}))
	e.applied(ref("c2", 2))(e.ns.PublishCommit(e.ctx, id.String(), 2, "c2"))
	e.wantValue("old:feat@1", nameservice.Head, ref("c2", 2))
}

func validIDCases() []testCase {
	forms := []string{"plain", "a.b:c.d", "x.indexer", "données:branche", "t/c:release/v1.0", "a-b_c~d:feat-1", strings.Repeat("n", 400)}
	var cases []testCase
	for i, form := range forms {
		cases = append(cases, testCase{name: "Accept" + strconv.Itoa(i), quick: i == 1, run: func(e *env) {
			e.init(form)
			e.applied(ref("i1", 1))(e.ns.PublishIndex(e.ctx, e.id(form), 1, "i1"))
			e.wantValue(form, nameservice.Index, ref("i1", 1))
			e.listIDs(nameservice.ListOptions{}, form)
		}})
	}
	return cases
}

var groupImport = group{name: "Import", guarantee: "import: a record is created exactly as given, or refused whole", cases: []testCase{
	{name: "CreatesTheRecordExactly", quick: true, run: func(e *env) {
		rec := &nameservice.Record{ID: e.parseID("db:dev"), Meta: nameservice.Meta{Kind: nameservice.Ledger, Retracted: true, CreatedAt: 1234, SourceBranch: "main", Branches: 2}}
		h, i := ref("c9", 9), ref("i7", 7)
		s := status(4, "retracted", nameservice.Object{"retracted_at": 99})
		c := config(2, nameservice.Object{"default_context": "ctx", "config_id": "cid", "x": []any{1}})
		rec.Head, rec.Index, rec.Status, rec.Config = &h, &i, &s, &c
		e.must(e.ns.Import(e.ctx, rec))
		if got := e.lookup("db:dev"); !sameRecord(got, rec) {
			e.t.Fatalf("imported record reads back as\n%s\nwant\n%s", js(got), js(rec))
		}
		e.wantErr(e.ns.Import(e.ctx, rec), nameservice.ErrAlreadyExists)
	}},
	{name: "GraphSource", run: func(e *env) {
		i, s, c := ref("g3", 3), status(2, "syncing", nil), config(5, nameservice.Object{"k": 1})
		rec := &nameservice.Record{ID: e.parseID("gs"), Meta: nameservice.Meta{Kind: nameservice.GraphSource, SourceType: "db:IcebergSource", Dependencies: []string{"a:main"}, CreatedAt: 5},
			Index: &i, Status: &s, Config: &c}
		e.must(e.ns.Import(e.ctx, rec))
		if got := e.lookup("gs"); !sameRecord(got, rec) {
			e.t.Fatalf("imported graph source reads back as\n%s\nwant\n%s", js(got), js(rec))
		}
	}},
	{name: "RejectsInvalidRecords", run: func(e *env) {
		bad := ref("c", 3)
		bad.V = 4 // payload t disagrees with the watermark
		rec := nameservice.Record{ID: e.parseID("db"), Meta: nameservice.Meta{Kind: nameservice.Ledger}, Head: &bad, Index: &unborn, Status: &ready, Config: &unborn}
		e.wantErr(e.ns.Import(e.ctx, &rec), nameservice.ErrInvalidArgument)
		e.wantAbsent("db")
	}},
}}
