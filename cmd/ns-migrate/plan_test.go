package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"nameservice.dev/nameservice"
)

const createdAt = 1700000000

func mustID(t testing.TB, s string) nameservice.ID {
	t.Helper()
	id, err := nameservice.ParseID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func ptr(v nameservice.Value) *nameservice.Value { return &v }

func newLedger(t testing.TB, id string) *nameservice.Record {
	return &nameservice.Record{
		ID:   mustID(t, id),
		Meta: nameservice.Meta{Kind: nameservice.Ledger, CreatedAt: createdAt},
		Head: ptr(nameservice.Value{}), Index: ptr(nameservice.Value{}),
		Status: ptr(status(1, "ready")), Config: ptr(nameservice.Value{}),
	}
}

func newGraphSource(t testing.TB, id string) *nameservice.Record {
	return &nameservice.Record{
		ID: mustID(t, id),
		Meta: nameservice.Meta{Kind: nameservice.GraphSource, CreatedAt: createdAt,
			SourceType: "db:Bm25Index", Dependencies: []string{"books:main"}},
		Index: ptr(nameservice.Value{}), Status: ptr(status(1, "ready")),
		Config: ptr(config(1, "a")),
	}
}

func ref(t int64, tag string) nameservice.Value {
	return nameservice.RefValue("fluree:file://commits/"+tag, t)
}

func status(v int64, state string) nameservice.Value {
	return nameservice.StatusValue(v, state, nil)
}

func config(v int64, tag string) nameservice.Value {
	return nameservice.Value{V: v, Payload: nameservice.Object{"tag": tag}}
}

func retracted(v int64, at int64) nameservice.Value {
	return nameservice.StatusValue(v, "retracted", nameservice.Object{"retracted_at": json.Number(strconv.FormatInt(at, 10))})
}

type edit func(r *nameservice.Record)

func set(c nameservice.Concern, v nameservice.Value) edit {
	return func(r *nameservice.Record) { r.SetValue(c, v) }
}

func planCases() []struct {
	name     string
	gs       bool
	src, dst []edit
	absent   bool
	want     action
} {
	type tc = struct {
		name     string
		gs       bool
		src, dst []edit
		absent   bool
		want     action
	}
	cases := []tc{
		{name: "ledger/create", absent: true, src: []edit{set(nameservice.Head, ref(3, "c3"))}, want: actCreate},
		{name: "graph_source/create", gs: true, absent: true, want: actCreate},
		{name: "ledger/skip", src: []edit{set(nameservice.Head, ref(3, "c3"))}, dst: []edit{set(nameservice.Head, ref(3, "c3"))}, want: actSkip},
		{name: "graph_source/skip", gs: true, want: actSkip},
		{name: "ledger/kinds differ", gs: false, dst: []edit{func(r *nameservice.Record) {
			r.Kind, r.Head, r.SourceType, r.Dependencies = nameservice.GraphSource, nil, "db:Bm25Index", []string{"x:main"}
		}}, want: actConflict},
		{name: "ledger/created_at differs", dst: []edit{func(r *nameservice.Record) { r.CreatedAt++ }}, want: actConflict},
		{name: "graph_source/dependencies differ", gs: true, dst: []edit{func(r *nameservice.Record) { r.Dependencies = []string{"other:main"} }}, want: actConflict},
		{name: "ledger/retract", src: []edit{retract(2, 1700000100)}, want: actAdvance},
		{name: "ledger/retract then status", src: []edit{retract(2, 1700000100), set(nameservice.Status, status(4, "archived"))}, want: actAdvance},
		{name: "graph_source/retract", gs: true, src: []edit{retract(2, 1700000100)}, want: actAdvance},
		{name: "ledger/retract with other payload", src: []edit{func(r *nameservice.Record) {
			r.Retracted = true
			r.Status = ptr(nameservice.StatusValue(2, "retracted", nameservice.Object{"by": "admin"}))
		}}, want: actConflict},
		{name: "ledger/target retracted only", dst: []edit{retract(2, 1700000100)}, want: actConflict},
		{name: "ledger/both retracted", src: []edit{retract(2, 1700000100)}, dst: []edit{retract(2, 1700000100)}, want: actSkip},
		{name: "ledger/advance all", src: []edit{set(nameservice.Head, ref(9, "c9")), set(nameservice.Index, ref(5, "i5")),
			set(nameservice.Status, status(3, "busy")), set(nameservice.Config, config(2, "b"))},
			dst: []edit{set(nameservice.Head, ref(4, "c4"))}, want: actAdvance},
	}
	concerns := []struct {
		c                    nameservice.Concern
		low, high, highOther nameservice.Value
	}{
		{nameservice.Head, ref(3, "c3"), ref(7, "c7"), ref(7, "other7")},
		{nameservice.Index, ref(3, "i3"), ref(7, "i7"), ref(7, "other7")},
		{nameservice.Status, status(2, "ready"), status(5, "busy"), status(5, "other")},
		{nameservice.Config, config(2, "a"), config(5, "b"), config(5, "other")},
	}
	for _, kind := range []string{"ledger", "graph_source"} {
		gs := kind == "graph_source"
		for _, c := range concerns {
			if gs && c.c == nameservice.Head {
				continue
			}
			p := kind + "/" + c.c.String()
			cases = append(cases,
				tc{name: p + "/advance", gs: gs, src: []edit{set(c.c, c.high)}, dst: []edit{set(c.c, c.low)}, want: actAdvance},
				tc{name: p + "/target ahead", gs: gs, src: []edit{set(c.c, c.low)}, dst: []edit{set(c.c, c.high)}, want: actConflict},
				tc{name: p + "/diverged", gs: gs, src: []edit{set(c.c, c.highOther)}, dst: []edit{set(c.c, c.high)}, want: actConflict},
				tc{name: p + "/skip", gs: gs, src: []edit{set(c.c, c.high)}, dst: []edit{set(c.c, c.high)}, want: actSkip},
			)
		}
	}
	return cases
}

func retract(v, at int64) edit {
	return func(r *nameservice.Record) {
		r.Retracted = true
		r.Status = ptr(retracted(v, at))
	}
}

// TestPlanner runs each case through copyRecord between two mem:// stores:
// a record created or advanced ends identical to the source, and a record
// in conflict (or skipped) is left exactly as it was.
func TestPlanner(t *testing.T) {
	ctx := context.Background()
	for _, tc := range planCases() {
		t.Run(tc.name, func(t *testing.T) {
			build := newLedger
			if tc.gs {
				build = newGraphSource
			}
			src := build(t, "db/x:main")
			for _, e := range tc.src {
				e(src)
			}
			dstNS := open(t, memURL(t, "dst"))
			if !tc.absent {
				dst := build(t, "db/x:main")
				for _, e := range tc.dst {
					e(dst)
				}
				must(t, dstNS.Import(ctx, dst))
			}
			before := lookupJSON(t, dstNS, "db/x:main")
			c := &copier{dst: dstNS}

			dry, err := c.copyRecord(ctx, src, true)
			if dry != tc.want {
				t.Fatalf("dry run: action %s (%v), want %s", dry, err, tc.want)
			}
			if got := lookupJSON(t, dstNS, "db/x:main"); got != before {
				t.Fatalf("dry run wrote: %s", got)
			}

			got, err := c.copyRecord(ctx, src, false)
			if got != tc.want {
				t.Fatalf("action %s (%v), want %s", got, err, tc.want)
			}
			after := lookupJSON(t, dstNS, "db/x:main")
			switch tc.want {
			case actConflict:
				if err == nil || after != before {
					t.Fatalf("conflict: err %v; target changed from\n%s\nto\n%s", err, before, after)
				}
			default:
				if err != nil || after != recordJSON(t, src) {
					t.Fatalf("err %v; target\n%s\nwant the source\n%s", err, after, recordJSON(t, src))
				}
				if again, _ := c.copyRecord(ctx, src, false); again != actSkip {
					t.Fatalf("second copy: %s, want skip", again)
				}
			}
		})
	}
}

func TestConflictReasonNamesConcern(t *testing.T) {
	src, dst := newLedger(t, "a"), newLedger(t, "a")
	src.Head, dst.Head = ptr(ref(3, "c3")), ptr(ref(8, "c8"))
	p := planRecord(src, dst)
	if p.action != actConflict || !strings.Contains(p.reason, "head") || !strings.Contains(p.reason, "commit_t 8") {
		t.Fatalf("plan %+v: want a conflict naming head and commit_t 8", p)
	}
}

// TestMetaDiffNamesBranchFields: the branch bookkeeping is compared like
// the rest of the identity.
func TestMetaDiffNamesBranchFields(t *testing.T) {
	src, dst := newLedger(t, "db:dev"), newLedger(t, "db:dev")
	src.SourceBranch, dst.SourceBranch = "main", "main"
	if d := metaDiff(src, dst); d != "" {
		t.Fatalf("equal records differ: %s", d)
	}
	src.BranchPoint = &nameservice.BranchPoint{Address: "c2", T: 2}
	if d := metaDiff(src, dst); !strings.HasPrefix(d, "branch_point differs") {
		t.Fatalf("a branch point missing from the target: %q", d)
	}
	dst.BranchPoint = &nameservice.BranchPoint{Address: "c2", T: 2}
	dst.Branches = 1
	if d := metaDiff(src, dst); !strings.HasPrefix(d, "branches differs") {
		t.Fatalf("counts that differ: %q", d)
	}
}
