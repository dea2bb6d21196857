package conformance

import (
	"errors"
	"fmt"
	"slices"

	"nameservice.dev/nameservice"
)

var groupCommitIndex = group{name: "CommitIndex", guarantee: "commit index: each content-ID head published is an entry, read back above a t, pruned up to a t and purged with its record; ErrUnsupported where there is none", cases: []testCase{
	{name: "PublishPendingPrunePurge", quick: true, run: commitIndexLifecycle},
}}

// pending returns the t of the entries of name above since (nil for none:
// Fluree's backends tell "no index" from "nothing above since"
// differently), and whether the driver keeps an index at all.
func (e *env) pending(name string, since int64) (ts []int64, supported bool) {
	e.t.Helper()
	entries, ok, err := e.ns.PendingCommitCIDs(e.ctx, e.id(name), since)
	if errors.Is(err, nameservice.ErrUnsupported) {
		return nil, false
	}
	e.must(err)
	for _, en := range entries {
		if !ok || en.CID != commitID(fmt.Sprint(name, en.T)) {
			e.t.Fatalf("pending above %d: entry %+v (ok %v), want content ID %s", since, en, ok, commitID(fmt.Sprint(name, en.T)))
		}
		ts = append(ts, en.T)
	}
	return ts, true
}

func (e *env) wantPending(name string, since int64, want ...int64) {
	e.t.Helper()
	if got, _ := e.pending(name, since); !slices.Equal(got, want) {
		e.t.Fatalf("pending commits of %s above t %d: %v, want %v", name, since, got, want)
	}
}

func commitIndexLifecycle(e *env) {
	e.init("db")
	if _, supported := e.pending("db", 0); !supported {
		e.wantErr(e.ns.PruneCommitIndex(e.ctx, e.id("db"), 1), nameservice.ErrUnsupported)
		return
	}
	e.wantPending("db", 0)
	for t := int64(1); t <= 5; t++ {
		addr := commitID(fmt.Sprint("db", t))
		if t == 4 {
			addr = "fluree:file://db/commit/4.json" // no content ID: no entry
		}
		e.applied(ref(addr, t))(e.ns.PublishCommit(e.ctx, e.id("db"), t, addr))
	}
	e.rejected(ref(commitID("db5"), 5))(e.ns.PublishCommit(e.ctx, e.id("db"), 3, commitID("db3")))
	e.wantPending("db", 0, 1, 2, 3, 5)
	e.wantPending("db", 2, 3, 5)
	e.must(e.ns.PruneCommitIndex(e.ctx, e.id("db"), 3))
	e.wantPending("db", 0, 5)
	e.must(e.ns.Purge(e.ctx, e.id("db")))
	e.init("db")
	e.wantPending("db", 0)
}
