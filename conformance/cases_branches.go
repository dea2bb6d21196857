package conformance

import (
	"errors"
	"fmt"
	"strings"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
)

// Sizes of the branch race: concurrent creates from one source while
// earlier branches of it are dropped, each by an independent client.
const (
	branchCreates = 16
	branchDrops   = 8
)

var groupBranches = optional(has[driver.Brancher], func(e *env) error { return e.ns.DropBranch(e.ctx, e.id("db")) }, group{name: "Branches", guarantee: "branches: a create or drop and its source's branch count are one step, exact under concurrency; reset-head moves a head back", alone: true, cases: []testCase{
	{name: "CreateFromHead", quick: true, run: func(e *env) {
		e.initAt("db", 3)
		e.applied(ref("i2", 2))(e.ns.PublishIndex(e.ctx, e.id("db"), 2, "i2"))
		got, err := e.ns.CreateBranch(e.ctx, e.id("db:dev"), nameservice.BranchOptions{})
		e.must(err)
		if r := e.lookup("db:dev"); js(got) != js(r) {
			e.t.Fatalf("CreateBranch returned %s, lookup %s", js(got), js(r))
		}
		e.wantBranch("db:dev", "main", nil, 0)
		for c, want := range map[nameservice.Concern]nameservice.Value{
			nameservice.Head: ref("c3", 3), nameservice.Index: unborn, nameservice.Status: ready, nameservice.Config: unborn,
		} {
			e.wantValue("db:dev", c, want)
		}
		e.wantBranches("db", 1)
	}},
	{name: "CreateAtCommit", quick: true, run: func(e *env) {
		e.initAt("db", 5)
		at := &nameservice.Ref{Address: "c2", T: 2}
		e.must(second(e.ns.CreateBranch(e.ctx, e.id("db:old"), nameservice.BranchOptions{At: at})))
		e.wantValue("db:old", nameservice.Head, ref("c2", 2))
		e.wantBranch("db:old", "main", &nameservice.BranchPoint{Address: "c2", T: 2}, 0)
		_, err := e.ns.CreateBranch(e.ctx, e.id("db:future"), nameservice.BranchOptions{At: &nameservice.Ref{Address: "c9", T: 9}})
		e.wantErr(err, nameservice.ErrInvalidArgument)
		e.wantAbsent("db:future")
		e.wantBranches("db", 1)
	}},
	{name: "CreateFromAnotherBranch", run: func(e *env) {
		e.initAt("db", 1)
		e.createBranch("db:dev", "")
		e.applied(ref("d2", 2))(e.ns.PublishCommit(e.ctx, e.id("db:dev"), 2, "d2"))
		e.createBranch("db:feature/x", "dev")
		e.wantValue("db:feature/x", nameservice.Head, ref("d2", 2))
		e.wantBranch("db:feature/x", "dev", nil, 0)
		e.wantBranches("db", 1)
		e.wantBranches("db:dev", 1)
	}},
	{name: "CreateNeedsALiveLedgerSource", quick: true, run: func(e *env) {
		e.init("unborn", "gone")
		e.publish("gone", 1)
		e.must(e.ns.Retract(e.ctx, e.id("gone")))
		e.graphSource("gs", nil)
		for _, c := range []struct {
			id, from string
			want     error
		}{
			{"missing:dev", "", nameservice.ErrNotFound},
			{"unborn:dev", "", nameservice.ErrNotFound},
			{"gone:dev", "", nameservice.ErrNotFound},
			{"unborn:dev", "nosuch", nameservice.ErrNotFound},
			{"gs:dev", "", nameservice.ErrWrongKind},
		} {
			_, err := e.ns.CreateBranch(e.ctx, e.id(c.id), nameservice.BranchOptions{From: c.from})
			if !errors.Is(err, c.want) {
				e.t.Fatalf("create %s from %q: error = %v, want %v", c.id, c.from, err, c.want)
			}
			e.wantAbsent(c.id)
		}
		e.wantBranches("unborn", 0)
		e.wantBranches("gone", 0)
	}},
	{name: "CreateOverExistingIsAlreadyExists", run: func(e *env) {
		e.init("db", "db:taken", "db:was")
		e.publish("db", 1)
		e.must(e.ns.Retract(e.ctx, e.id("db:was")))
		for _, id := range []string{"db:taken", "db:was"} {
			e.wantErr(second(e.ns.CreateBranch(e.ctx, e.id(id), nameservice.BranchOptions{})), nameservice.ErrAlreadyExists)
		}
		e.wantValue("db:taken", nameservice.Head, unborn)
		e.wantBranches("db", 0)
		e.wantBranches("db:taken", 0)
	}},
	{name: "CreateRefusesFlureeInvalidNames", run: func(e *env) {
		e.initAt("db", 1)
		for _, b := range []string{"v1@t:3", strings.Repeat("b", 129), "a/../b", "x:y"} {
			_, err := e.ns.CreateBranch(e.ctx, e.id("db")+":"+b, nameservice.BranchOptions{})
			e.wantErr(err, nameservice.ErrInvalidID)
		}
		e.wantBranches("db", 0)
	}},
	{name: "RacingCreatesOfOneNameHaveOneWinner", run: func(e *env) {
		e.initAt("db", 1)
		n := raceWins(e, raceClients, nameservice.ErrAlreadyExists, func(c *nameservice.NameService) error {
			return second(c.CreateBranch(e.ctx, e.id("db:dev"), nameservice.BranchOptions{}))
		})
		if n != 1 {
			e.t.Fatalf("%d of %d racing creates of one branch succeeded, want 1", n, raceClients)
		}
		e.wantBranches("db", 1)
	}},
	{name: "DropRefusedWithBranches", quick: true, run: func(e *env) {
		e.initAt("db", 1)
		e.createBranch("db:dev", "")
		e.createBranch("db:feature", "dev")
		for _, c := range []struct {
			id string
			n  int
		}{{"db", 1}, {"db:dev", 1}} {
			err := e.ns.DropBranch(e.ctx, e.id(c.id))
			e.wantErr(err, nameservice.ErrHasBranches)
			if !strings.Contains(err.Error(), fmt.Sprintf("has %d branch", c.n)) {
				e.t.Fatalf("drop %s: error %q does not name the count %d", c.id, err, c.n)
			}
		}
		e.wantBranches("db", 1)
		e.wantBranches("db:dev", 1)
		e.wantBranch("db:feature", "dev", nil, 0)
	}},
	{name: "DropLeafDecrements", quick: true, run: func(e *env) {
		e.initAt("db", 1)
		e.createBranch("db:a", "")
		e.createBranch("db:b", "")
		e.wantBranches("db", 2)
		e.must(e.ns.DropBranch(e.ctx, e.id("db:a")))
		e.wantAbsent("db:a")
		e.wantBranches("db", 1)
		e.wantErr(e.ns.DropBranch(e.ctx, e.id("db:a")), nameservice.ErrNotFound)
		e.wantBranches("db", 1)
		e.must(e.ns.Retract(e.ctx, e.id("db:b"))) // a retracted branch still counts, and drops
		e.wantBranches("db", 1)
		e.must(e.ns.DropBranch(e.ctx, e.id("db:b")))
		e.wantBranches("db", 0)
		e.must(e.ns.DropBranch(e.ctx, e.id("db"))) // main, without branches
		e.wantAbsent("db")
		e.createBranchErr("db:c", "", nameservice.ErrNotFound)
	}},
	{name: "DropOfGraphSourceIsWrongKind", run: func(e *env) {
		e.graphSource("gs", nil)
		e.wantErr(e.ns.DropBranch(e.ctx, e.id("gs")), nameservice.ErrWrongKind)
		e.lookup("gs")
	}},
	{name: "ConcurrentCreatesAndDropsLeaveExactCount", quick: true, run: func(e *env) {
		e.initAt("db", 1)
		for i := range branchDrops {
			e.createBranch(fmt.Sprintf("db:old%d", i), "")
		}
		runParallel(e, branchCreates+branchDrops, func(i int, c *nameservice.NameService) {
			var err error
			if i < branchCreates {
				_, err = c.CreateBranch(e.ctx, e.id(fmt.Sprintf("db:new%d", i)), nameservice.BranchOptions{})
			} else {
				err = c.DropBranch(e.ctx, e.id(fmt.Sprintf("db:old%d", i-branchCreates)))
			}
			if err != nil {
				e.t.Errorf("client %d: %v", i, err)
			}
		})
		e.wantBranches("db", branchCreates)
		runParallel(e, branchDrops, func(i int, c *nameservice.NameService) {
			if err := c.DropBranch(e.ctx, e.id(fmt.Sprintf("db:new%d", i))); err != nil {
				e.t.Errorf("client %d: %v", i, err)
			}
		})
		e.wantBranches("db", branchCreates-branchDrops)
		var n int
		for r, err := range e.ns.ListBranches(e.ctx, e.id("db")) {
			e.must(err)
			if r.SourceBranch == "main" {
				n++
			}
		}
		if n != branchCreates-branchDrops {
			e.t.Fatalf("%d branches of main listed, want %d", n, branchCreates-branchDrops)
		}
	}},
	{name: "ListBranches", run: func(e *env) {
		e.init("db", "dbx")
		e.publish("db", 1)
		e.createBranch("db:dev", "")
		e.createBranch("db:dev/x", "dev")
		var got []string
		for r, err := range e.ns.ListBranches(e.ctx, e.id("db")) {
			e.must(err)
			got = append(got, fmt.Sprintf("%s<%s:%d:%d", r.ID.Branch, r.SourceBranch, r.Head.V, r.Branches))
		}
		want := []string{"dev<main:1:1", "dev/x<dev:1:0", "main<:1:1"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			e.t.Fatalf("branches = %q, want %q", got, want)
		}
		for _, err := range e.ns.ListBranches(e.ctx, e.id("db:dev")) {
			e.wantErr(err, nameservice.ErrInvalidArgument)
		}
	}},
	{name: "ResetHeadMovesBack", quick: true, run: func(e *env) {
		e.init("db")
		for t := int64(1); t <= 5; t++ {
			e.publish("db", t)
		}
		e.applied(ref("i4", 4))(e.ns.PublishIndex(e.ctx, e.id("db"), 4, "i4"))
		prev, err := e.ns.ResetHead(e.ctx, e.id("db"), nameservice.Ref{Address: "c2", T: 2}, nameservice.ResetOptions{Index: &nameservice.Ref{Address: "i1", T: 1}})
		e.must(err)
		if !prev.Head.Equal(ref("c5", 5)) || !prev.Index.Equal(ref("i4", 4)) {
			e.t.Fatalf("reset returned head %v index %v, want the values it replaced (c5@5, i4@4)", *prev.Head, *prev.Index)
		}
		e.wantValue("db", nameservice.Head, ref("c2", 2))
		e.wantValue("db", nameservice.Index, ref("i1", 1))
		// Monotonic publishing goes on from the reset head.
		e.applied(ref("c3b", 3))(e.ns.PublishCommit(e.ctx, e.id("db"), 3, "c3b"))
		e.applied(ref("i2", 2))(e.ns.PublishIndex(e.ctx, e.id("db"), 2, "i2"))
		// Without index options the index stays; ClearIndex makes it unborn.
		c1 := nameservice.Ref{Address: "c1", T: 1}
		e.must(second(e.ns.ResetHead(e.ctx, e.id("db"), c1, nameservice.ResetOptions{})))
		e.wantValue("db", nameservice.Head, ref("c1", 1))
		e.wantValue("db", nameservice.Index, ref("i2", 2))
		e.must(second(e.ns.ResetHead(e.ctx, e.id("db"), c1, nameservice.ResetOptions{ClearIndex: true})))
		e.wantValue("db", nameservice.Index, unborn)
		e.wantValue("db", nameservice.Status, ready)
	}},
	{name: "ResetHeadErrors", run: func(e *env) {
		e.graphSource("gs", nil)
		c1, opts := nameservice.Ref{Address: "c1", T: 1}, nameservice.ResetOptions{}
		e.wantErr(second(e.ns.ResetHead(e.ctx, e.id("gs"), c1, opts)), nameservice.ErrWrongKind)
		e.wantErr(second(e.ns.ResetHead(e.ctx, e.id("missing"), c1, opts)), nameservice.ErrNotFound)
		e.wantAbsent("missing")
		e.init("db")
		e.wantErr(second(e.ns.ResetHead(e.ctx, e.id("db"), nameservice.Ref{Address: "", T: 1}, opts)), nameservice.ErrInvalidArgument)
		e.wantValue("db", nameservice.Head, unborn)
	}},
}})

