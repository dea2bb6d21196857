package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/guard"
	"nameservice.dev/nameservice/model"
)

var groupLimits = group{name: "Limits", guarantee: "limits: a record at every limit round-trips exactly; one over any limit is refused and writes nothing", cases: []testCase{
	{name: "LedgerAtEveryLimitRoundTrips", run: func(e *env) {
		e.init("db")
		addr := strings.Repeat("h", guard.MaxAddressBytes)
		e.applied(ref(addr, 1))(e.ns.PublishCommit(e.ctx, e.id("db"), 1, addr))
		iaddr := strings.Repeat("i", guard.MaxAddressBytes)
		e.applied(ref(iaddr, 1))(e.ns.PublishIndex(e.ctx, e.id("db"), 1, iaddr))
		st := status(2, "ready", paddedPayload(nameservice.Object{"state": "ready"}, guard.MaxPayloadBytes))
		e.applied(st)(e.ns.PushStatus(e.ctx, e.id("db"), status(1, "ready", nil), st))
		cfg := config(1, deepPayload(guard.MaxPayloadDepth, guard.MaxPayloadBytes))
		e.applied(cfg)(e.ns.PushConfig(e.ctx, e.id("db"), unborn, cfg))
		e.wantValue("db", nameservice.Status, st)
		e.wantValue("db", nameservice.Config, cfg)
		e.wantPrintable(e.lookup("db"))
		e.listIDs(nameservice.ListOptions{}, "db")
	}},
	{name: "GraphSourceAtEveryLimitRoundTrips", run: func(e *env) {
		deps := make([]string, guard.MaxDependencies)
		for i := range deps {
			deps[i] = e.id(fmt.Sprintf("%03d/%s", i, strings.Repeat("d", model.MaxIDLength-len(e.prefix)-10)))
		}
		typ := strings.Repeat("t", guard.MaxSourceTypeBytes)
		cfg := deepPayload(guard.MaxPayloadDepth, guard.MaxPayloadBytes)
		e.must(e.ns.PublishGraphSource(e.ctx, e.id("gs"), typ, deps, cfg))
		rec := fillToLimits(e, "gs")
		if rec.SourceType != typ || len(rec.Dependencies) != len(deps) {
			e.t.Fatalf("graph source read back with type %.20q... and %d dependencies, want %d", rec.SourceType, len(rec.Dependencies), len(deps))
		}
		e.wantValue("gs", nameservice.Config, config(1, cfg))
		e.wantPrintable(rec)
	}},
	{name: "OverALimitIsRefusedAndNothingWritten", run: func(e *env) {
		e.init("db")
		e.graphSource("gs", nil)
		before, beforeGS := e.lookup("db"), e.lookup("gs")
		long := strings.Repeat("a", guard.MaxAddressBytes+1)
		tooBig := config(1, paddedPayload(nameservice.Object{}, guard.MaxPayloadBytes+1))
		tooDeep := config(1, deepPayload(guard.MaxPayloadDepth+1, 0))
		for _, c := range []struct {
			what, limit string
			err         error
		}{
			{"commit address", "4096", second(e.ns.PublishCommit(e.ctx, e.id("db"), 1, long))},
			{"index address", "4096", second(e.ns.PublishIndex(e.ctx, e.id("db"), 1, long))},
			{"cas address", "4096", second(e.ns.CompareAndSetRef(e.ctx, e.id("db"), nameservice.Head, &unborn, nameservice.Ref{Address: long, T: 1}))},
			{"create by cas", "4096", second(e.ns.CompareAndSetRef(e.ctx, e.id("new"), nameservice.Head, nil, nameservice.Ref{Address: long, T: 1}))},
			{"config bytes", "65536", second(e.ns.PushConfig(e.ctx, e.id("db"), unborn, tooBig))},
			{"config depth", "20", second(e.ns.PushConfig(e.ctx, e.id("db"), unborn, tooDeep))},
			{"status bytes", "65536", second(e.ns.PushStatus(e.ctx, e.id("db"), status(1, "ready", nil),
				status(2, "ready", paddedPayload(nameservice.Object{"state": "ready"}, guard.MaxPayloadBytes+1))))},
			{"status bad UTF-8", "UTF-8", second(e.ns.PushStatus(e.ctx, e.id("db"), status(1, "ready", nil),
				status(2, "ready", nameservice.Object{"note": "a\xffb"})))},
			{"9999-deep config", "20", e.ns.PublishGraphSource(e.ctx, e.id("gs2"), "db:Bm25Index", nil, deepPayload(9999, 0))},
			{"graph source config", "65536", e.ns.PublishGraphSource(e.ctx, e.id("gs"), "db:Bm25Index", nil, tooBig.Payload)},
			{"source type", "256", e.ns.PublishGraphSource(e.ctx, e.id("gs3"), strings.Repeat("t", guard.MaxSourceTypeBytes+1), nil, nil)},
			{"dependencies", "64", e.ns.PublishGraphSource(e.ctx, e.id("gs4"), "db:Bm25Index", make([]string, guard.MaxDependencies+1), nil)},
			{"10 MB address", "4096", second(e.ns.PublishCommit(e.ctx, e.id("db"), 1, strings.Repeat("x", 10<<20)))},
		} {
			if !errors.Is(c.err, nameservice.ErrInvalidArgument) || !strings.Contains(c.err.Error(), c.limit) {
				e.t.Errorf("%s: error = %.300v; want ErrInvalidArgument naming the limit %s", c.what, c.err, c.limit)
			}
		}
		e.wantSame("db", before)
		e.wantSame("gs", beforeGS)
		for _, n := range []string{"new", "gs2", "gs3", "gs4"} {
			e.wantAbsent(n)
		}
	}},
	{name: "ImportOverALimitIsRefused", run: func(e *env) {
		rec := model.NewLedger(e.parseID("db"), 1)
		*rec.Config = config(1, paddedPayload(nameservice.Object{}, guard.MaxPayloadBytes+1))
		e.wantErr(e.ns.Import(e.ctx, rec), nameservice.ErrInvalidArgument)
		e.wantAbsent("db")
	}},
	{name: "GraphSourceTypeCannotChange", run: func(e *env) {
		e.graphSource("gs", nameservice.Object{"k": json.Number("1")})
		err := e.ns.PublishGraphSource(e.ctx, e.id("gs"), "db:VectorIndex", nil, nameservice.Object{"k": json.Number("2")})
		e.wantErr(err, nameservice.ErrAlreadyExists)
		if rec := fillToLimits(e, "gs"); rec.SourceType != "db:Bm25Index" {
			e.t.Fatalf("source type = %q after a refused re-publish, want db:Bm25Index", rec.SourceType)
		}
		e.wantValue("gs", nameservice.Config, config(1, nameservice.Object{"k": json.Number("1")}))
	}},
}}