// createBranch creates branch id from source from ("" for main).
func (e *env) createBranch(id, from string) {
	e.t.Helper()
	e.must(second(e.ns.CreateBranch(e.ctx, e.id(id), nameservice.BranchOptions{From: from})))
}

// createBranchErr checks that creating branch id fails with want.
func (e *env) createBranchErr(id, from string, want error) {
	e.t.Helper()
	e.wantErr(second(e.ns.CreateBranch(e.ctx, e.id(id), nameservice.BranchOptions{From: from})), want)
	e.wantAbsent(id)
}

// wantBranches fails unless name's branch count is n.
func (e *env) wantBranches(name string, n int64) {
	e.t.Helper()
	if got := e.lookup(name).Branches; got != n {
		e.t.Fatalf("%s has branches = %d, want %d", name, got, n)
	}
}

// wantBranch fails unless name is a live branch of source at bp with n branches.
func (e *env) wantBranch(name, source string, bp *nameservice.BranchPoint, n int64) {
	e.t.Helper()
	r := e.lookup(name)
	if r.SourceBranch != source || r.Branches != n || fmt.Sprint(r.BranchPoint) != fmt.Sprint(bp) || r.Kind != nameservice.Ledger || r.Retracted {
		e.t.Fatalf("%s = %s, want a live ledger branch of %s at %v with %d branches", name, js(r), source, bp, n)
	}
}