func second[T any](_ T, err error) error { return err }

// paddedPayload returns base plus a key "s" holding a string padded so that
// the payload's compact JSON is exactly n bytes.
func paddedPayload(base nameservice.Object, n int) nameservice.Object {
	p := base.Clone()
	p["s"] = ""
	b, _ := json.Marshal(p)
	p["s"] = strings.Repeat("x", max(0, n-len(b)))
	return p
}

// deepPayload returns an object nested depth levels deep ({"a": {"a": ...}});
// when n > 0, its innermost object holds a string padding its compact JSON
// to exactly n bytes (each level around it adds 6: {"a":...}).
func deepPayload(depth, n int) nameservice.Object {
	v := map[string]any{}
	if n > 0 {
		v = paddedPayload(nameservice.Object{}, n-6*(depth-1))
	}
	for range depth - 1 {
		v = map[string]any{"a": v}
	}
	return v
}

// wantPrintable fails unless rec survives the record JSON form, compact and
// indented (as ns lookup prints it), unchanged.
func (e *env) wantPrintable(rec *nameservice.Record) {
	e.t.Helper()
	for _, indent := range []string{"", "  "} {
		b, err := json.MarshalIndent(rec, "", indent)
		if err != nil {
			e.t.Fatalf("record cannot be printed: %v", err)
		}
		var back nameservice.Record
		if err := json.Unmarshal(b, &back); err != nil {
			e.t.Fatalf("printed record does not read back: %v", err)
		}
		if again, _ := json.Marshal(&back); string(again) != string(mustJSON(e, rec)) {
			e.t.Fatalf("printed record reads back changed")
		}
	}
}

func mustJSON(e *env, rec *nameservice.Record) []byte {
	b, err := json.Marshal(rec)
	e.must(err)
	return b
}

// wantSame fails unless name's record is still want.
func (e *env) wantSame(name string, want *nameservice.Record) {
	e.t.Helper()
	if got := mustJSON(e, e.lookup(name)); string(got) != string(mustJSON(e, want)) {
		e.t.Fatalf("%s changed after refused writes:\n%s\nwant\n%s", name, got, mustJSON(e, want))
	}
}

// fillToLimits publishes name's index and status at their limits and
// returns the record, failing when its JSON is over MaxRecordBytes.
func fillToLimits(e *env, name string) *nameservice.Record {
	iaddr := strings.Repeat("i", guard.MaxAddressBytes)
	e.applied(ref(iaddr, 1))(e.ns.PublishIndex(e.ctx, e.id(name), 1, iaddr))
	st := status(2, "ready", paddedPayload(nameservice.Object{"state": "ready"}, guard.MaxPayloadBytes))
	e.applied(st)(e.ns.PushStatus(e.ctx, e.id(name), status(1, "ready", nil), st))
	rec := e.lookup(name)
	if b := mustJSON(e, rec); len(b) > guard.MaxRecordBytes {
		e.t.Fatalf("a record at every limit is %d bytes of JSON, over MaxRecordBytes %d", len(b), guard.MaxRecordBytes)
	}
	return rec
}
